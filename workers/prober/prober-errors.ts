/**
 * Typed prober errors. A probe *error* is not a probe *failure*: a failure ("exit code 1",
 * "HTTP 500", "connection refused", a timeout) counts toward failureThreshold; an error means the
 * probe could not be run at all (named port not found, no pod IP yet, the runtime unavailable, the
 * probe aborted). As in the kubelet's worker, an errored probe's result is thrown away: it neither
 * counts toward a threshold nor changes the stored result. Errors are data on this path
 * (returned inside a {@link ProbeOutcome}), never thrown.
 */
export type ProbeErrorCode =
  /** The probe names a port that is not a valid number or a named port of the container. */
  | 'ERR_PROBE_PORT'
  /** No host to probe: the probe sets none and the pod has no IP (yet). */
  | 'ERR_PROBE_NO_HOST'
  /** The probe has no handler (exec, httpGet, tcpSocket, grpc). */
  | 'ERR_PROBE_NO_HANDLER'
  /** The probe was cancelled (pod removed, worker stopped, manager closed). */
  | 'ERR_PROBE_ABORTED'
  /** The CRI call failed for a reason other than the probe's own timeout (e.g. ERR_CRI_UNAVAILABLE). */
  | 'ERR_PROBE_RUNTIME'
  /** Reading the HTTP response body failed after the status line arrived. */
  | 'ERR_PROBE_BODY';

export class ProbeError extends Error {
  override readonly name = 'ProbeError';
  readonly code: ProbeErrorCode;

  constructor(code: ProbeErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export const isProbeAborted = (err: unknown): boolean => err instanceof ProbeError && err.code === 'ERR_PROBE_ABORTED';
