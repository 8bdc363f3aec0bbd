/**
 * Probe timing as the probed side saw it (the HTTP server's request log, the sim-runtime's
 * ExecSync log), per pod, over a measurement window [start, end): how late each probe came after
 * the previous one plus the period, and how many were missed or doubled. Pure.
 *
 * Definitions (P = the probe period; every gap is between consecutive arrivals of one pod's probe,
 * the window's edges count as arrivals for the first and last gap):
 *   - lateness = gap − P, for gaps under 1.5 P (the schedule is "one per period"; a gap of 1.3 P
 *     is a probe 0.3 P late). Arrivals are what the prober sent plus local delivery (loopback, or
 *     one gRPC call on a unix socket): a bound on scheduled → sent from above. Edge gaps give no
 *     lateness (the window is not on the prober's schedule);
 *   - missed = round(gap / P) − 1 for gaps of 1.5 P or more (edges included): probes that were due
 *     and never came;
 *   - doubled = interior gaps under 0.5 P: a probe sent twice for one period.
 */
import { summarize, type Summary } from './stats.js';

export interface ProbeTimelineStats {
  /** Arrivals inside the window. */
  probes: number;
  pods: number;
  /** Pods with no arrival in the window. */
  silentPods: number;
  latenessMs: Summary | null;
  missed: number;
  doubled: number;
}

export function analyseProbeTimes(arrivals: ReadonlyMap<string, readonly number[]>, keys: readonly string[], periodMs: number, startMs: number, endMs: number): ProbeTimelineStats {
  if (!(periodMs > 0) || !(endMs > startMs)) throw new RangeError('analyseProbeTimes: period and window must be positive');
  const lateness: number[] = [];
  let probes = 0;
  let missed = 0;
  let doubled = 0;
  let silentPods = 0;
  const missedIn = (gap: number): number => (gap >= 1.5 * periodMs ? Math.round(gap / periodMs) - 1 : 0);
  for (const key of keys) {
    const t = (arrivals.get(key) ?? []).filter((x) => x >= startMs && x < endMs).sort((a, b) => a - b);
    probes += t.length;
    if (t.length === 0) {
      silentPods++;
      missed += Math.max(1, Math.round((endMs - startMs) / periodMs));
      continue;
    }
    missed += missedIn((t[0] as number) - startMs) + missedIn(endMs - (t[t.length - 1] as number));
    for (let i = 1; i < t.length; i++) {
      const gap = (t[i] as number) - (t[i - 1] as number);
      if (gap < 0.5 * periodMs) doubled++;
      else if (gap >= 1.5 * periodMs) missed += missedIn(gap);
      else lateness.push(gap - periodMs);
    }
  }
  return { probes, pods: keys.length, silentPods, latenessMs: summarize(lateness), missed, doubled };
}
