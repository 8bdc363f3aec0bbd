/**
 * The node lease during a cluster-mode burst (issue 12: "lease renewal latency p99 during the
 * 1,000-pod burst, target ≤ 1 s late"), from two views:
 *
 *  - the agent's: `shardlet_node_lease_renew_lateness_seconds` (due time → the renewing write
 *    stamped with its renewTime and sent) and `shardlet_node_lease_renew_request_duration_seconds`
 *    (sent → answer handled), as histogram deltas between a scrape before the first create and
 *    one after the last pod was seen Running. The p99 is reported as the upper bound of the
 *    bucket holding it (a bucketed histogram tells no more; the buckets are 5 ms … 30 s, with
 *    0.75/1/1.5 s around the target);
 *  - the API server's: the bench watches the Lease object (admin identity) and notes every
 *    renewTime it sees; the largest gap between consecutive renewTimes in the window is what
 *    the node lifecycle controller would have seen (its grace period is 40–50 s); and the
 *    server's own time for the lease PUTs (apiserver_request_duration_seconds), which splits
 *    the request part into the server's share and the agent's (a busy main thread handles the
 *    answer late).
 *
 * Pure functions over parsed scrapes and observed renewTimes; the session does the I/O.
 */
import { NODE_LEASE_DEFAULTS } from '../src/main/lease/node-lease.js';
import type { Bucket } from './stats.js';
import { bucketDelta } from './stats.js';
import { histogramBuckets, sampleSum, type ParsedMetrics } from './prom-text.js';

export const LEASE_LATENESS_METRIC = 'shardlet_node_lease_renew_lateness_seconds';
export const LEASE_REQUEST_METRIC = 'shardlet_node_lease_renew_request_duration_seconds';
/** The target: each renewal at most this late (p99). */
export const LEASE_LATENESS_TARGET_S = 1;

export interface LeaseDuringBurst {
  /** Renewals the agent completed in the window (ok + failed). */
  renewals: number;
  failed: number;
  /** Upper bound of the bucket holding the p99 of due → sent (null: no renewal in the window). */
  latenessP99AtMostS: number | null;
  /** Upper bound of the highest non-empty bucket (the worst renewal is at most this late). */
  latenessMaxAtMostS: number | null;
  /** Upper bound of the bucket holding the p99 of sent → answer handled. */
  requestP99AtMostS: number | null;
  /**
   * The API server's own time for the lease PUTs in the window (apiserver_request_duration_seconds,
   * resource leases, verb PUT): upper bound of the bucket holding the p99 (null: not exposed).
   */
  serverP99AtMostS: number | null;
  /** renewTimes the bench's watch saw in the window. */
  apiRenewals: number;
  /** Largest gap between consecutive renewTimes seen by the API server in the window (s). */
  apiMaxGapS: number | null;
  /** Every renewal succeeded and the lateness p99 bound is within the target. */
  pass: boolean;
  /**
   * No renewal happened and none was due: the burst ended before the renewal after the last one
   * the API server held was due (plus the lateness target). Reported as such, not as a failure.
   */
  noneDue: boolean;
}

/** The smallest bucket bound holding at least a `q` share of the observations (null when none). */
export function bucketBoundAtQuantile(buckets: readonly Bucket[], q: number): number | null {
  const b = [...buckets].sort((x, y) => x.le - y.le);
  const total = b.at(-1)?.count ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  for (const bucket of b) if (bucket.count >= rank) return bucket.le;
  return null;
}

function deltaOf(before: ParsedMetrics, after: ParsedMetrics, name: string, match: Record<string, string> = {}): Bucket[] {
  return bucketDelta(histogramBuckets(before, name, match), histogramBuckets(after, name, match));
}

/** Gaps (s) between consecutive distinct renewTimes (RFC 3339, any order). */
export function renewGapsS(renewTimes: readonly string[]): number[] {
  const ms = [...new Set(renewTimes)].map((t) => Date.parse(t)).filter((t) => Number.isFinite(t)).sort((a, b) => a - b);
  return ms.slice(1).map((t, i) => (t - ms[i]!) / 1000);
}

export const APISERVER_DURATION_METRIC = 'apiserver_request_duration_seconds';

/** The agent's lease renewal interval (the bench does not change it). */
export const LEASE_RENEW_INTERVAL_S = NODE_LEASE_DEFAULTS.renewIntervalMs / 1000;

/**
 * `before`/`after`: the agent's scrapes; `server`: the API server's /metrics before and after
 * (null when not read); `renewTimes`: what the bench's Lease watch saw (the last one before the
 * window first); `windowEndMs`: wall-clock end of the window (to tell "none due" from "late").
 */
export function leaseDuringBurst(before: ParsedMetrics, after: ParsedMetrics, renewTimes: readonly string[], server: { before: ParsedMetrics; after: ParsedMetrics } | null = null, windowEndMs?: number): LeaseDuringBurst {
  const lateness = deltaOf(before, after, LEASE_LATENESS_METRIC);
  const request = deltaOf(before, after, LEASE_REQUEST_METRIC);
  const count = (m: ParsedMetrics, result?: string): number => sampleSum(m, `${LEASE_LATENESS_METRIC}_count`, result ? { result } : {}) ?? 0;
  const renewals = count(after) - count(before);
  const failed = count(after, 'failed') - count(before, 'failed');
  const latenessP99AtMostS = bucketBoundAtQuantile(lateness, 0.99);
  const gaps = renewGapsS(renewTimes);
  const last = Math.max(...renewTimes.map((t) => Date.parse(t)).filter((t) => Number.isFinite(t)));
  const noneDue = renewals === 0 && windowEndMs !== undefined && Number.isFinite(last) && last + (LEASE_RENEW_INTERVAL_S + LEASE_LATENESS_TARGET_S) * 1000 > windowEndMs;
  return {
    renewals,
    failed,
    latenessP99AtMostS,
    latenessMaxAtMostS: bucketBoundAtQuantile(lateness, 1),
    requestP99AtMostS: bucketBoundAtQuantile(request, 0.99),
    serverP99AtMostS: server === null ? null : bucketBoundAtQuantile(deltaOf(server.before, server.after, APISERVER_DURATION_METRIC, { resource: 'leases', verb: 'PUT' }), 0.99),
    apiRenewals: new Set(renewTimes).size,
    apiMaxGapS: gaps.length === 0 ? null : Math.max(...gaps),
    pass: renewals > 0 && failed === 0 && latenessP99AtMostS !== null && latenessP99AtMostS <= LEASE_LATENESS_TARGET_S,
    noneDue,
  };
}

/** The verdict column: PASS, FAIL, or "none due" (a burst shorter than the wait for the next renewal). */
export function leaseVerdict(l: LeaseDuringBurst): string {
  return l.pass ? 'PASS' : l.noneDue ? 'none due' : 'FAIL';
}
