/**
 * The kubelet's streaming endpoints on the secure port, up to the runtime's URL
 * (pkg/kubelet/server/server.go getExec / getAttach / getPortForward / getRun, and the
 * kubelet's GetExec / GetAttach / GetPortForward):
 *
 *   /exec/{ns}/{pod}[/{uid}]/{container}     GET, POST   ?command=…&input=1&output=1&error=1&tty=1
 *                                                        (the kubelet API's names for stdin, stdout,
 *                                                        stderr: k8s.io/api/core/v1 ExecStdinParam…)
 *   /attach/{ns}/{pod}[/{uid}]/{container}   GET, POST
 *   /portForward/{ns}/{pod}[/{uid}]          GET, POST   (?port=… for WebSocket clients)
 *   /run/{ns}/{pod}[/{uid}]/{container}      POST        ?cmd=… (split on spaces; ExecSync)
 *
 * Checks in the kubelet's order, each with its status and message:
 *   1. stream options (remotecommand NewOptions): none of stdin/stdout/stderr → 400 "you must
 *      specify at least 1 of stdin, stdout, stderr"; tty turns stderr off. Port-forward over
 *      WebSocket: the `port` query (400 "query parameter "port" is required", "unable to parse
 *      …", "port "0" must be > 0");
 *   2. the pod (desired pods by namespace/name) → 404 "pod does not exist";
 *   3. the running container (by pod UID label and container name; a `uid` segment must match)
 *      → 500 `container not found ("NAME")`; port-forward: a ready sandbox → 500
 *      `pod not found ("NAME_NAMESPACE")`;
 *   4. the CRI call: NOT_FOUND → 404, RESOURCE_EXHAUSTED → 429, anything else → 500, the
 *      runtime's message as the body (the kubelet's streaming.WriteError).
 * A request that is not an upgrade then gets 500 "Upgrade request required" (the
 * UpgradeAwareHandler with upgradeRequired) — answered before the CRI call, so it costs the
 * runtime nothing.
 *
 * Hostile input: at most MAX_QUERY_PARAMS query parameters and MAX_COMMAND_BYTES of command
 * (400 naming the limit); path segments are only compared with names, never used as paths.
 */
import type http from 'node:http';
import type { V1Pod } from '@kubernetes/client-node';
import { CriError } from '../../shared/cri/cri-errors.js';
import type { RuntimeService, StreamingService } from '../../shared/cri/runtime-service.js';
import { KubernetesContainerNameLabel, KubernetesPodUIDLabel } from '../../shared/kubetypes/kubelet-labels.js';
import type { PodByNameSource } from './secure-sources.js';

export type StreamKind = 'exec' | 'attach' | 'portForward' | 'run';

export const MAX_QUERY_PARAMS = 1024;
export const MAX_COMMAND_BYTES = 64 * 1024;

export interface StreamRuntime extends StreamingService, Pick<RuntimeService, 'listContainers' | 'listPodSandbox' | 'execSync'> {}

export interface StreamRequestDeps {
  podsByName: PodByNameSource;
  runtime: StreamRuntime;
}

export type StreamOutcome =
  | { readonly kind: 'refused'; readonly status: number; readonly body: string; readonly headers?: ReadonlyArray<readonly [string, string]> }
  | { readonly kind: 'proxy'; readonly url: string }
  /** /run's answer: the command's stdout then stderr. */
  | { readonly kind: 'output'; readonly body: Buffer };

interface Target {
  kind: StreamKind;
  namespace: string;
  pod: string;
  uid: string | undefined;
  container: string | undefined;
}

const refuse = (status: number, body: string, headers?: ReadonlyArray<readonly [string, string]>): StreamOutcome => (headers === undefined ? { kind: 'refused', status, body } : { kind: 'refused', status, body, headers });

/** The streaming kind of `path`, or undefined when it is not one of the four. */
export function streamKindOf(path: string): StreamKind | undefined {
  for (const k of ['exec', 'attach', 'portForward', 'run'] as const) if (path === `/${k}` || path.startsWith(`/${k}/`)) return k;
  return undefined;
}

function parseTarget(kind: StreamKind, path: string): Target | undefined {
  const parts = path.slice(kind.length + 2).split('/');
  const dec: string[] = [];
  for (const p of parts) {
    try {
      dec.push(decodeURIComponent(p));
    } catch {
      return undefined;
    }
  }
  if (dec.some((s) => s === '')) return undefined;
  if (kind === 'portForward') {
    if (dec.length === 2) return { kind, namespace: dec[0]!, pod: dec[1]!, uid: undefined, container: undefined };
    if (dec.length === 3) return { kind, namespace: dec[0]!, pod: dec[1]!, uid: dec[2]!, container: undefined };
    return undefined;
  }
  if (dec.length === 3) return { kind, namespace: dec[0]!, pod: dec[1]!, uid: undefined, container: dec[2]! };
  if (dec.length === 4) return { kind, namespace: dec[0]!, pod: dec[1]!, uid: dec[2]!, container: dec[3]! };
  return undefined;
}

/** Go's req.FormValue(x) == "1". */
const flag = (q: URLSearchParams, name: string): boolean => q.get(name) === '1';

export function isWebSocketRequest(req: http.IncomingMessage): boolean {
  return (req.headers.connection ?? '').toLowerCase().includes('upgrade') && (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/** portforward.NewV4Options for a WebSocket request; a string is the 400 message. */
export function parseForwardPorts(q: URLSearchParams): number[] | string {
  const values = q.getAll('port');
  if (values.length === 0) return 'query parameter "port" is required';
  const ports: number[] = [];
  for (const v of values) {
    if (v === '') return 'query parameter "port" cannot be empty';
    for (const p of v.split(',')) {
      if (!/^\d+$/.test(p)) return `unable to parse "${v}" as a port: strconv.ParseUint: parsing "${p}": invalid syntax`;
      if (p.length > 5 || Number(p) > 65535) return `unable to parse "${v}" as a port: strconv.ParseUint: parsing "${p}": value out of range`;
      if (Number(p) < 1) return `port "${v}" must be > 0`;
      ports.push(Number(p));
    }
  }
  return ports;
}

/** What to do with a streaming request (`upgrade`: the client asked to upgrade). */
export async function resolveStreamRequest(d: StreamRequestDeps, req: http.IncomingMessage, upgrade: boolean): Promise<StreamOutcome> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const kind = streamKindOf(url.pathname);
  const target = kind === undefined ? undefined : parseTarget(kind, url.pathname);
  if (kind === undefined || target === undefined) return refuse(404, '404 page not found\n');
  const method = req.method ?? 'GET';
  if (kind === 'run' ? method !== 'POST' : method !== 'GET' && method !== 'POST') {
    return refuse(405, 'method not allowed\n', [['Allow', kind === 'run' ? 'POST' : 'GET, POST']]);
  }
  let params = 0;
  for (const _ of url.searchParams) if (++params > MAX_QUERY_PARAMS) return refuse(400, `too many query parameters (more than ${MAX_QUERY_PARAMS})\n`);
  const q = url.searchParams;

  // 1. Options.
  let opts = { stdin: false, stdout: false, stderr: false, tty: false };
  let cmd: string[] = [];
  let ports: number[] = [];
  if (kind === 'exec' || kind === 'attach') {
    opts = { stdin: flag(q, 'input'), stdout: flag(q, 'output'), stderr: flag(q, 'error'), tty: flag(q, 'tty') };
    if (opts.tty && opts.stderr) opts.stderr = false; // "Stderr is not supported when tty is true."
    if (!opts.stdin && !opts.stdout && !opts.stderr) return refuse(400, 'you must specify at least 1 of stdin, stdout, stderr');
    if (kind === 'exec') cmd = q.getAll('command');
  } else if (kind === 'run') {
    cmd = (q.get('cmd') ?? '').split(' ');
  } else if (isWebSocketRequest(req)) {
    const p = parseForwardPorts(q);
    if (typeof p === 'string') return refuse(400, p);
    ports = p;
  }
  let cmdBytes = 0;
  for (const c of cmd) cmdBytes += Buffer.byteLength(c) + 1;
  if (cmdBytes > MAX_COMMAND_BYTES) return refuse(400, `command is ${cmdBytes} bytes, more than the limit of ${MAX_COMMAND_BYTES}\n`);

  // 2. The pod.
  const pod = d.podsByName.byName(target.namespace, target.pod);
  if (pod === undefined) return refuse(404, 'pod does not exist');
  const uid = pod.metadata?.uid ?? '';

  // 3. The running container / ready sandbox.
  if (kind === 'portForward') {
    if (target.uid !== undefined && target.uid !== uid) return refuse(404, 'pod not found');
    const sandboxes = await d.runtime.listPodSandbox({ state: { state: 'SANDBOX_READY' }, labelSelector: { [KubernetesPodUIDLabel]: uid } });
    const sandbox = newest(sandboxes.map((s) => ({ id: s.id, createdAt: s.createdAt })));
    if (sandbox === undefined) return refuse(500, `pod not found ("${fullName(pod)}")`);
    if (!upgrade) return refuse(500, 'Upgrade request required\n');
    return cri(() => d.runtime.portForward({ podSandboxId: sandbox, port: ports }));
  }
  const containerName = target.container!;
  const running = target.uid !== undefined && target.uid !== uid ? [] : await d.runtime.listContainers({ state: { state: 'CONTAINER_RUNNING' }, labelSelector: { [KubernetesPodUIDLabel]: uid, [KubernetesContainerNameLabel]: containerName } });
  const containerId = newest(running.map((c) => ({ id: c.id, createdAt: c.createdAt })));
  if (containerId === undefined) return refuse(500, `container not found ("${containerName}")`);

  if (kind === 'run') {
    try {
      const r = await d.runtime.execSync({ containerId, cmd, timeout: 0 });
      if (r.exitCode !== 0) return refuse(500, `command '${cmd.join(' ')}' exited with ${r.exitCode}: ${Buffer.from(r.stderr).toString()}`);
      return { kind: 'output', body: Buffer.concat([Buffer.from(r.stdout), Buffer.from(r.stderr)]) };
    } catch (err) {
      return refuse(500, err instanceof Error ? err.message : String(err));
    }
  }
  if (!upgrade) return refuse(500, 'Upgrade request required\n');
  if (kind === 'exec') return cri(() => d.runtime.exec({ containerId, cmd, ...opts }));
  return cri(() => d.runtime.attach({ containerId, ...opts }));
}

function fullName(pod: V1Pod): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}`;
}

/** The id of the newest (by createdAt, int64 ns) of `items`. */
function newest(items: ReadonlyArray<{ id: string; createdAt: string | number | undefined }>): string | undefined {
  let best: { id: string; at: bigint } | undefined;
  for (const it of items) {
    let at = 0n;
    try {
      at = BigInt(it.createdAt ?? 0);
    } catch {
      at = 0n;
    }
    if (best === undefined || at > best.at) best = { id: it.id, at };
  }
  return best?.id;
}

/** The kubelet's streaming.WriteError: gRPC code → HTTP status, the error text as the body. */
async function cri(call: () => Promise<string>): Promise<StreamOutcome> {
  try {
    return { kind: 'proxy', url: await call() };
  } catch (err) {
    if (!(err instanceof CriError)) throw err;
    switch (err.code) {
      case 'ERR_CRI_NOT_FOUND':
        return refuse(404, err.message);
      case 'ERR_CRI_RESOURCE_EXHAUSTED':
        return refuse(429, err.message, [['Retry-After', '1']]);
      default:
        return refuse(500, err.message);
    }
  }
}
