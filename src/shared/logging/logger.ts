/**
 * Structured JSON-lines logging with kubelet-like verbosity: `-v N` enables `logger.v(n)` for
 * n <= N; errors and info (v0) always print. Every pod event carries `pod` ("ns/name") and
 * `podUID` fields (use {@link podFields}). Never log env values, secrets or whole specs.
 *
 * One line per record: {"ts": ISO-8601, "level": "info"|"error", "v": n, "msg": ..., ...fields}.
 * The sink is injected so tests capture lines and worker threads can forward theirs.
 */
import fs from 'node:fs';
import { truncateText } from './bounded-text.js';

/**
 * Characters of one string field (or the message) in a log record; longer ones are truncated.
 * Field values often carry text from manifests or the runtime; this keeps every line bounded
 * (error messages are already shortened per value where they are built; this is the backstop).
 */
export const MAX_LOG_FIELD_CHARS = 8192;

function bounded(fields: LogFields | undefined): LogFields | undefined {
  if (fields === undefined) return undefined;
  let out: LogFields | undefined;
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v !== 'string' || v.length <= MAX_LOG_FIELD_CHARS) continue;
    out ??= { ...fields };
    out[k] = truncateText(v, MAX_LOG_FIELD_CHARS);
  }
  return out ?? fields;
}

export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Verbose logging at level n (kubelet -v semantics). Returns a no-op logger when disabled. */
  v(n: number): Pick<Logger, 'info'>;
  /** A logger that adds `fields` to every record. */
  with(fields: LogFields): Logger;
  readonly verbosity: number;
}

export type LogSink = (line: string) => void;

export interface LoggerOptions {
  verbosity?: number;
  sink?: LogSink;
  now?: () => number;
  fields?: LogFields;
}

/** A sink that never throws and counts what it could not write (see {@link createFdSink}). */
export interface FdSink extends LogSink {
  /** Lines dropped since the sink was created (write errors: ENOSPC, EPIPE, EIO, EAGAIN, ...). */
  dropped(): number;
  /**
   * Called once per dropped line from then on (shardlet_log_lines_dropped_total: each thread
   * wires its own sink to its own metrics). One observer per sink; undefined removes it. The
   * observer must not log (it runs inside a failed write).
   */
  observeDrops(observer: (() => void) | undefined): void;
  /** Writes the lines still batched (see createFdSink) now. */
  flush(): void;
}

export interface FdSinkOptions {
  fd: number;
  /** The write call (default fs.writeSync); returns bytes written or throws the errno error. */
  write?: (fd: number, data: Buffer, offset: number, length: number) => number;
  /** Schedules the flush of a batch (default queueMicrotask: the end of the current run of code). */
  defer?: (flush: () => void) => void;
}

/**
 * Lines are batched up to this many bytes per write(2): PIPE_BUF on Linux, the size up to which
 * a write to a pipe is atomic, so threads sharing the fd never interleave inside a batch. A
 * line longer than this is written on its own (as every line was before batching).
 */
export const LOG_BATCH_BYTES = 4096;

/**
 * A log sink writing synchronously to a file descriptor, surviving every write error.
 *
 * Batching: lines logged in one synchronous run of code (a sync-loop iteration admitting
 * thousands of pods logs a line per pod) go out in writes of up to LOG_BATCH_BYTES, flushed
 * when the next line would not fit and at the end of the run (`defer`), and at the thread's
 * exit. One write(2) per line cost ~8 µs of the ~11 µs a line took (5,000 "pod admitted" lines
 * to a pipe, one process); a batch of whole lines costs one. A failed batch drops (and counts)
 * each of its lines.
 *
 * Why not `process.stderr.write`: a failed write there (stderr on a full disk: ENOSPC; a closed
 * pipe: EPIPE) is emitted as an 'error' event on the stream, which nothing can usefully handle:
 * unhandled, it kills the process (exit 1, crash-looping under a supervisor); handled, the
 * stream is destroyed and every later line is lost even after space returns. Here each line is
 * one `write(2)` of its own: a failure drops that line (counted), and the first line written
 * after a run of failures is preceded by a record saying how many were lost and why, so the
 * log recovers by itself when space returns. Worker threads write to the same fd directly
 * (no hop through the main thread), one whole line per call.
 */
/** How long one line may wait for a full pipe (EAGAIN) before it is dropped, and the pause step. */
const EAGAIN_WAIT_LIMIT_MS = 2_000;
const EAGAIN_PAUSE_MS = 1;
/** Never notified: Atomics.wait on it is a plain bounded sleep of the writing thread. */
const pauseCell = new Int32Array(new SharedArrayBuffer(4));

export function createFdSink(o: FdSinkOptions): FdSink {
  const write = o.write ?? ((fd, data, offset, length) => fs.writeSync(fd, data, offset, length));
  let dropped = 0;
  let droppedSinceLastWrite = 0;
  let lastError = '';
  let observer: (() => void) | undefined;
  const drop = (): void => {
    dropped++;
    droppedSinceLastWrite++;
    try {
      observer?.();
    } catch {
      // A metrics fault must not turn a dropped log line into a crash.
    }
  };
  const writeAll = (text: string): boolean => {
    const buf = Buffer.from(text);
    let off = 0;
    let waitedMs = 0;
    while (off < buf.length) {
      try {
        off += write(o.fd, buf, off, buf.length - off);
      } catch (err) {
        const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : String(err);
        // A full pipe (stderr read by a supervisor or a test that is briefly behind, on an fd
        // libuv made non-blocking) is back-pressure, not a lost disk: wait for the reader as
        // Node's own synchronous stdio does, but bounded, so a reader that stopped for good
        // costs a dropped line instead of a hung thread. The rest of the line continues from
        // `off`, so no line is ever half-written and then duplicated.
        if (code === 'EAGAIN' && waitedMs < EAGAIN_WAIT_LIMIT_MS) {
          Atomics.wait(pauseCell, 0, 0, EAGAIN_PAUSE_MS);
          waitedMs += EAGAIN_PAUSE_MS;
          continue;
        }
        lastError = code;
        return false;
      }
    }
    return true;
  };
  const defer = o.defer ?? queueMicrotask;
  /** Whole lines not yet written ('\n'-terminated), and how many. */
  let batch = '';
  let batchBytes = 0;
  let batchLines = 0;
  let flushScheduled = false;
  const writeLines = (text: string, lines: number): void => {
    if (droppedSinceLastWrite > 0) {
      const notice = JSON.stringify({ ts: new Date().toISOString(), level: 'error', v: 0, msg: 'log lines dropped: write to the log failed', dropped: droppedSinceLastWrite, error: lastError });
      if (!writeAll(notice + '\n')) {
        for (let i = 0; i < lines; i++) drop();
        return;
      }
      droppedSinceLastWrite = 0;
    }
    if (!writeAll(text)) for (let i = 0; i < lines; i++) drop();
  };
  const flush = (): void => {
    if (batchLines === 0) return;
    const text = batch;
    const lines = batchLines;
    batch = '';
    batchBytes = 0;
    batchLines = 0;
    writeLines(text, lines);
  };
  const sink = ((line: string): void => {
    const text = line + '\n';
    const bytes = Buffer.byteLength(text);
    if (batchBytes + bytes > LOG_BATCH_BYTES) flush();
    if (bytes > LOG_BATCH_BYTES) {
      writeLines(text, 1);
      return;
    }
    batch += text;
    batchBytes += bytes;
    batchLines++;
    if (!flushScheduled) {
      flushScheduled = true;
      defer(() => {
        flushScheduled = false;
        flush();
      });
    }
  }) as FdSink;
  sink.dropped = () => dropped;
  sink.observeDrops = (o) => {
    observer = o;
  };
  sink.flush = flush;
  return sink;
}

/** The process's stderr (fd 2), shared by every logger of this thread that takes no sink. */
export const stderrSink: FdSink = createFdSink({ fd: 2 });
// What the current run of code logged reaches stderr even if the thread exits before the run
// ends (process.exit, a fatal error): 'exit' handlers run on the exiting thread.
process.on('exit', () => stderrSink.flush());

const noop: Pick<Logger, 'info'> = Object.freeze({ info: () => {} });

export function createLogger(opts: LoggerOptions = {}): Logger {
  const verbosity = opts.verbosity ?? 0;
  const sink = opts.sink ?? stderrSink;
  const now = opts.now ?? Date.now;
  const base = opts.fields ?? {};
  const emit = (level: 'info' | 'error', v: number, msg: string, fields?: LogFields): void => {
    sink(JSON.stringify({ ts: new Date(now()).toISOString(), level, v, msg: truncateText(msg, MAX_LOG_FIELD_CHARS), ...bounded(base), ...bounded(fields) }));
  };
  const logger: Logger = {
    verbosity,
    info: (msg, fields) => emit('info', 0, msg, fields),
    error: (msg, fields) => emit('error', 0, msg, fields),
    v: (n) => (n <= verbosity ? { info: (msg, fields) => emit('info', n, msg, fields) } : noop),
    with: (fields) => createLogger({ verbosity, sink, now, fields: { ...base, ...fields } }),
  };
  return logger;
}

/** The standard identity fields of a pod log record. */
export function podFields(pod: { metadata?: { name?: string; namespace?: string; uid?: string } }): LogFields {
  const m = pod.metadata ?? {};
  return { pod: `${m.namespace ?? ''}/${m.name ?? ''}`, podUID: m.uid ?? '' };
}

/** A logger that discards everything (tests that do not assert on logs). */
export const silentLogger: Logger = createLogger({ sink: () => {} });
