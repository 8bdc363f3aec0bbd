/**
 * Structured JSON-lines logging with kubelet-like verbosity: `-v N` enables `logger.v(n)` for
 * n <= N; errors and info (v0) always print. Every pod event carries `pod` ("ns/name") and
 * `podUID` fields (use {@link podFields}). Never log env values, secrets or whole specs.
 *
 * One line per record: {"ts": ISO-8601, "level": "info"|"error", "v": n, "msg": ..., ...fields}.
 * The sink is injected so tests capture lines and worker threads can forward theirs.
 */
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

const stderrSink: LogSink = (line) => {
  process.stderr.write(line + '\n');
};

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
