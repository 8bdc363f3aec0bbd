/**
 * Pure statistics for the density benchmark: percentiles of latency samples, CDF points for
 * charts, and Prometheus-style quantiles from cumulative histogram buckets (what the agent's
 * /metrics exposes). No I/O, no clock: every function is a function of its arguments.
 *
 * Percentiles use the nearest-rank definition (the value below which p% of samples fall, taken
 * from the samples themselves, never interpolated): a reported p99 is a latency some pod really
 * saw. Units are whatever the caller passes in (the bench uses milliseconds).
 */

export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of an ascending-sorted array; `p` in [0, 100]. NaN when empty. */
export function percentileSorted(sorted: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within [0, 100], got ${p}`);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * n));
  return sorted[Math.min(n, rank) - 1] as number;
}

/** Nearest-rank percentile of unsorted samples (copies; does not reorder the caller's array). */
export function percentile(samples: readonly number[], p: number): number {
  return percentileSorted(sortedCopy(samples), p);
}

/** count/min/mean/p50/p90/p99/max; null for no samples (an empty run is not a zero latency). */
export function summarize(samples: readonly number[]): Summary | null {
  if (samples.length === 0) return null;
  const s = sortedCopy(samples);
  let sum = 0;
  for (const v of s) sum += v;
  return {
    count: s.length,
    min: s[0] as number,
    mean: sum / s.length,
    p50: percentileSorted(s, 50),
    p90: percentileSorted(s, 90),
    p99: percentileSorted(s, 99),
    max: s[s.length - 1] as number,
  };
}

/**
 * Empirical CDF as [value, fraction ≤ value] points, ascending, ending at [max, 1]. With more
 * than `maxPoints` samples it keeps evenly spaced ranks (always the first and the last) so a
 * 5,000-pod run does not put 5,000 vertices in an SVG.
 */
export function cdfPoints(samples: readonly number[], maxPoints = 200): Array<[number, number]> {
  if (maxPoints < 2) throw new RangeError(`maxPoints must be at least 2, got ${maxPoints}`);
  const s = sortedCopy(samples);
  const n = s.length;
  if (n === 0) return [];
  const out: Array<[number, number]> = [];
  const step = n <= maxPoints ? 1 : (n - 1) / (maxPoints - 1);
  let last = -1;
  for (let k = 0; k < Math.min(n, maxPoints); k++) {
    const i = Math.min(n - 1, Math.round(k * step));
    if (i === last) continue;
    last = i;
    out.push([s[i] as number, (i + 1) / n]);
  }
  return out;
}

/** One cumulative histogram bucket as Prometheus exposes it: count of observations ≤ `le`. */
export interface Bucket {
  le: number;
  count: number;
}

/**
 * Bucket-wise difference `after - before` (the observations made between two scrapes).
 * Buckets are matched by `le`; a bucket missing from `before` counts as 0 there.
 */
export function bucketDelta(before: readonly Bucket[], after: readonly Bucket[]): Bucket[] {
  const prev = new Map(before.map((b) => [b.le, b.count]));
  return after.map((b) => ({ le: b.le, count: Math.max(0, b.count - (prev.get(b.le) ?? 0)) }));
}

/**
 * Quantile `q` ∈ [0, 1] of cumulative buckets, the way PromQL's histogram_quantile does it:
 * linear interpolation inside the bucket holding the rank, the lowest bucket starting at 0, and
 * a rank in the +Inf bucket answered with the highest finite bound. NaN with no observations.
 */
export function histogramQuantile(buckets: readonly Bucket[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile must be within [0, 1], got ${q}`);
  const b = [...buckets].sort((x, y) => x.le - y.le);
  const top = b[b.length - 1];
  if (top === undefined || top.count === 0) return Number.NaN;
  const rank = q * top.count;
  let prevLe = 0;
  let prevCount = 0;
  for (const bucket of b) {
    if (bucket.count >= rank && bucket.count > prevCount) {
      if (bucket.le === Number.POSITIVE_INFINITY) return prevLe;
      return prevLe + (bucket.le - prevLe) * ((rank - prevCount) / (bucket.count - prevCount));
    }
    prevLe = bucket.le === Number.POSITIVE_INFINITY ? prevLe : bucket.le;
    prevCount = bucket.count;
  }
  return prevLe;
}

/** Items per second over `ms`; null when the interval is not positive (nothing was timed). */
export function ratePerSecond(items: number, ms: number): number | null {
  return ms > 0 ? (items * 1000) / ms : null;
}

function sortedCopy(samples: readonly number[]): number[] {
  // Float64Array sorts numerically (Array#sort would compare as strings).
  return Array.from(Float64Array.from(samples).sort());
}
