/**
 * THE PLEG health check (the kubelet's generic.go Healthy), used by both sides: the PLEG thread
 * for its own snapshot, and the main thread for /healthz/pleg and for runtime readiness (the
 * sync loop backs off while it fails, as the kubelet's runtimeState "PLEG is not healthy").
 * Pure: the caller gives the last successful relist start and now, both Clock.monotonic() ms —
 * one process-wide time base, so a time taken on the PLEG thread is valid on the main thread.
 * Unhealthy before the first successful relist and when the last one is older than the threshold.
 */
import { formatGoDuration } from '../clock/go-duration.js';

export interface PlegHealth {
  healthy: boolean;
  /** Empty when healthy; the kubelet's error text otherwise. */
  reason: string;
}

/**
 * @param lastRelistMs monotonic ms of the last successful relist start, undefined before the first
 * @param nowMs monotonic ms now
 */
export function plegHealth(lastRelistMs: number | undefined, nowMs: number, thresholdMs: number): PlegHealth {
  if (lastRelistMs === undefined) return { healthy: false, reason: 'pleg has yet to be successful' };
  const elapsed = nowMs - lastRelistMs;
  if (elapsed > thresholdMs) {
    return { healthy: false, reason: `pleg was last seen active ${formatGoDuration(elapsed)} ago; threshold is ${formatGoDuration(thresholdMs)}` };
  }
  return { healthy: true, reason: '' };
}
