/**
 * Copies the shared pod cache's counters (kept in its SharedArrayBuffer header, written by any
 * thread) into the main thread's series at each collection. The cache's totals only grow, so a
 * counter moves by the difference since the previous collection and never goes back.
 */
import type { PodCacheStats } from '../../shared/pod-cache/pod-cache.js';
import type { MainMetrics } from './main-metrics.js';

type Totals = Pick<PodCacheStats, 'fullTotal' | 'oversizeTotal' | 'trimmedTotal'>;

export class PodCacheMetrics {
  readonly #m: MainMetrics;
  #seen: Totals = { fullTotal: 0, oversizeTotal: 0, trimmedTotal: 0 };

  constructor(main: MainMetrics) {
    this.#m = main;
  }

  observe(s: PodCacheStats): void {
    const m = this.#m;
    m.cacheSlotsUsed.set(s.slotsUsed);
    m.cacheSlotsCapacity.set(s.capacity);
    // Every pod without a usable status: no slot (unstored) or an oversize placeholder.
    m.cacheUnstored.set(s.unstored + s.oversizeEntries);
    const seen = this.#seen;
    if (s.fullTotal > seen.fullTotal) m.cacheFull.inc(s.fullTotal - seen.fullTotal);
    if (s.oversizeTotal > seen.oversizeTotal) m.cacheOversize.inc(s.oversizeTotal - seen.oversizeTotal);
    if (s.trimmedTotal > seen.trimmedTotal) m.cacheTrimmed.inc(s.trimmedTotal - seen.trimmedTotal);
    this.#seen = { fullTotal: Math.max(seen.fullTotal, s.fullTotal), oversizeTotal: Math.max(seen.oversizeTotal, s.oversizeTotal), trimmedTotal: Math.max(seen.trimmedTotal, s.trimmedTotal) };
  }
}
