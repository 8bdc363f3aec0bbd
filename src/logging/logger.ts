/**
 * Structured JSON-lines logging with kubelet-like verbosity: `-v N` enables `logger.v(n)` for
 * n <= N; errors and info (v0) always print. Every pod event carries `pod` ("ns/name") and
 * `podUID` fields (use {@link podFields}). Never log env values, secrets or whole specs.
 *
 * One line per record: {"ts": ISO-8601, "level": "info"|"error", "v": n, "msg": ..., ...fields}.
 * The sink is injected so tests capture lines and worker threads can forward theirs.
 */
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
    sink(JSON.stringify({ ts: new Date(now()).toISOString(), level, v, msg, ...base, ...fields }));
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
