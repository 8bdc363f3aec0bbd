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
   * Get returns an empty PodStatus then; callers use `emptyPodStatus(uid)`; but see
   * `stats().unstored`: while it is > 0 "none" may mean "could not be stored"). Never blocks.
   */
  get(uid: string): CacheEntry | undefined;
  /**
   * Resolves once the cache can answer with data newer than `minTimestampMs`: when the pod's
   * entry timestamp > minTimestampMs, or the global timestamp > minTimestampMs. In the second
   * case a pod without an entry resolves with an empty status stamped with the global time —
   * with error ERR_CACHE_FULL while the last relist could not store every pod (UNSTORED > 0):
   * then "no entry" is unknown, not "no runtime objects", and pod workers must not act on it.
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
 * What `set` did. 'stored': the whole status is the entry (spanning overflow slots when it is
 * larger than one slot; any size up to the per-entry limit, 16 MiB by default). 'stale': an
 * entry with a newer timestamp was already there and is kept. 'trimmed': the encoded status
 * exceeded the per-entry limit; it was stored without the old exited instances no reader uses
 * (pod-status-trim.ts). 'oversize': even the trimmed status exceeded it, or the cache could not
 * give the overflow slots (at its maximum capacity); an entry with an empty status and the error
 * ERR_CACHE_ENTRY_TOO_LARGE was stored instead (pod workers never sync on it, kills list the
 * runtime instead; never old or truncated data).
 */
export type SetOutcome = 'stored' | 'stale' | 'trimmed' | 'oversize';

export interface PodCacheWriter {
  /**
   * Publish the pod's status. Newer timestamp wins: an existing entry with a strictly newer
   * timestamp is kept ('stale'). The cache grows when every slot is taken; it throws CacheError
   * ERR_CACHE_FULL when the pod has no slot and it cannot grow any more (at its maximum; nothing
   * is overwritten), ERR_CACHE_INVALID_UID for an empty uid or one over 64
   * UTF-8 bytes, ERR_CACHE_INVALID_TIMESTAMP for a non-integer timestamp.
   */
  set(uid: string, status: RuntimePodStatus, error: WireError | null, timestampMs: number): SetOutcome;
  /** Drop the pod's entry and free its slot (no-op when absent). */
  delete(uid: string): void;
  /**
   * Advance the global timestamp (never moves it back) and wake waiters. `unstored` (the PLEG's
   * relist; default 0): how many listed pods it could not store (ERR_CACHE_FULL) — recorded
   * before the timestamp moves, so readers treat a missing entry as unknown while it is > 0.
   */
  updateTime(timestampMs: number, unstored?: number): void;
}

export interface PodCacheStats {
  /** Slots holding a pod. */
  slotsUsed: number;
  /** Slots now (grows on demand up to maxCapacity). */
  capacity: number;
  /** The most slots it can grow to. */
  maxCapacity: number;
  /** Encoded status bytes currently stored. */
  bytesUsed: number;
  /** capacity × bytesPerSlot. */
  bytesCapacity: number;
  /** `set` calls refused with ERR_CACHE_FULL (for a metric). */
  fullTotal: number;
  /** Entries replaced by an ERR_CACHE_ENTRY_TOO_LARGE error entry (for a metric). */
  oversizeTotal: number;
  /** Entries stored without old exited instances to fit the per-entry limit (for a metric). */
  trimmedTotal: number;
  /** Slots held as overflow of entries larger than one slot. */
  overflowSlots: number;
  /**
   * Entries holding an ERR_CACHE_ENTRY_TOO_LARGE placeholder now (a status over the per-entry
   * limit, or no overflow slots left): pods with no usable status; health fails while > 0.
   */
  oversizeEntries: number;
  /** Times the capacity grew. */
  growTotal: number;
  /** Pods the last relist listed but could not store (> 0: the cache is full; health fails). */
  unstored: number;
}

/** The cache's time now: integer ms of the clock's process-wide monotonic time base. */
export function cacheNow(clock: Pick<Clock, 'monotonic'>): number {
  return Math.floor(clock.monotonic());
}
