/**
 * The PLEG's side of the shared pod cache (GenericPleg's reads and writes, generic-pleg.ts):
 * what it writes (set/delete with the IPs it keeps, generic.go getPodIPs), what it reads back
 * to judge an entry (a pod worker's published status, a dead PLEG thread's entries at the
 * replacement's resync, objects the runtime lost), and the per-pod bookkeeping of which entry
 * timestamps it already checked. Relist diffing (pleg-records.ts, pleg-events.ts) and health
 * (src/shared/pleg/pleg-health.ts) live elsewhere; this module knows nothing of events.
 *
 * Invariants:
 *   - `#checkedTs[uid]` is the timestamp of the entry last found consistent with a listing (the
 *     PLEG's own writes, a seeded entry, a published entry checked by vanished()); only entries
 *     written by someone else since then are decoded again, so a steady node costs one
 *     timestamp read per pod per relist.
 *   - Without a cache reader, the IPs last written per pod are remembered here instead
 *     (`#lastIps`), so a dead pod keeps its IPs either way.
 *   - A reader error (a stuck lock, a corrupt entry) is thrown to the caller, who counts it for
 *     that pod only (GenericPleg #podError); `published()` alone reads it as "no entry".
 */
import type { Logger } from '../../src/shared/logging/logger.js';
import { CacheError } from '../../src/shared/pod-cache/pod-cache-errors.js';
import type { CacheEntry, PodCacheReader, PodCacheWriter } from '../../src/shared/pod-cache/pod-cache.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import type { RelistPod } from '../runtime-status/bulk-pod-status.js';
import { matchesListing } from './pleg-cache-resync.js';

/**
 * What the PLEG reads back from the cache: old IPs (get) and, when offered, the sweep's uids
 * and the count of dead-writer recoveries (an entry repaired after a thread died mid-write).
 */
export type PlegCacheReader = Pick<PodCacheReader, 'get'> & Partial<Pick<PodCacheReader, 'uids'>> & {
  recoveries?(): number;
  entryTimestamp?(uid: string): number | undefined;
  /** Entry changes by other threads (SharedPodCacheReader.foreignWrites); equal readings: none in between. */
  foreignWrites?(): number;
};

/** How a write went: 'full' = no slot and the cache cannot grow; 'failed' = any other cache error (logged). */
export type StoreOutcome = 'stored' | 'stale' | 'full' | 'failed';

export interface PlegCacheSyncDeps {
  cache: PodCacheWriter;
  cacheReader: PlegCacheReader | undefined;
  logger: Logger;
}

export class PlegCacheSync {
  readonly #cache: PodCacheWriter;
  readonly #reader: PlegCacheReader | undefined;
  readonly #log: Logger;
  /** IPs last written per pod, when no cacheReader is given. */
  readonly #lastIps = new Map<string, string[]>();
  /** Per pod, the timestamp of the cache entry last checked against a listing (see the header). */
  readonly #checkedTs = new Map<string, number>();

  constructor(deps: PlegCacheSyncDeps) {
    this.#cache = deps.cache;
    this.#reader = deps.cacheReader;
    this.#log = deps.logger;
  }

  /**
   * A reading of the count of entry changes by other threads (pod workers, a recovery), or
   * undefined when the reader cannot tell (then every relist checks every entry).
   */
  foreignWrites(): number | undefined {
    return this.#reader?.foreignWrites?.();
  }

  /** The cache's count of dead-writer recoveries (0 without a reader that counts them). */
  recoveries(): number {
    return this.#reader?.recoveries?.() ?? 0;
  }

  /**
   * A replacement PLEG's first relist (GenericPleg header): the listed pods whose entry has no
   * error and names exactly the listed objects in their listed states. Each is marked checked.
   * `onError` gets a pod whose entry could not be read.
   */
  upToDate(pods: ReadonlyMap<string, RelistPod>, onError: (uid: string, err: unknown) => void): string[] {
    const reader = this.#reader;
    if (!reader) return [];
    const out: string[] = [];
    for (const [uid, pod] of pods) {
      try {
        const entry = reader.get(uid);
        if (!entry || entry.error || !matchesListing(entry.status, pod)) continue;
        this.#checkedTs.set(uid, entry.timestampMs);
        out.push(uid);
      } catch (err) {
        onError(uid, err);
      }
    }
    return out;
  }

  /**
   * A pod worker's published entry for the status builder to take uninspected objects from:
   * none with an error entry; a cache error reads as no entry (the objects are inspected).
   */
  published(uid: string): RuntimePodStatus | undefined {
    try {
      const e = this.#reader?.get(uid);
      return e && !e.error ? e.status : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The pod's entry when it is error-free and names exactly the listed objects in their listed
   * states (a pod worker published what the runtime now lists): then it already holds what the
   * relist would build and write, and the pod needs neither inspection nor write. A reader
   * error reads as no such entry (the pod is built as before).
   */
  agreeingEntry(uid: string, listed: RelistPod): CacheEntry | undefined {
    try {
      const entry = this.#reader?.get(uid);
      return entry && !entry.error && matchesListing(entry.status, listed) ? entry : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Whether the pod's entry carries an error (a failed inspection, an entry repaired after its
   * writer died): such a pod is inspected at once, never deferred to its worker's publish. A
   * reader error reads as an error entry.
   */
  errorEntry(uid: string): boolean {
    try {
      return this.#reader?.get(uid)?.error != null;
    } catch {
      return true;
    }
  }

  /**
   * After a `store` lost to a newer entry (a pod worker published after this relist began): that
   * entry agrees with this listing when it is error-free and names exactly the listed objects in
   * their listed states. Then the cache already holds the newest listed state (the worker's own
   * answers) and the pod needs no reinspection (it is marked checked); else the caller rechecks
   * it next relist. During a burst nearly every pod's worker publishes while a relist runs:
   * reinspecting them all cost a PodSandboxStatus and a ContainerStatus per started pod.
   * A reader error is thrown (the caller counts it for that pod).
   */
  newerEntryAgrees(uid: string, listed: RelistPod | undefined): boolean {
    const entry = listed ? this.#reader?.get(uid) : undefined;
    if (!listed || !entry || entry.error || !matchesListing(entry.status, listed)) return false;
    this.#checkedTs.set(uid, entry.timestampMs);
    return true;
  }

  /** Whether an error-free entry was published at or after `ts` (a reader error is thrown). */
  publishedSince(uid: string, ts: number): boolean {
    const entry = this.#reader?.get(uid);
    return entry !== undefined && !entry.error && entry.timestampMs >= ts;
  }

  /** Whether the pod's cache entry shows any sandbox or container. */
  hadObjects(uid: string): boolean {
    const e = this.#reader?.get(uid);
    return e !== undefined && (e.status.sandboxes.length > 0 || e.status.containers.length > 0);
  }

  /**
   * Whether the pod's entry, written by someone else (a pod worker's fresh status) before this
   * relist's listing, names a sandbox or container the listing does not have: the runtime lost
   * it (restarted without recent objects). Entries are decoded only when their timestamp moved
   * since the last check.
   */
  vanished(uid: string, listed: RelistPod, relistTs: number): boolean {
    const reader = this.#reader;
    if (!reader) return false;
    const checked = this.#checkedTs.get(uid);
    if (reader.entryTimestamp && reader.entryTimestamp(uid) === checked) return false;
    const entry = reader.get(uid);
    if (!entry || entry.timestampMs === checked) return false;
    if (entry.timestampMs >= relistTs) return false; // published after the listing: judge next relist
    this.#checkedTs.set(uid, entry.timestampMs);
    const ids = new Set<string>();
    for (const s of listed.sandboxes) ids.add(s.id);
    for (const c of listed.containers) ids.add(c.id);
    return entry.status.sandboxes.some((s) => !ids.has(s.id)) || entry.status.containers.some((c) => !ids.has(c.id));
  }

  /** Writes the pod's status (with `error`) at `ts`. A full cache is returned, not logged (the caller logs once per relist). */
  store(uid: string, status: RuntimePodStatus, error: { code: string; message: string } | null, ts: number): StoreOutcome {
    try {
      const outcome = this.#cache.set(uid, status, error, ts);
      if (outcome !== 'stale') this.#lastIps.set(uid, status.ips);
      if (outcome === 'oversize') this.#log.error('PLEG: pod status too large for the pod cache (over --pod-cache-max-entry-bytes even trimmed, or no overflow slots left); the pod is not synced, a kill lists its objects from the runtime', { podUID: uid });
      return outcome === 'stale' ? 'stale' : 'stored';
    } catch (err) {
      if (err instanceof CacheError && err.code === 'ERR_CACHE_FULL') return 'full';
      this.#log.error('PLEG: Write status', { podUID: uid, err: String(err) });
      return 'failed';
    }
  }

  /** The entry written at `ts` is consistent with this relist's listing. */
  markChecked(uid: string, ts: number): void {
    this.#checkedTs.set(uid, ts);
  }

  /** The pod is gone from the runtime: drop its entry and everything remembered about it. */
  delete(uid: string): void {
    this.#cache.delete(uid);
    this.#lastIps.delete(uid);
    this.#checkedTs.delete(uid);
  }

  /**
   * Entries this relist did not list and the PLEG never tracked were published by pod workers
   * (their fresh post-sync status; beyond the kubelet). If the runtime lost those objects
   * (restarted empty before any relist saw them), nothing else would correct the entry: each
   * one older than this relist that names objects is handed to `onGone` (the caller asks for a
   * resync) and deleted if it returns true; false (no room for the resync now) keeps the entry,
   * so the next sweep finds it again.
   */
  sweepUnlisted(tracked: (uid: string) => boolean, relistTs: number, onGone: (uid: string) => boolean, onError: (uid: string, err: unknown) => void): void {
    const reader = this.#reader;
    if (!reader?.uids) return;
    for (const uid of reader.uids()) {
      if (tracked(uid)) continue;
      try {
        const entry = reader.get(uid);
        if (!entry || entry.timestampMs >= relistTs) continue;
        if (entry.status.sandboxes.length === 0 && entry.status.containers.length === 0) continue;
        // onGone asks for the pod's resync; false = no room for it now: keep the entry for the next sweep.
        if (!onGone(uid)) continue;
        this.#log.v(2).info('PLEG: pod published by a worker is gone from the runtime', { podUID: uid });
        this.#cache.delete(uid);
        this.#checkedTs.delete(uid);
      } catch (err) {
        onError(uid, err);
      }
    }
  }

  /**
   * Forget the checked timestamps of pods no longer tracked (once per relist), once there are
   * more of them than `trackedCount` pods: a pod the PLEG stops tracking had its entry deleted
   * here (delete() forgets it), so what lingers is bounded and only costs memory.
   */
  retain(tracked: (uid: string) => boolean, trackedCount: number): void {
    if (this.#checkedTs.size <= trackedCount) return;
    for (const uid of this.#checkedTs.keys()) if (!tracked(uid)) this.#checkedTs.delete(uid);
  }

  /**
   * generic.go getPodIPs: when the new status has no IPs and no sandbox is ready (a dead pod,
   * network torn down), keep the IPs of the previous status: the API expects a completed pod's IP.
   */
  preserveIps(uid: string, status: RuntimePodStatus): string[] {
    if (status.ips.length > 0) return status.ips;
    if (status.sandboxes.some((s) => s.state === 'SANDBOX_READY')) return status.ips;
    const old = this.#reader ? this.#reader.get(uid)?.status.ips : this.#lastIps.get(uid);
    return old && old.length > 0 ? old : status.ips;
  }
}
