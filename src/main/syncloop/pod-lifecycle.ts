/**
 * The sync loop's handlers for each kind of input (the kubelet's HandlePodAdditions,
 * HandlePodUpdates, HandlePodRemoves, HandlePodSyncs and housekeeping), kept apart from the
 * loop mechanics in sync-loop.ts. Main thread only: they update desired state and hand work to
 * the dispatcher; they never call the runtime.
 *
 * Main-side mirror of each pod worker (from PodResult messages): `#workerState` tracks which
 * pods were handed to a worker and where they are in syncing → terminating → terminated, so
 * admission counts active pods, a crashed thread's shard can be re-sent, and housekeeping
 * knows which runtime pods are orphans.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../shared/clock/clock.js';
import { cacheNow, type CacheEntry } from '../../shared/pod-cache/pod-cache.js';
import type { PodUpdate } from '../../shared/manifest/pod-update.js';
import type { Logger } from '../../shared/logging/logger.js';
import { podFields } from '../../shared/logging/logger.js';
import type { PodDispatcher } from '../dispatch/pod-dispatcher.js';
import { shardOf } from '../dispatch/shard-table.js';
import type { PodManager } from '../pod-manager/pod-manager.js';
import { isStaticPod } from '../pod-manager/pod-manager.js';
import type { StatusManager } from '../status/status-manager.js';
import type { KillOptions, PodResultMessage, PodUpdateMessage, PodWorkerState } from '../../shared/protocol/pod-worker-protocol.js';
import { podRequests, ZERO_RESOURCES, type ResourceAmounts } from '../admission/pod-requests.js';
import type { PodAdmitter } from './pod-admitter.js';
import type { PodLifecycleEvent } from '../../shared/pleg/pod-lifecycle-event.js';
import type { WorkQueue } from './work-queue.js';

export interface PodLifecycleDeps {
  clock: Clock;
  logger: Logger;
  dispatcher: PodDispatcher;
  podManager: PodManager;
  statusManager: StatusManager;
  workQueue: WorkQueue;
  admitter: PodAdmitter;
  sourcesReady: () => boolean;
  /** Read-only view of the runtime (the SharedArrayBuffer cache) for housekeeping. */
  cache: { get(uid: string): CacheEntry | undefined };
  onOrphan?: () => void;
  onPodStarted?: (pod: V1Pod) => void;
  /**
   * Why the pod network is not ready (the runtime's NetworkReady=false), or undefined. Stamped
   * on every sync handed to a worker (PodUpdateMessage.networkNotReady): the syncer then holds
   * back pods that are not host-network, as the kubelet's syncPod does.
   */
  networkError?: () => string | undefined;
}

interface WorkerMirror {
  pod: V1Pod;
  state: PodWorkerState;
  /** The pod's requests while it counts as active for admission (admitted, not killed, not finished). */
  requests?: ResourceAmounts;
  /** Set once a kill was sent; re-sent after a thread restart. */
  kill?: KillOptions;
  /** The worker's last result carried an error (it waits out the error backoff). */
  failed?: boolean;
  /**
   * The source added the pod again (same uid) while it was being killed after a removal, e.g. a
   * manifest deleted and written back within the grace period. A pod worker never revives a
   * terminating pod (the kubelet's rule), so the pod starts afresh once the worker forgets it
   * (the kubelet's restartRequested); until then its status says so, never "Running".
   */
  restartRequested?: boolean;
}

/** The status of a pod re-added while an earlier instance (same uid) is still being killed. */
const RESTART_PENDING_STATUS = Object.freeze({
  phase: 'Pending',
  reason: 'Terminating',
  message: 'the pod was removed and added again while it was being killed; it starts again once the kill completes',
});

export class PodLifecycle {
  readonly #d: PodLifecycleDeps;
  /** Pods handed to a worker and not yet forgotten by it. */
  readonly #workerState = new Map<string, WorkerMirror>();
  /** Pod UIDs seen in the runtime (from PLEG events), with names for orphan kills. */
  readonly #runtimePods = new Set<string>();
  /**
   * Pods a worker forgot after removing their objects, with the pod-cache time it did so
   * (PodResultMessage.forgottenAtMs). Until the cache shows the pod at a later time, or not at
   * all, its entry is a relist's view from before the removal (the PLEG may store it after the
   * worker dropped the entry), not an orphan. Pruned by housekeeping once the entry is gone.
   */
  readonly #forgottenAt = new Map<string, number>();
  /**
   * Admission's view, kept incrementally so admitting N pods costs O(N), not O(N²):
   * invariant: count/used are the number and summed requests of mirrors with `requests` set.
   */
  readonly #active: { count: number; used: ResourceAmounts } = { count: 0, used: { ...ZERO_RESOURCES } };

  constructor(deps: PodLifecycleDeps) {
    this.#d = deps;
  }

  handleConfigUpdate(u: PodUpdate): void {
    switch (u.op) {
      case 'ADD':
        this.#handleAdditions(u.pods);
        return;
      case 'UPDATE':
        for (const pod of u.pods) this.#handleUpdate(pod);
        return;
      case 'DELETE':
        // Graceful deletion requested: terminate with the deletion grace; the pod stays desired
        // (and listed) until its source REMOVEs it.
        for (const pod of u.pods) {
          this.#d.podManager.addOrUpdate(pod);
          const w = this.#workerState.get(pod.metadata?.uid ?? '');
          if (w) w.pod = pod; // carries the deletionTimestamp the status manager acts on
          this.#kill(pod, { removed: false, reason: 'deleted', ...graceOverride(pod) });
        }
        return;
      case 'REMOVE':
        for (const pod of u.pods) this.#handleRemove(pod);
        return;
      case 'RECONCILE':
        // Only the status differs from the source's view; the status manager owns status.
        return;
      default: {
        const never: never = u.op;
        throw new Error(`unknown pod operation ${String(never)}`);
      }
    }
  }

  /** Additions in creation order, each admitted against the pods admitted before it. */
  #handleAdditions(pods: V1Pod[]): void {
    const sorted = [...pods].sort((a, b) => creationMs(a) - creationMs(b));
    for (const pod of sorted) {
      const uid = pod.metadata?.uid ?? '';
      this.#d.podManager.addOrUpdate(pod);
      const existing = this.#workerState.get(uid);
      if (existing?.kill?.removed === true) {
        existing.restartRequested = true;
        this.#d.logger.info('pod added again while being killed; it will start again once the kill completes', podFields(pod));
        this.#d.statusManager.setStatus(pod, { ...RESTART_PENDING_STATUS });
        continue;
      }
      if (existing) {
        this.#send(pod, 'update');
        continue;
      }
      if (pod.metadata?.deletionTimestamp) {
        // Deleted while this agent was away (or before it ever ran the pod): never admitted,
        // only terminated — whatever the runtime still holds of it is stopped, then the status
        // manager writes the terminal status and finishes the deletion.
        this.#kill(pod, { removed: false, reason: 'deleted', terminateUnknown: true, ...graceOverride(pod) });
        continue;
      }
      if (isTerminalPhase(pod)) {
        // Already Succeeded/Failed in the API when first seen (the agent restarted after the pod
        // finished, or another writer ended it): never admitted or started again, as the kubelet's
        // pod workers treat a pod that is terminal in its config source. Whatever the runtime
        // still holds of it is stopped; no status goes back (the status sync keeps terminal phases).
        this.#d.logger.v(2).info('pod already terminal: not admitted', { ...podFields(pod), phase: pod.status?.phase ?? '' });
        this.#kill(pod, { removed: false, reason: 'terminal', terminateUnknown: true });
        continue;
      }
      const verdict = this.#d.admitter.admit(pod, this.#active);
      if (!verdict.admit) {
        this.#d.logger.error('pod rejected by admission', { ...podFields(pod), reason: verdict.reason, message: verdict.message });
        this.#d.statusManager.setStatus(pod, { phase: 'Failed', reason: verdict.reason, message: verdict.message });
        continue;
      }
      this.#d.logger.v(2).info('pod admitted', podFields(pod));
      this.#d.onPodStarted?.(pod);
      const mirror: WorkerMirror = { pod, state: 'syncing' };
      this.#workerState.set(uid, mirror);
      this.#activate(mirror);
      this.#send(pod, 'create');
    }
  }

  #handleUpdate(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    this.#d.podManager.addOrUpdate(pod);
    const w = this.#workerState.get(uid);
    if (!w) return; // rejected pods are never synced
    w.pod = pod;
    if (pod.metadata?.deletionTimestamp) this.#kill(pod, { removed: false, reason: 'deleted', ...graceOverride(pod) });
    // Being terminated (a terminal pod, a pod already killed): an update never resumes syncing.
    else if (w.kill) this.#d.dispatcher.send({ kind: 'update', uid, updateType: 'kill', pod, kill: w.kill });
    else this.#send(pod, 'update');
  }

  #handleRemove(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    this.#d.podManager.remove(uid);
    this.#d.workQueue.forget(uid);
    const w = this.#workerState.get(uid);
    if (w) w.restartRequested = false;
    if (w) this.#kill(pod, { removed: true, reason: 'removed from source' });
    else this.#d.statusManager.remove(uid);
  }

  #kill(pod: V1Pod, kill: KillOptions): void {
    const uid = pod.metadata?.uid ?? '';
    let w = this.#workerState.get(uid);
    if (!w) this.#workerState.set(uid, (w = { pod, state: 'syncing' }));
    w.kill = w.kill ? { ...kill, removed: w.kill.removed || kill.removed } : kill;
    this.#deactivate(w);
    this.#d.logger.v(2).info('killing pod', { ...podFields(pod), reason: kill.reason });
    this.#d.dispatcher.send({ kind: 'update', uid, updateType: 'kill', pod, kill: w.kill });
  }

  #send(pod: V1Pod, updateType: 'create' | 'update' | 'sync', extra: Pick<PodUpdateMessage, 'statusNotBeforeMs' | 'previousStatus'> = {}): void {
    const networkNotReady = this.#d.networkError?.();
    this.#d.dispatcher.send({ kind: 'update', uid: pod.metadata?.uid ?? '', updateType, pod, ...extra, ...(networkNotReady !== undefined ? { networkNotReady } : {}) });
  }

  /** PLEG events: resync the pod (HandlePodSyncs); remember runtime pods for housekeeping. */
  handlePlegEvents(events: readonly PodLifecycleEvent[]): void {
    const touched = new Set<string>();
    for (const ev of events) {
      this.#runtimePods.add(ev.id);
      touched.add(ev.id);
    }
    for (const uid of touched) this.resync(uid);
  }

  /**
   * The PLEG lists the runtime again after relists that could not (a runtime restart): pods
   * whose last work failed are retried now, not after their 10 s error backoff. Their failure
   * most likely was the runtime going away, and the relist's own events only bring back pods
   * that had runtime objects (a pod whose first sandbox was being created has none). Bounded:
   * once per outage, one sync per pod; a pod failing for its own reasons fails again and goes
   * back to the backoff. Returns how many pods were retried.
   */
  handleRuntimeReturned(): number {
    let n = 0;
    for (const [uid, w] of this.#workerState) {
      if (!w.failed) continue;
      w.failed = false;
      this.#d.workQueue.forget(uid);
      this.resync(uid);
      n++;
    }
    if (n > 0) this.#d.logger.info('runtime listed again: retrying pods whose last sync failed', { pods: n });
    return n;
  }

  /**
   * Resync one pod that has a worker (probe updates, PLEG, due work): a pod being killed gets
   * its kill again, whether or not a source still wants it (a removed pod whose termination or
   * cleanup failed, e.g. its log directory could not be removed, stays with its worker until
   * the retry succeeds: the error backoff requeues it here); a desired pod gets a sync.
   */
  resync(uid: string): void {
    const w = this.#workerState.get(uid);
    if (!w) return;
    if (w.kill) {
      this.#d.dispatcher.send({ kind: 'update', uid, updateType: 'kill', pod: w.pod, kill: w.kill });
      return;
    }
    const pod = this.#d.podManager.get(uid);
    if (pod) this.#send(pod, 'sync');
  }

  /** The 1 s sync tick: pods whose requeue time has come. */
  syncDue(): void {
    for (const uid of this.#d.workQueue.takeDue(this.#d.clock.monotonic())) this.resync(uid);
  }

  handlePodResult(msg: PodResultMessage): void {
    const w = this.#workerState.get(msg.uid);
    if (!w) return;
    w.state = msg.state;
    w.failed = msg.error !== undefined;
    if (w.state !== 'syncing') this.#deactivate(w);
    // A pod waiting to restart shows RESTART_PENDING_STATUS, not its dying instance's status.
    if (msg.apiStatus && w.restartRequested !== true) this.#d.statusManager.setStatus(w.pod, msg.apiStatus, msg.imagePullWindow);
    if (msg.state === 'terminated') this.#d.statusManager.podTerminated(w.pod);
    if (msg.forgotten) {
      this.#workerState.delete(msg.uid);
      if (msg.forgottenAtMs !== undefined) this.#forgottenAt.set(msg.uid, msg.forgottenAtMs);
      this.#d.workQueue.forget(msg.uid);
      const again = w.restartRequested === true ? this.#d.podManager.get(msg.uid) : undefined;
      if (again !== undefined) {
        this.#d.statusManager.remove(msg.uid);
        this.#handleAdditions([again]);
      } else if (!this.#d.podManager.has(msg.uid)) this.#d.statusManager.remove(msg.uid);
      return;
    }
    if (msg.requeueAfterMs !== undefined) this.#d.workQueue.enqueue(msg.uid, this.#d.clock.monotonic(), msg.requeueAfterMs);
  }

  /**
   * A replaced worker thread starts empty: resend every pod of its shard. Their first sync waits
   * for a relist that started after now (statusNotBeforeMs): the dead thread's last actions may
   * not be in the cache yet, and acting on an older status would repeat them.
   */
  handleShardRestarted(shard: number, shards: number): void {
    let n = 0;
    const statusNotBeforeMs = cacheNow(this.#d.clock);
    for (const [uid, w] of this.#workerState) {
      if (shardOf(uid, shards) !== shard) continue;
      n++;
      // The new thread knows nothing of the pod: carry the reported status over (startTime,
      // transition times; activeDeadlineSeconds counts from that startTime).
      const prev = this.#d.statusManager.get(uid);
      const previousStatus = prev === undefined ? {} : { previousStatus: prev };
      if (w.kill) this.#d.dispatcher.send({ kind: 'update', uid, updateType: 'kill', pod: w.pod, kill: w.kill, statusNotBeforeMs, ...previousStatus });
      else this.#send(w.pod, 'create', { statusNotBeforeMs, ...previousStatus });
    }
    this.#d.logger.info('re-dispatched pods of a restarted worker thread', { shard, pods: n });
  }

  /**
   * Housekeeping (every 2 s, like the kubelet's HandlePodCleanups): once every source has
   * delivered, pods found in the runtime that no source wants are killed and removed.
   */
  housekeeping(): void {
    if (!this.#d.sourcesReady()) return;
    for (const [uid, at] of this.#forgottenAt) {
      const entry = this.#d.cache.get(uid);
      if (entry === undefined || entry.timestampMs > at) this.#forgottenAt.delete(uid);
    }
    for (const uid of this.#runtimePods) {
      const entry = this.#d.cache.get(uid);
      const present = entry !== undefined && (entry.status.sandboxes.length > 0 || entry.status.containers.length > 0);
      if (!present) {
        if (!this.#workerState.has(uid)) this.#runtimePods.delete(uid);
        continue;
      }
      if (this.#d.podManager.has(uid) || this.#workerState.has(uid)) continue;
      // Removed by its worker after this entry's relist began: not an orphan (see #forgottenAt).
      if (this.#forgottenAt.has(uid)) continue;
      const pod: V1Pod = { metadata: { uid, name: entry.status.name, namespace: entry.status.namespace }, spec: { containers: [], terminationGracePeriodSeconds: ORPHAN_GRACE_PERIOD_SECONDS } };
      this.#d.logger.info('killing orphaned runtime pod', podFields(pod));
      this.#d.onOrphan?.();
      // As the kubelet (HandlePodCleanups): a 1 s grace override, logs left to garbage collection.
      this.#kill(pod, { removed: true, reason: 'orphaned', gracePeriodSeconds: ORPHAN_GRACE_PERIOD_SECONDS, keepLogs: true });
    }
  }

  /**
   * Whether anything may still need the pod's files (its log directory): a source wants it, a
   * worker has it, or the runtime still holds objects of it (the relist cache).
   */
  isPodKnown(uid: string): boolean {
    if (this.#d.podManager.has(uid) || this.#workerState.has(uid)) return true;
    const entry = this.#d.cache.get(uid);
    return entry !== undefined && (entry.status.sandboxes.length > 0 || entry.status.containers.length > 0);
  }

  #activate(w: WorkerMirror): void {
    const r = podRequests(w.pod);
    w.requests = r;
    this.#active.count++;
    this.#active.used.cpuMillis += r.cpuMillis;
    this.#active.used.memoryBytes += r.memoryBytes;
    this.#active.used.ephemeralStorageBytes += r.ephemeralStorageBytes;
  }

  #deactivate(w: WorkerMirror): void {
    const r = w.requests;
    if (!r) return;
    delete w.requests;
    this.#active.count--;
    this.#active.used.cpuMillis -= r.cpuMillis;
    this.#active.used.memoryBytes -= r.memoryBytes;
    this.#active.used.ephemeralStorageBytes -= r.ephemeralStorageBytes;
  }

  /** Admitted pods not yet terminal or terminating (what admission counts). */
  activePods(): V1Pod[] {
    const out: V1Pod[] = [];
    for (const w of this.#workerState.values()) if (w.requests) out.push(w.pod);
    return out;
  }

  /** Counts for kubelet_desired_pods and kubelet_working_pods{lifecycle,config,static}. */
  counts(): { desired: { static: number; other: number }; working: WorkingPodCount[] } {
    let st = 0;
    let other = 0;
    for (const p of this.#d.podManager.pods()) (isStaticPod(p) ? st++ : other++);
    const working = new Map<string, WorkingPodCount>();
    for (const lifecycle of ['sync', 'terminating', 'terminated'] as const) {
      for (const config of ['desired', 'orphan'] as const) {
        for (const isStatic of [true, false]) working.set(`${lifecycle}|${config}|${isStatic}`, { lifecycle, config, isStatic, count: 0 });
      }
    }
    for (const [uid, w] of this.#workerState) {
      const lifecycle = w.state === 'syncing' ? 'sync' : w.state;
      // The kubelet's "orphan": a pod worker whose pod is no longer in the config.
      const config = this.#d.podManager.has(uid) ? 'desired' : 'orphan';
      working.get(`${lifecycle}|${config}|${isStaticPod(w.pod)}`)!.count++;
    }
    return { desired: { static: st, other }, working: [...working.values()] };
  }
}

/** The kubelet kills runtime pods no source knows with this grace override (HandlePodCleanups). */
export const ORPHAN_GRACE_PERIOD_SECONDS = 1;

export interface WorkingPodCount {
  lifecycle: 'sync' | 'terminating' | 'terminated';
  config: 'desired' | 'orphan';
  isStatic: boolean;
  count: number;
}

function creationMs(pod: V1Pod): number {
  const t = pod.metadata?.creationTimestamp as unknown;
  const ms = t instanceof Date ? t.getTime() : typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : 0;
}

/** The pod's status, as its source delivered it, is Succeeded or Failed. */
function isTerminalPhase(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

function graceOverride(pod: V1Pod): { gracePeriodSeconds?: number } {
  const g = pod.metadata?.deletionGracePeriodSeconds;
  return g === undefined || g === null ? {} : { gracePeriodSeconds: g };
}
