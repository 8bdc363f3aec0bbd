/**
 * The outcome of running one probe once (the kubelet's probe.Result plus output and error),
 * before thresholds. `warning` is the kubelet's probe.Warning (an HTTP 3xx that was not
 * followed): it counts as success. Outputs are capped at {@link MAX_PROBE_OUTPUT_BYTES}, as the
 * kubelet caps exec output and HTTP bodies (10 KiB).
 */
import { ProbeError } from './prober-errors.js';

export const MAX_PROBE_OUTPUT_BYTES = 10 * 1024;

export type ProbeOutcome =
  | { readonly kind: 'success'; readonly output: string }
  | { readonly kind: 'warning'; readonly output: string }
  | { readonly kind: 'failure'; readonly output: string }
  | { readonly kind: 'error'; readonly error: ProbeError };

/** Shared success value: the hot path (a healthy probe) allocates no outcome object. */
export const PROBE_SUCCESS: ProbeOutcome = Object.freeze({ kind: 'success', output: '' });

export function probeWarning(output: string): ProbeOutcome {
  return { kind: 'warning', output };
}

export function probeFailure(output: string): ProbeOutcome {
  return { kind: 'failure', output };
}

export function probeErrored(error: ProbeError): ProbeOutcome {
  return { kind: 'error', error };
}

/** Decode at most MAX_PROBE_OUTPUT_BYTES of `buf` as UTF-8. */
export function boundedText(buf: Buffer): string {
  return buf.subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8');
}
