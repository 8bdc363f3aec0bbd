/**
 * The processes under test, started the way production starts them: `shardlet sim-runtime`
 * serving CRI on a unix socket and `shardlet agent` pointed at it (or at real containerd), each
 * a separate OS process so /proc figures are the agent's own.
 *
 * Lifecycle: `start*` resolves only once the process is ready (socket answers Version / agent
 * answers /healthz) and rejects with a BenchProcessError if it exits or times out first.
 * `stop()` sends SIGTERM, waits up to `graceMs`, then SIGKILLs; it is idempotent.
 * Ownership: the bench owns these children; `stop()` touches only the child it spawned.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../src/shared/clock/clock.js';
import { CriClient } from '../src/shared/cri/cri-client.js';
import { pinnedCommand } from './cpu-pinning.js';

export class BenchProcessError extends Error {
  readonly code = 'ERR_BENCH_PROCESS';
}

/** dist/src/cli/main.js, next to this compiled file's dist/bench/. */
export const SHARDLET_MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'cli', 'main.js');

export interface ManagedProcess {
  readonly pid: number;
  readonly name: string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** The last stderr lines (up to 20), for error messages. */
  tail(): string[];
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  clock: Clock;
  /** Every stderr line goes here (already split; no trailing newline). */
  onStderrLine?: (line: string) => void;
  /** Raw stderr is also appended to this file, for post-mortems. */
  logFile?: string;
  /** Run the process on these CPUs only (a `taskset -c` list; `--pin`); undefined = anywhere. */
  cpus?: string;
}

export function manage(name: string, child: ChildProcess, opts: SpawnOptions): ManagedProcess {
  if (child.pid === undefined) throw new BenchProcessError(`${name}: spawn failed`);
  const pid = child.pid;
  const log = opts.logFile ? fs.createWriteStream(opts.logFile) : undefined;
  const recent: string[] = [];
  if (child.stderr) {
    if (log) child.stderr.pipe(log);
    const rl = readline.createInterface({ input: child.stderr, crlfDelay: Infinity });
    rl.on('line', (line) => {
      recent.push(line);
      if (recent.length > 20) recent.shift();
      opts.onStderrLine?.(line);
    });
  }
  child.stdout?.resume();
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  let stopping: Promise<void> | undefined;
  return {
    pid,
    name,
    exited,
    tail: () => [...recent],
    stop(graceMs = 10_000): Promise<void> {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = opts.clock.setTimer(graceMs, () => child.kill('SIGKILL'));
        await exited;
        timer.cancel();
      })();
      return stopping;
    },
  };
}

/** Polls `probe` every `intervalMs` until it resolves true; fails when `proc` exits or time runs out. */
export async function waitReady(proc: ManagedProcess, clock: Clock, timeoutMs: number, intervalMs: number, what: string, probe: () => Promise<boolean>): Promise<void> {
  let exitedWith: number | string | undefined;
  void proc.exited.then((c) => (exitedWith = c));
  const deadline = clock.monotonic() + timeoutMs;
  for (;;) {
    if (exitedWith !== undefined) {
      // Stack frames say little; the error lines above them say what went wrong.
      const tail = proc.tail().filter((l) => !/^\s+at /.test(l)).slice(-5);
      throw new BenchProcessError(`${proc.name} exited (${exitedWith}) before ${what}${tail.length > 0 ? `; last stderr:\n    ${tail.join('\n    ')}` : ''}`);
    }
    if (await probe().catch(() => false)) return;
    if (clock.monotonic() > deadline) {
      await proc.stop(2000);
      throw new BenchProcessError(`${proc.name} not ready (${what}) after ${timeoutMs} ms`);
    }
    await clock.sleep(intervalMs);
  }
}

export interface SimRuntimeOptions extends SpawnOptions {
  socket: string;
  profile: string;
  /** Images present at start, like images imported into containerd (`--image`). */
  images?: readonly string[];
  /** More sim-runtime flags, verbatim (e.g. `--state FILE --state-interval-ms N`). */
  extraArgs?: readonly string[];
  readyTimeoutMs?: number;
}

export async function startSimRuntime(opts: SimRuntimeOptions): Promise<ManagedProcess> {
  const args = [SHARDLET_MAIN, 'sim-runtime', '--socket', opts.socket, '--profile', opts.profile, ...(opts.images ?? []).flatMap((i) => ['--image', i]), ...(opts.extraArgs ?? [])];
  const child = spawn(...pinnedCommand(opts.cpus, process.execPath, args), { stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = manage(`sim-runtime(${opts.profile})`, child, opts);
  const client = new CriClient({ endpoint: `unix://${opts.socket}`, timeoutMs: 2000 });
  try {
    await waitReady(proc, opts.clock, opts.readyTimeoutMs ?? 20_000, 100, 'CRI Version answered', async () => {
      if (!fs.existsSync(opts.socket)) return false;
      await client.version();
      return true;
    });
  } finally {
    client.close();
  }
  return proc;
}

export interface AgentOptions extends SpawnOptions {
  endpoint: string;
  manifestDir: string;
  rootDir: string;
  /** Container logs root (`--pod-logs-dir`); the agent's default is /var/log/pods. */
  podLogsDir?: string;
  nodeName: string;
  workers: number;
  maxPods: number;
  port: number;
  verbosity?: number;
  readyTimeoutMs?: number;
  /**
   * Script run instead of `dist/src/cli/main.js agent`, with the same flags (the bench's own
   * tests use a stand-in agent; `--agent-script` on the command line).
   */
  agentScript?: string;
  /** Flags for the agent's node process itself, before the script (e.g. `--cpu-prof`). */
  nodeArgs?: readonly string[];
  /** More agent flags, appended (e.g. `--kubeconfig` for cluster mode). */
  extraArgs?: readonly string[];
}

export function agentArgs(o: AgentOptions): string[] {
  return [
    ...(o.agentScript !== undefined ? [o.agentScript] : [SHARDLET_MAIN, 'agent']),
    '--container-runtime-endpoint', o.endpoint,
    '--pod-manifest-path', o.manifestDir,
    '--node-name', o.nodeName,
    '--workers', String(o.workers),
    '--max-pods', String(o.maxPods),
    // The read-only port serves what the bench scrapes; the secure port is not used here.
    '--read-only-port', String(o.port),
    '--port', '0',
    '--address', '127.0.0.1',
    '--root-dir', o.rootDir,
    ...(o.podLogsDir !== undefined ? ['--pod-logs-dir', o.podLogsDir] : []),
    '-v', String(o.verbosity ?? 2),
    ...(o.extraArgs ?? []),
  ];
}

export async function startAgent(opts: AgentOptions): Promise<ManagedProcess> {
  const child = spawn(...pinnedCommand(opts.cpus, process.execPath, [...(opts.nodeArgs ?? []), ...agentArgs(opts)]), { stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = manage(`agent(workers=${opts.workers})`, child, opts);
  await waitReady(proc, opts.clock, opts.readyTimeoutMs ?? 30_000, 100, '/healthz 200', async () => {
    const res = await fetch(`http://127.0.0.1:${opts.port}/healthz`, { signal: AbortSignal.timeout(2000) });
    await res.text();
    return res.ok;
  });
  return proc;
}

/** A TCP port free right now on 127.0.0.1 (bind to 0, read it, release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new BenchProcessError('no free port'))));
    });
  });
}
