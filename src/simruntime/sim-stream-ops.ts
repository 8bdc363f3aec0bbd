/**
 * CRI Exec, Attach and PortForward of the simulated runtime: validate as the kubelet's streaming
 * server and containerd do, then store the request with the streaming server and answer its
 * URL (sim-stream-server.ts). Messages and codes:
 *   - missing container/sandbox id: INVALID_ARGUMENT "missing required container_id" /
 *     "missing required pod_sandbox_id";
 *   - tty with stderr: INVALID_ARGUMENT "tty and stderr cannot both be true";
 *   - none of stdin/stdout/stderr: INVALID_ARGUMENT "one of stdin, stdout, or stderr must be set";
 *   - unknown container: NOT_FOUND; not running: UNKNOWN "container is in X state";
 *   - unknown sandbox: NOT_FOUND; not ready: UNKNOWN "sandbox container is not running";
 *   - 1000 URLs waiting unused: RESOURCE_EXHAUSTED.
 */
import { CriError } from '../shared/cri/cri-errors.js';
import type { SimRuntimeCore } from './sim-runtime.js';
import type { SimStreamServer } from './sim-stream-server.js';

type Req = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const bool = (v: unknown): boolean => v === true;

function server(streaming: () => Pick<SimStreamServer, 'prepare'> | undefined, method: string): Pick<SimStreamServer, 'prepare'> {
  const s = streaming();
  if (s === undefined) throw new CriError('ERR_CRI_UNAVAILABLE', method, 'streaming server is not running');
  return s;
}

function flags(r: Req, method: string): { tty: boolean; stdin: boolean; stdout: boolean; stderr: boolean } {
  const f = { tty: bool(r['tty']), stdin: bool(r['stdin']), stdout: bool(r['stdout']), stderr: bool(r['stderr']) };
  if (f.tty && f.stderr) throw new CriError('ERR_CRI_INVALID_ARGUMENT', method, 'tty and stderr cannot both be true');
  if (!f.stdin && !f.stdout && !f.stderr) throw new CriError('ERR_CRI_INVALID_ARGUMENT', method, 'one of stdin, stdout, or stderr must be set');
  return f;
}

function runningContainer(core: SimRuntimeCore, id: string, method: string): void {
  if (id === '') throw new CriError('ERR_CRI_INVALID_ARGUMENT', method, 'missing required container_id');
  const found = core.store.findContainer(id);
  if (!found.ok) throw new CriError('ERR_CRI_NOT_FOUND', method, `failed to find container "${id}" in store: not found`);
  if (found.value.state !== 'CONTAINER_RUNNING') throw new CriError('ERR_CRI_UNKNOWN', method, `container is in ${found.value.state} state`);
}

export function streamingOps(core: SimRuntimeCore, streaming: () => Pick<SimStreamServer, 'prepare'> | undefined): Record<string, (r: Req) => unknown> {
  return {
    Exec: (r) => {
      const containerId = str(r['containerId']);
      const f = flags(r, 'Exec');
      runningContainer(core, containerId, 'Exec');
      const cmd = Array.isArray(r['cmd']) ? (r['cmd'] as unknown[]).map(String) : [];
      return { url: server(streaming, 'Exec').prepare({ kind: 'exec', containerId: fullId(core, containerId), cmd, ...f }, 'Exec') };
    },
    Attach: (r) => {
      const containerId = str(r['containerId']);
      const f = flags(r, 'Attach');
      runningContainer(core, containerId, 'Attach');
      return { url: server(streaming, 'Attach').prepare({ kind: 'attach', containerId: fullId(core, containerId), ...f }, 'Attach') };
    },
    PortForward: (r) => {
      const sandboxId = str(r['podSandboxId']);
      if (sandboxId === '') throw new CriError('ERR_CRI_INVALID_ARGUMENT', 'PortForward', 'missing required pod_sandbox_id');
      const found = core.store.findSandbox(sandboxId);
      if (!found.ok) throw new CriError('ERR_CRI_NOT_FOUND', 'PortForward', `failed to find sandbox "${sandboxId}" in store: not found`);
      if (found.value.state !== 'SANDBOX_READY') throw new CriError('ERR_CRI_UNKNOWN', 'PortForward', 'sandbox container is not running');
      const ports = Array.isArray(r['port']) ? (r['port'] as unknown[]).map(Number) : [];
      return { url: server(streaming, 'PortForward').prepare({ kind: 'portforward', sandboxId: found.value.id, ports }, 'PortForward') };
    },
  };
}

/** The container's full id (the request may name it by a unique prefix). */
function fullId(core: SimRuntimeCore, id: string): string {
  const found = core.store.findContainer(id);
  return found.ok ? found.value.id : id;
}
