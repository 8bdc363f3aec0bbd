/**
 * The pod cache's role interfaces: what the kubelet's kubecontainer.Cache does
 * (pkg/kubelet/container/cache.go), split by who holds it.
 *
 * - {@link PodCacheReader}: pod workers (worker threads) and the main thread (status, /pods).
 * - {@link PodCacheWriter}: the PLEG thread (every relist), and a pod worker publishing its own
 *   pod's status right after its CRI calls. Several threads may write; see pod-cache-shared.ts.
 *
 * Invariant (as in the kubelet): all cache entries are at least as new as the global timestamp
 * set by {@link PodCacheWriter.updateTime}; individual entries may be newer. The PLEG therefore
 * calls `updateTime(t)` only AFTER every `set(..., t)` of a relist.
 *
 * Timestamps are integer MONOTONIC milliseconds ({@link cacheNow}: Clock.monotonic(), which is
 * one process-wide time base that every thread reads alike), never wall-clock: a wall-clock step
 * backwards would make every new write older than the entries already there ('stale') and
 * freeze the cache while waits on the global timestamp still resolved. The kubelet uses
 * time.Time (ns); at ms resolution two writes can share a timestamp, which is why "newer" is
 * strict (`>`) in {@link PodCacheReader.getNewerThan} and "not older" (`>=`) wins in `set`.
 */
import type { Clock } from '../clock/clock.js';
import type { WireError } from '../cri/cri-errors.js';
import type { RuntimePodStatus } from './runtime-pod-status.js';

export interface CacheEntry {
  status: RuntimePodStatus;
  /** The error seen while inspecting the pod (kubelet: cache data.err), or null. */
  error: WireError | null;
  /** When the status was taken: the inspection started at or after this time (ms). */
  timestampMs: number;
}

export interface PodCacheReader {
  /**
   * The pod's entry as last published, or undefined when the cache holds none (the kubelet's
   * Get returns an empty PodStatus then; callers use `emptyPodStatus(uid)`). Never blocks.
   */
  get(uid: string): CacheEntry | undefined;
  /**
   * Resolves once the cache can answer with data newer than `minTimestampMs`: when the pod's
   * entry timestamp > minTimestampMs, or the global timestamp > minTimestampMs. In the second
   * case a pod without an entry resolves with an empty status stamped with the global time.
   * Rejects with the signal's reason when aborted. Never spins the event loop: it waits with
   * Atomics.waitAsync on the cache's notification word.
   */
  getNewerThan(uid: string, minTimestampMs: number, signal?: AbortSignal): Promise<CacheEntry>;
  /**
   * Blocking variant for threads that may block (never the main thread): Atomics.wait on the
   * notification word. Returns undefined when `timeoutMs` passes first.
   */
  getNewerThanSync?(uid: string, minTimestampMs: number, timeoutMs?: number): CacheEntry | undefined;
  /** UIDs of every pod with an entry (O(capacity); for the PLEG's sweep of unlisted pods). */
  uids(): string[];
  /** The global timestamp (ms), or undefined before the first updateTime. */
  globalTimestampMs(): number | undefined;
  stats(): PodCacheStats;
}

/**
 * What `set` did. 'stale': an entry with a newer timestamp was already there and is kept.
 * 'oversize': the encoded status did not fit the slot; an entry with an empty status and the
 * error ERR_CACHE_ENTRY_TOO_LARGE was stored instead (readers see the error, never old data).
 */
export type SetOutcome = 'stored' | 'stale' | 'oversize';

export interface PodCacheWriter {
  /**
   * Publish the pod's status. Newer timestamp wins: an existing entry with a strictly newer
   * timestamp is kept ('stale'). Throws CacheError ERR_CACHE_FULL when the pod has no slot and
   * every slot is taken (nothing is overwritten), ERR_CACHE_INVALID_UID for an empty uid or one over 64
   * UTF-8 bytes, ERR_CACHE_INVALID_TIMESTAMP for a non-integer timestamp.
   */
  set(uid: string, status: RuntimePodStatus, error: WireError | null, timestampMs: number): SetOutcome;
  /** Drop the pod's entry and free its slot (no-op when absent). */
  delete(uid: string): void;
  /** Advance the global timestamp (never moves it back) and wake waiters. */
  updateTime(timestampMs: number): void;
}

export interface PodCacheStats {
  /** Slots holding a pod. */
  slotsUsed: number;
  /** Maximum number of pods (constructor option). */
  capacity: number;
  /** Encoded status bytes currently stored. */
  bytesUsed: number;
  /** capacity × bytesPerSlot. */
  bytesCapacity: number;
  /** `set` calls refused with ERR_CACHE_FULL (for a metric). */
  fullTotal: number;
  /** Entries replaced by an ERR_CACHE_ENTRY_TOO_LARGE error entry (for a metric). */
  oversizeTotal: number;
}

/** The cache's time now: integer ms of the clock's process-wide monotonic time base. */
export function cacheNow(clock: Pick<Clock, 'monotonic'>): number {
  return Math.floor(clock.monotonic());
}
