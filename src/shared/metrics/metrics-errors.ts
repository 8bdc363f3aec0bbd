/** Typed errors of the metrics layer, each with a stable code. */
export type MetricsErrorCode =
  | 'ERR_METRICS_BAD_ARENA' // a buffer that is not a metrics arena (wrong magic/version/size)
  | 'ERR_METRICS_BAD_OPTION' // an option out of range, named in the message
  | 'ERR_METRICS_LABELS'; // label values that do not match the metric's label names

export class MetricsError extends Error {
  override readonly name = 'MetricsError';
  constructor(readonly code: MetricsErrorCode, message: string) {
    super(message);
  }
}
