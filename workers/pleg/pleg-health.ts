/**
 * PLEG health as the kubelet judges it (generic.go Healthy): unhealthy before the first
 * successful relist, and when the last one is older than the threshold. Pure, so the main
 * thread can evaluate it with its own clock from the last relist time the PLEG reported.
 */

export interface PlegHealth {
  healthy: boolean;
  /** Empty when healthy; the kubelet's error text otherwise. */
  reason: string;
}

/**
 * @param lastRelistMs time of the last successful relist (same clock as nowMs), undefined before the first
 */
export function plegHealth(lastRelistMs: number | undefined, nowMs: number, thresholdMs: number): PlegHealth {
  if (lastRelistMs === undefined) return { healthy: false, reason: 'pleg has yet to be successful' };
  const elapsed = nowMs - lastRelistMs;
  if (elapsed > thresholdMs) {
    return { healthy: false, reason: `pleg was last seen active ${formatGoDuration(elapsed)} ago; threshold is ${formatGoDuration(thresholdMs)}` };
  }
  return { healthy: true, reason: '' };
}

/** Go's time.Duration.String() for a duration in ms (ms resolution): "3m0s", "1h2m3.5s", "250ms", "0s". */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.round(Math.abs(ms));
  let out: string;
  if (rest < 1000) {
    out = `${rest}ms`;
  } else {
    const h = Math.floor(rest / 3_600_000);
    rest -= h * 3_600_000;
    const m = Math.floor(rest / 60_000);
    rest -= m * 60_000;
    const s = Math.floor(rest / 1000);
    const frac = rest - s * 1000;
    const secs = frac === 0 ? `${s}` : `${s}.${String(frac).padStart(3, '0').replace(/0+$/, '')}`;
    out = h > 0 ? `${h}h${m}m${secs}s` : m > 0 ? `${m}m${secs}s` : `${secs}s`;
  }
  return neg ? `-${out}` : out;
}
