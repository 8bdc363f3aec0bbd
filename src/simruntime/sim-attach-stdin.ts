/**
 * The stdin of a simulated container (CRI Attach with stdin: `kubectl attach -i`,
 * `kubectl debug -i`, `kubectl run -i`). A container created with `stdin: true` whose program
 * reads its stdin — `sh` / `ash` without a script, or `cat` without files — keeps running,
 * waiting for input, instead of reading an empty stdin and exiting at once (sim-runtime.ts
 * #spawn). What an attached client types is then:
 *   - `cat`: copied to the container's stdout;
 *   - `sh`: run line by line, in order, as `sh -c LINE` in the container (the streaming exec's
 *     interpreter, sim-exec-stream.ts), with output to the container's stdout/stderr — its log
 *     and every attached client; `exit [N]` ends the container with N (default: the last
 *     command's status).
 * When the client's stdin ends and the container was created with `stdinOnce` (kubectl's
 * attach-once containers), the program reads EOF: it exits with the last command's status
 * once the queued lines have run. Without stdinOnce its stdin stays open for the next attach.
 * With a tty (`kubectl debug -it`: the client's terminal is raw) the line discipline is
 * simulated: typed bytes are echoed, CR or LF ends a line, ^D on an empty line is EOF (sh
 * exits), ^C drops the line.
 *
 * Ownership: a command that outlives its attach client is stopped when that client goes away
 * (its `signal`): the simulation keeps no process without a stream to run it.
 */
import { Writable, type Readable } from 'node:stream';
import type { Clock } from '../shared/clock/clock.js';
import { runStreamingExec, type ExecTarget } from './sim-exec-stream.js';
import type { SimPortRegistry } from './sim-ports.js';

export type StdinReader = 'sh' | 'cat';

/** Whether `argv` is a program that reads its stdin (and so waits for it when stdin is open). */
export function stdinReaderOf(argv: readonly string[]): StdinReader | undefined {
  const name = (argv[0] ?? '').slice((argv[0] ?? '').lastIndexOf('/') + 1);
  const args = argv.slice(1);
  if ((name === 'sh' || name === 'ash') && (args.length === 0 || (args.length === 1 && (args[0] === '-i' || args[0] === '-')))) return 'sh';
  if (name === 'cat' && (args.length === 0 || (args.length === 1 && args[0] === '-'))) return 'cat';
  return undefined;
}

export interface AttachStdinDeps {
  clock: Clock;
  ports: SimPortRegistry;
  /** The running container's exec target, undefined once it is gone. */
  execTarget(containerId: string): ExecTarget | undefined;
  /** Output of the container's program (to its log and attached clients). */
  output(containerId: string, stream: 'stdout' | 'stderr', text: string): void;
  /** The container's program exits with `code`. */
  end(containerId: string, code: number): void;
}

/** Bound on one line a shell buffers before it runs it. */
const MAX_LINE_BYTES = 64 * 1024;

function outputWritable(d: AttachStdinDeps, containerId: string, stream: 'stdout' | 'stderr'): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      d.output(containerId, stream, chunk.toString('utf8'));
      cb();
    },
  });
}

/** `exit`, `exit N` → the code (undefined for the last status); otherwise not an exit. */
function exitLine(line: string): { code: number | undefined } | undefined {
  const m = /^\s*exit(?:\s+(\d{1,3}))?\s*;?\s*$/.exec(line);
  if (!m) return undefined;
  return { code: m[1] === undefined ? undefined : Number(m[1]) & 0xff };
}

/**
 * Feeds one attach client's `stdin` to the container's program. `stdinOnce`: EOF ends the
 * program. Returns once wired; the work goes on as data arrives.
 */
export function feedAttachStdin(d: AttachStdinDeps, containerId: string, reader: StdinReader, mode: { stdinOnce: boolean; tty: boolean }, stdin: Readable, signal: AbortSignal): void {
  const { stdinOnce, tty } = mode;
  let pending = '';
  let lastCode = 0;
  let ended = false;
  let queue: Promise<void> = Promise.resolve();
  const finish = (code: number): void => {
    if (ended) return;
    ended = true;
    stdin.off('data', onData);
    d.end(containerId, code);
  };
  const runLine = (line: string): void => {
    queue = queue.then(async () => {
      if (ended || signal.aborted) return;
      const exit = exitLine(line);
      if (exit !== undefined) return finish(exit.code ?? lastCode);
      if (line.trim() === '') return;
      const target = d.execTarget(containerId);
      if (target === undefined) return;
      const outcome = await runStreamingExec({ clock: d.clock, ports: d.ports, execId: containerId }, target, ['sh', '-c', line], {
        stdin: null, stdout: outputWritable(d, containerId, 'stdout'), stderr: outputWritable(d, containerId, 'stderr'), tty: false, size: () => undefined, signal,
      });
      lastCode = outcome.kind === 'exited' ? outcome.code : 127;
      if (outcome.kind === 'failed') d.output(containerId, 'stderr', `sh: ${outcome.message}\n`);
    });
  };
  const onData = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    if (tty) d.output(containerId, 'stdout', text.replace(/\r(?!\n)/g, '\r\n').replace(/[\x03\x04]/g, ''));
    if (reader === 'cat') {
      if (!tty) d.output(containerId, 'stdout', text);
      return;
    }
    for (const ch of tty ? text : '') {
      if (ch === '\x04' && pending === '') return void (queue = queue.then(() => finish(lastCode)));
      if (ch === '\x03') pending = '';
    }
    pending += tty ? text.replace(/[\x03\x04]/g, '') : text;
    let nl: number;
    while ((nl = pending.search(tty ? /[\r\n]/ : /\n/)) >= 0) {
      runLine(pending.slice(0, nl).replace(/\r$/, ''));
      pending = pending.slice(pending[nl] === '\r' && pending[nl + 1] === '\n' ? nl + 2 : nl + 1);
    }
    if (Buffer.byteLength(pending) > MAX_LINE_BYTES) {
      pending = '';
      d.output(containerId, 'stderr', `sh: line exceeds ${MAX_LINE_BYTES} bytes\n`);
    }
  };
  const onEnd = (): void => {
    stdin.off('data', onData);
    if (reader === 'sh' && pending !== '') runLine(pending);
    pending = '';
    if (stdinOnce) queue = queue.then(() => finish(lastCode));
  };
  stdin.on('data', onData);
  stdin.once('end', onEnd);
}
