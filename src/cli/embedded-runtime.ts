/**
 * The agent's embedded default runtime: when no --container-runtime-endpoint is given, the CLI
 * starts the simulated CRI runtime (`shardlet sim-runtime`) as a child process on a socket under
 * --root-dir, with its state persisted there so a restarted agent finds its pods again. The agent
 * itself only ever sees a CRI endpoint: it never imports the simulated runtime.
 *
 * An agent killed with SIGKILL leaves its embedded runtime running (the child is not in the
 * agent's process group's fate: nothing stops it). The next agent on the same --root-dir must not
 * start a second runtime on the same socket and state file (two processes writing one state, the
 * old one's pods invisible to the new): before spawning, it asks the socket for CRI Version, and
 * if a runtime answers it is reused (adopted) as it is. Its pid is kept in `sim-runtime.pid` next
 * to the socket, so the adopting agent can stop it on a graceful stop like its own child; the pid
 * is only signalled while /proc/PID/cmdline still names our socket (a recycled pid is left alone).
 *
 * The child (or the adopted runtime) is stopped (SIGTERM → state saved) when the agent stops.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CriClient } from '../shared/cri/cri-client.js';

export interface EmbeddedRuntime {
  endpoint: string;
  /** Whether a runtime left running by an earlier agent was reused instead of starting one. */
  adopted: boolean;
  stop(): Promise<void>;
}

const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'main.js');

/** Bound on the liveness probe of an existing socket (a live sim answers Version in milliseconds). */
const PROBE_TIMEOUT_MS = 3_000;
/** Bound on waiting for an adopted runtime (not our child: no exit event) to exit after SIGTERM. */
const ADOPTED_STOP_TIMEOUT_MS = 5_000;

/** Whether a CRI runtime answers Version on `socket` within the probe bound. */
async function runtimeAnswers(socket: string): Promise<boolean> {
  if (!fs.existsSync(socket)) return false;
  const cri = new CriClient({ endpoint: `unix://${socket}`, timeoutMs: PROBE_TIMEOUT_MS });
  try {
    await cri.version({ timeoutMs: PROBE_TIMEOUT_MS });
    return true;
  } catch {
    return false;
  } finally {
    cri.close();
  }
}

/** The pid in `pidFile` if that process is alive and its command line names `socket`, else undefined. */
function livePidServing(pidFile: string, socket: string): number | undefined {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(pid) || pid <= 1) return undefined;
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.includes(socket) ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function stopAdopted(pidFile: string, socket: string): Promise<void> {
  const pid = livePidServing(pidFile, socket);
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + ADOPTED_STOP_TIMEOUT_MS;
  while (livePidServing(pidFile, socket) !== undefined && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The embedded runtime's state file lives in its own 0700 directory (it holds container env,
 * secrets included; sim-persistence.ts tightens that directory, which must not be the root dir).
 * A state file at the older place (`<root>/sim-runtime-state.json`) is moved there once.
 */
export function embeddedStatePath(rootDir: string): string {
  const dir = path.join(rootDir, 'sim-runtime');
  const file = path.join(dir, 'state.json');
  const legacy = path.join(rootDir, 'sim-runtime-state.json');
  if (fs.existsSync(legacy) && !fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.renameSync(legacy, file);
  }
  return file;
}

export async function startEmbeddedRuntime(rootDir: string, onLine: (line: string) => void): Promise<EmbeddedRuntime> {
  fs.mkdirSync(rootDir, { recursive: true });
  const socket = path.join(rootDir, 'sim-runtime.sock');
  const pidFile = path.join(rootDir, 'sim-runtime.pid');
  if (await runtimeAnswers(socket)) {
    return { endpoint: `unix://${socket}`, adopted: true, stop: () => stopAdopted(pidFile, socket) };
  }
  const child: ChildProcess = spawn(process.execPath, [MAIN, 'sim-runtime', '--socket', socket, '--state', embeddedStatePath(rootDir)], {
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  if (child.pid !== undefined) fs.writeFileSync(pidFile, `${child.pid}\n`);
  let buffered = '';
  child.stderr?.setEncoding('utf8');
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: string) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        onLine(line);
        if (line.includes('serving unix://')) resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`embedded sim-runtime exited with code ${code} before serving`)));
    child.once('error', reject);
  });
  await ready;
  return {
    endpoint: `unix://${socket}`,
    adopted: false,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
