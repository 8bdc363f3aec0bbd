/**
 * Runtime pods no source wants (the kubelet's HandlePodCleanups, every 2 s): which pods the
 * runtime holds (learnt from PLEG events, checked against the relist cache), which of them a
 * worker just removed (not orphans), and the orphan kill. Also answers whether anything may
 * still need a pod's files (the pod log GC asks).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logging/logger.js';
import { podFields } from '../../shared/logging/logger.js';
import type { CacheEntry } from '../../shared/pod-cache/pod-cache.js';
import type { PodManager } from '../pod-manager/pod-manager.js';
import type { PodWork, WorkerPresence } from './pod-worker-mirrors.js';

/** The kubelet kills runtime pods no source knows with this grace override (HandlePodCleanups). */
export const ORPHAN_GRACE_PERIOD_SECONDS = 1;

/** Role: what housekeeping learns from the PLEG and the pod workers. */
export interface RuntimePodTracker {
  /** A PLEG event named this pod: the runtime holds (or held) objects of it. */
  noteRuntimePod(uid: string): void;
  /** The pod's worker forgot it after removing its objects, at this pod-cache time. */
  noteForgotten(uid: string, atMs: number): void;
}

export interface PodHousekeepingDeps {
  logger: Logger;
  sourcesReady: () => boolean;
  /** Read-only view of the runtime (the SharedArrayBuffer cache). */
  cache: { get(uid: string): CacheEntry | undefined };
  podManager: Pick<PodManager, 'has'>;
  workers: WorkerPresence & Pick<PodWork, 'kill'>;
  onOrphan?: () => void;
}

export class PodHousekeeping implements RuntimePodTracker {
  readonly #d: PodHousekeepingDeps;
  /** Pod UIDs seen in the runtime (from PLEG events). */
  readonly #runtimePods = new Set<string>();
  /**
   * Pods a worker forgot after removing their objects, with the pod-cache time it did so
   * (PodResultMessage.forgottenAtMs). Until the cache shows the pod at a later time, or not at
   * all, its entry is a relist's view from before the removal (the PLEG may store it after the
   * worker dropped the entry), not an orphan. Pruned by housekeeping once the entry is gone.
   */
  readonly #forgottenAt = new Map<string, number>();

  constructor(deps: PodHousekeepingDeps) {
    this.#d = deps;
  }

  noteRuntimePod(uid: string): void {
    this.#runtimePods.add(uid);
  }

  noteForgotten(uid: string, atMs: number): void {
    this.#forgottenAt.set(uid, atMs);
  }

  /** Once every source has delivered, pods found in the runtime that no source wants are killed and removed. */
  housekeeping(): void {
    const { cache, podManager, workers } = this.#d;
    if (!this.#d.sourcesReady()) return;
    for (const [uid, at] of this.#forgottenAt) {
      const entry = cache.get(uid);
      if (entry === undefined || entry.timestampMs > at) this.#forgottenAt.delete(uid);
    }
    for (const uid of this.#runtimePods) {
      // A pod a source or a worker knows is no orphan: its cache entry is not decoded (every 2 s
      // for every pod, that decoding was most of a steady node's main-thread time). It stays in
      // the set until it is known no more; then its entry decides.
      if (podManager.has(uid) || workers.has(uid)) continue;
      const entry = cache.get(uid);
      if (!hasRuntimeObjects(entry)) {
        this.#runtimePods.delete(uid);
        continue;
      }
      // Removed by its worker after this entry's relist began: not an orphan (see #forgottenAt).
      if (this.#forgottenAt.has(uid)) continue;
      const pod: V1Pod = { metadata: { uid, name: entry.status.name, namespace: entry.status.namespace }, spec: { containers: [], terminationGracePeriodSeconds: ORPHAN_GRACE_PERIOD_SECONDS } };
      this.#d.logger.info('killing orphaned runtime pod', podFields(pod));
      this.#d.onOrphan?.();
      // As the kubelet (HandlePodCleanups): a 1 s grace override, logs left to garbage collection.
      workers.kill(pod, { removed: true, reason: 'orphaned', gracePeriodSeconds: ORPHAN_GRACE_PERIOD_SECONDS, keepLogs: true });
    }
  }

  /**
   * Whether anything may still need the pod's files (its log directory): a source wants it, a
   * worker has it, or the runtime still holds objects of it (the relist cache).
   */
  isPodKnown(uid: string): boolean {
    if (this.#d.podManager.has(uid) || this.#d.workers.has(uid)) return true;
    return hasRuntimeObjects(this.#d.cache.get(uid));
  }

  /**
   * The kubelet's ShouldPodContentBeRemoved for the container GC: no source wants the pod and no
   * worker holds it (its dead containers and sandboxes may all go). Meaningful once the sources
   * are ready; the GC asks only then.
   */
  isPodGone(uid: string): boolean {
    return !this.#d.podManager.has(uid) && !this.#d.workers.has(uid);
  }
}

/**
 * The relist cache shows sandboxes or containers of the pod, or cannot tell (an entry holding
 * an error: a status too large to store, a failed inspection): then the pod may hold objects,
 * and its kill lists them from the runtime (pod-sync.ts statusUnknown), never skipped.
 */
function hasRuntimeObjects(entry: CacheEntry | undefined): entry is CacheEntry {
  return entry !== undefined && (entry.error !== null || entry.status.sandboxes.length > 0 || entry.status.containers.length > 0);
}
