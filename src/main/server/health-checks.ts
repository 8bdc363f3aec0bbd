/**
 * The kubelet's two liveness verdicts, as HealthCheckResult builders the agent core can feed
 * from its own state (both take the injected Clock):
 *
 *   syncloop — server.go syncLoopHealthCheck: fails when the sync loop has not been entered for
 *              max(2 × resync interval, 5m); message "sync Loop took longer than expected".
 *   pleg     — generic.go Healthy (src/shared/pleg/pleg-health.ts): fails before the first successful
 *              relist and when the last one started more than the threshold ago (default 3m);
 *              "pleg was last seen active <d> ago; threshold is <t>".
 * And shardlet's own:
 *   podcache — fails while the last relist listed pods it could not store because the pod cache
 *              was full at its maximum (their status is unknown and they are not synced). Not a
 *              runtime error: the sync loop keeps running, so deletions can make room.
 */
import type { Clock } from '../../shared/clock/clock.js';
import { plegHealth } from '../../shared/pleg/pleg-health.js';
import type { HealthCheckResult } from './server-sources.js';

export const SYNC_LOOP_MIN_THRESHOLD_MS = 5 * 60_000;

export interface SyncLoopCheckDeps {
  clock: Pick<Clock, 'monotonic'>;
  /** Monotonic ms when the sync loop last started an iteration; undefined before the first. */
  latestLoopEntry(): number | undefined;
  /** The sync loop's resync interval (kubelet default 1 min). */
  resyncIntervalMs: number;
}

export function syncLoopCheck(deps: SyncLoopCheckDeps): HealthCheckResult {
  const threshold = Math.max(2 * deps.resyncIntervalMs, SYNC_LOOP_MIN_THRESHOLD_MS);
  const entered = deps.latestLoopEntry();
  if (entered !== undefined && deps.clock.monotonic() > entered + threshold) {
    return { name: 'syncloop', ok: false, reason: 'sync Loop took longer than expected' };
  }
  return { name: 'syncloop', ok: true };
}

export interface PlegCheckDeps {
  clock: Pick<Clock, 'monotonic'>;
  /** Monotonic ms of the last successful relist start (the PLEG thread's report); undefined before the first. */
  lastRelistMs(): number | undefined;
  thresholdMs: number;
}

/** /healthz/pleg: the one PLEG health check (src/shared/pleg/pleg-health.ts) as a HealthCheckResult. */
export function plegCheck(deps: PlegCheckDeps): HealthCheckResult {
  const h = plegHealth(deps.lastRelistMs(), deps.clock.monotonic(), deps.thresholdMs);
  return h.healthy ? { name: 'pleg', ok: true } : { name: 'pleg', ok: false, reason: h.reason };
}

export interface PodCacheCheckDeps {
  /** The cache's stats (PodCacheReader.stats). */
  stats(): { unstored: number; oversizeEntries: number; capacity: number; maxCapacity: number };
}

/**
 * /healthz/podcache: pods the cache holds no usable status for degrade visibly, never silently:
 * pods without a slot (the cache is full) and pods stored as an ERR_CACHE_ENTRY_TOO_LARGE
 * placeholder (their worker does not sync them; kills still work, from the runtime listing).
 */
export function podCacheCheck(deps: PodCacheCheckDeps): HealthCheckResult {
  const s = deps.stats();
  if (s.unstored === 0 && s.oversizeEntries === 0) return { name: 'podcache', ok: true };
  const parts: string[] = [];
  if (s.unstored > 0) parts.push(`pod cache full: ${s.unstored} pods have no status (${s.capacity} slots in use, at most ${s.maxCapacity})`);
  if (s.oversizeEntries > 0) parts.push(`${s.oversizeEntries} pods have a status too large to store (ERR_CACHE_ENTRY_TOO_LARGE)`);
  return { name: 'podcache', ok: false, reason: parts.join('; ') };
}
