/**
 * A streaming exec (CRI Exec, `kubectl exec`) in a simulated container: the command's stdin,
 * stdout and stderr are live streams, not buffers (ExecSync, sim-exec.ts, keeps its own path).
 *
 * What runs, by argv (after the same image lookup as ExecSync, so a missing executable fails
 * with containerd's "executable file not found" message):
 *   - `cat` / `cat -`              stdin → stdout until stdin ends; exit 0;
 *   - `cat FILE...`                files written into the container, else its mounted files
 *                                  (sim-mounts.ts);
 *   - `sh` / `ash` (no script)     reads its script from stdin, runs it at EOF (sim-shell.ts);
 *   - `nc -l [-k] [-v] -p PORT`    listens on the sandbox's PORT (sim-ports.ts) — a real
 *                                  loopback TCP listener — and joins one connection (each, with
 *                                  -k) to stdin/stdout; -v says "listening on [::]:PORT ..." on
 *                                  stderr once it listens, as busybox does;
 *   - `tar -xmf - [-C DIR]`, `tar cf - PATH…`, `test -d|-e|-f PATH`: over the container's
 *                                  in-memory files (sim-fs-builtins.ts) — what `kubectl cp` runs;
 *   - `tty`                        prints /dev/pts/0 with a tty, "not a tty" (exit 1) without;
 *   - anything else                its timeline (sim-shell.ts) played on the clock: output at
 *                                  its offsets, exit at its end; one that never exits runs until
 *                                  the client goes away.
 * With a tty, output newlines become CRLF (the line discipline's onlcr) and stderr is stdout.
 *
 * Ownership: every timer, listener and connection opened here is closed when the returned
 * promise settles or `signal` aborts (the client went away), whichever is first.
 */
import net from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { Clock, TimerHandle } from '../shared/clock/clock.js';
import type { Mount } from '../shared/cri/cri-types.js';
import type { ContainerFs } from './sim-container-files.js';
import { parseTarArgs, simTarCreate, simTarExtract, simTest } from './sim-fs-builtins.js';
import { catArgs, simCat } from './sim-mounts.js';
import type { SimPortRegistry } from './sim-ports.js';
import { resolveArgv, type Env } from './sim-shell.js';

export interface TerminalSize {
  width: number;
  height: number;
}

export interface ExecStreams {
  stdin: Readable | null;
  stdout: Writable | null;
  /** null with a tty (merged into stdout) or when not requested. */
  stderr: Writable | null;
  tty: boolean;
  /** The latest terminal size the client sent (tty only). */
  size(): TerminalSize | undefined;
  /** Aborted when the client went away: the process is killed. */
  signal: AbortSignal;
}

export interface ExecTarget {
  sandboxId: string;
  env: Env;
  mounts: readonly Mount[];
  /** The container's own files (written by `tar -x`). */
  files: ContainerFs;
}

export type ExecOutcome =
  | { readonly kind: 'exited'; readonly code: number }
  /** The exec could not start (the runtime's error, passed to the client as an internal error). */
  | { readonly kind: 'failed'; readonly message: string };

/** Bound on a script read from stdin by `sh`. */
const MAX_STDIN_SCRIPT_BYTES = 1024 * 1024;

export interface StreamingExecDeps {
  clock: Clock;
  ports: SimPortRegistry;
  /** 64 hex chars naming the exec in error messages (containerd's exec id). */
  execId: string;
}

export function runStreamingExec(d: StreamingExecDeps, target: ExecTarget, argv: readonly string[], io: ExecStreams): Promise<ExecOutcome> {
  const resolved = resolveArgv(argv, target.env);
  if (resolved.kind === 'not-found') {
    return Promise.resolve({
      kind: 'failed',
      message: `failed to exec in container: failed to start exec "${d.execId}": OCI runtime exec failed: exec failed: unable to start container process: exec: "${resolved.executable}": executable file not found in $PATH: unknown`,
    });
  }
  const out = (text: string | Buffer): void => write(io.stdout, io.tty, text);
  const err = (text: string): void => (io.tty ? out(text) : write(io.stderr, false, text));
  const name = basename(argv[0] ?? '');
  const args = argv.slice(1);
  if (name === 'cat' && (args.length === 0 || (args.length === 1 && args[0] === '-'))) return catStdin(io, out);
  const files = catArgs(argv);
  if (files !== undefined && files.every((f) => target.files.stat(f)?.type === 'file')) {
    for (const f of files) {
      const n = target.files.stat(f);
      if (n?.type === 'file') out(n.data);
    }
    return Promise.resolve({ kind: 'exited', code: 0 });
  }
  if (files !== undefined) {
    const r = simCat(target.mounts, files);
    out(r.stdout);
    err(r.stderr.toString());
    return Promise.resolve({ kind: 'exited', code: r.exitCode });
  }
  if ((name === 'sh' || name === 'ash') && args.length === 0) return shFromStdin(d, target, io);
  if (name === 'test' || name === '[') {
    const r = simTest(target.files, name === '[' && args.at(-1) === ']' ? args.slice(0, -1) : args);
    if (r !== undefined) return Promise.resolve({ kind: 'exited', code: r.code });
  }
  if (name === 'tar') {
    const t = parseTarArgs(args);
    if (typeof t === 'string') {
      err(`tar: ${t}\n`);
      return Promise.resolve({ kind: 'exited', code: 1 });
    }
    const nowSec = Math.floor(d.clock.now() / 1000);
    const done = (r: { code: number; stdout?: Buffer; stderr?: string }): ExecOutcome => {
      if (r.stdout !== undefined) out(r.stdout);
      if (r.stderr) err(r.stderr);
      return { kind: 'exited', code: r.code };
    };
    if (t.mode === 'c') return Promise.resolve(done(simTarCreate(target.files, t)));
    return simTarExtract(target.files, t, io.stdin, nowSec, io.signal).then(done);
  }
  if (name === 'tty') {
    if (io.tty) out('/dev/pts/0\n');
    else out('not a tty\n');
    return Promise.resolve({ kind: 'exited', code: io.tty ? 0 : 1 });
  }
  if (name === 'nc') {
    const listen = parseNcListen(args);
    if (listen === undefined) {
      err('nc: only `nc -l [-k] -p PORT` is simulated\n');
      return Promise.resolve({ kind: 'exited', code: 1 });
    }
    if (typeof listen === 'string') {
      err(`nc: ${listen}\n`);
      return Promise.resolve({ kind: 'exited', code: 1 });
    }
    return ncListen(d, target, listen, io, out, err);
  }
  if (resolved.kind === 'opaque') return untilAborted(io.signal);
  return playTimeline(d.clock, resolved.timeline, io, out, err);
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

function write(w: Writable | null, tty: boolean, text: string | Buffer): void {
  if (w === null || w.destroyed || w.writableEnded) return;
  const b = typeof text === 'string' ? Buffer.from(text) : text;
  if (b.length === 0) return;
  w.write(tty ? crlf(b) : b);
}

/** `\n` → `\r\n` (a bare LF only; an existing CRLF stays). */
function crlf(b: Buffer): Buffer {
  if (!b.includes(0x0a)) return b;
  const out: number[] = [];
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c === 0x0a && (i === 0 || b[i - 1] !== 0x0d)) out.push(0x0d);
    out.push(c);
  }
  return Buffer.from(out);
}

function untilAborted(signal: AbortSignal): Promise<ExecOutcome> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve({ kind: 'exited', code: 137 });
    signal.addEventListener('abort', () => resolve({ kind: 'exited', code: 137 }), { once: true });
  });
}

function catStdin(io: ExecStreams, _out: (b: Buffer) => void): Promise<ExecOutcome> {
  const stdin = io.stdin;
  if (stdin === null) return Promise.resolve({ kind: 'exited', code: 0 });
  return new Promise((resolve) => {
    const done = (code: number): void => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
      io.signal.removeEventListener('abort', onAbort);
      resolve({ kind: 'exited', code });
    };
    const onData = (chunk: Buffer): void => {
      // Backpressure: stop reading stdin while stdout is full.
      if (io.stdout !== null && !io.stdout.destroyed) {
        if (!io.stdout.write(io.tty ? crlf(chunk) : chunk)) {
          stdin.pause();
          io.stdout.once('drain', () => stdin.resume());
        }
      }
    };
    const onEnd = (): void => done(0);
    const onAbort = (): void => done(137);
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('close', onEnd);
    io.signal.addEventListener('abort', onAbort, { once: true });
  });
}

function shFromStdin(d: StreamingExecDeps, target: ExecTarget, io: ExecStreams): Promise<ExecOutcome> {
  const stdin = io.stdin;
  if (stdin === null) return Promise.resolve({ kind: 'exited', code: 0 });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const onData = (c: Buffer): void => {
      bytes += c.length;
      if (bytes > MAX_STDIN_SCRIPT_BYTES) {
        cleanup();
        write(io.tty ? io.stdout : io.stderr, io.tty, `sh: script on stdin exceeds ${MAX_STDIN_SCRIPT_BYTES} bytes\n`);
        resolve({ kind: 'exited', code: 2 });
        return;
      }
      chunks.push(c);
    };
    const onEnd = (): void => {
      cleanup();
      const script = Buffer.concat(chunks).toString('utf8');
      runStreamingExec(d, target, ['sh', '-c', script], { ...io, stdin: null }).then(resolve, (e: unknown) => resolve({ kind: 'failed', message: String(e) }));
    };
    const onAbort = (): void => {
      cleanup();
      resolve({ kind: 'exited', code: 137 });
    };
    const cleanup = (): void => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      io.signal.removeEventListener('abort', onAbort);
    };
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    io.signal.addEventListener('abort', onAbort, { once: true });
  });
}

function playTimeline(clock: Clock, timeline: import('./sim-shell.js').Timeline, io: ExecStreams, out: (t: string) => void, err: (t: string) => void): Promise<ExecOutcome> {
  return new Promise((resolve) => {
    const timers: TimerHandle[] = [];
    let settled = false;
    const finish = (o: ExecOutcome): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) t.cancel();
      io.signal.removeEventListener('abort', onAbort);
      resolve(o);
    };
    const onAbort = (): void => finish({ kind: 'exited', code: 137 });
    io.signal.addEventListener('abort', onAbort, { once: true });
    const emit = (o: { stream: 'stdout' | 'stderr'; text: string }): void => (o.stream === 'stdout' ? out(o.text) : err(o.text));
    // Output due at once is written in order now; later output on the clock.
    for (const o of timeline.outputs) {
      if (timeline.exit !== null && o.atMs > timeline.exit.atMs) continue;
      if (o.atMs <= 0) emit(o);
      else timers.push(clock.setTimer(o.atMs, () => emit(o)));
    }
    const exit = timeline.exit;
    if (exit === null) return;
    if (exit.atMs <= 0) finish({ kind: 'exited', code: exit.code });
    else timers.push(clock.setTimer(exit.atMs, () => finish({ kind: 'exited', code: exit.code })));
    if (io.signal.aborted) onAbort();
  });
}

export interface NcListen {
  port: number;
  keep: boolean;
  verbose: boolean;
}

/** `nc -l [-k] -p PORT` (also `-lp PORT`, `-lk`); a string is the usage error. */
export function parseNcListen(args: readonly string[]): NcListen | string | undefined {
  let listen = false;
  let keep = false;
  let verbose = false;
  let port: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('-') || a.length < 2) return undefined;
    for (let j = 1; j < a.length; j++) {
      const f = a[j];
      if (f === 'l') listen = true;
      else if (f === 'k') keep = true;
      else if (f === 'v') verbose = true;
      else if (f === 'p') {
        port = j === a.length - 1 ? args[++i] : a.slice(j + 1);
        break;
      } else return undefined;
    }
  }
  if (!listen || port === undefined) return undefined;
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) return `bad port '${port}'`;
  return { port: Number(port), keep, verbose };
}

function ncListen(d: StreamingExecDeps, target: ExecTarget, l: NcListen, io: ExecStreams, out: (b: Buffer) => void, err: (t: string) => void): Promise<ExecOutcome> {
  return new Promise((resolve) => {
    const server = net.createServer({ allowHalfOpen: false });
    let conn: net.Socket | undefined;
    let claimed = false;
    let settled = false;
    const finish = (code: number): void => {
      if (settled) return;
      settled = true;
      io.signal.removeEventListener('abort', onAbort);
      io.stdin?.off('data', onStdin);
      if (claimed) d.ports.release(target.sandboxId, l.port);
      server.close();
      conn?.destroy();
      resolve({ kind: 'exited', code });
    };
    const onAbort = (): void => finish(137);
    const onStdin = (c: Buffer): void => {
      conn?.write(c);
    };
    io.signal.addEventListener('abort', onAbort, { once: true });
    io.stdin?.on('data', onStdin);
    server.on('connection', (s) => {
      if (conn !== undefined) {
        s.destroy(); // one connection at a time, as nc
        return;
      }
      conn = s;
      if (!l.keep) {
        server.close();
        d.ports.release(target.sandboxId, l.port);
        claimed = false;
      }
      s.on('data', (c: Buffer) => out(c));
      s.on('error', () => {});
      s.on('close', () => {
        conn = undefined;
        if (!l.keep) finish(0);
      });
    });
    server.on('error', (e) => {
      err(`nc: ${e.message}\n`);
      finish(1);
    });
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      if (settled || addr === null || typeof addr === 'string') return;
      if (!d.ports.claim(target.sandboxId, l.port, addr.port)) {
        err('nc: bind: Address in use\n');
        finish(1);
        return;
      }
      claimed = true;
      if (l.verbose) err(`listening on [::]:${l.port} ...\n`);
    });
  });
}
