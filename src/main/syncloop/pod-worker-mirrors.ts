/**
 * The main side's mirror of each pod worker, and the only place that hands work to the
 * dispatcher. From PodResult messages it tracks which pods were handed to a worker and where they
 * are in syncing → terminating → terminated, so admission counts active pods, a crashed thread's
 * shard can be re-sent, and housekeeping knows which runtime pods are orphans.
 *
 * Invariants:
 *  - a mirror exists from the first work sent for a pod (create or kill) until its worker reports
 *    it forgotten (forget());
 *  - once a mirror has `kill`, every later message for the pod is that kill (a kill pre-empts and
 *    is never replaced by a sync: the pod worker never revives a terminating pod);
 *  - admission's view (`active`) is the number and summed requests of the mirrors with
 *    `requests` set, kept incrementally so admitting N pods costs O(N), not O(N²).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logging/logger.js';
import { podFields } from '../../shared/logging/logger.js';
import type { KillOptions, PodUpdateMessage, PodWorkerState } from '../../shared/protocol/pod-worker-protocol.js';
import { podRequests, ZERO_RESOURCES, type ResourceAmounts } from '../../shared/resources/pod-requests.js';
import type { PodDispatcher } from '../dispatch/pod-dispatcher.js';
import type { PodManager } from '../pod-manager/pod-manager.js';
import { isStaticPod } from '../pod-manager/pod-manager.js';
import type { ActiveUsage } from './pod-admitter.js';

export interface WorkerMirror {
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

/** Extra fields a create/update/sync may carry (after a thread restart; a PLEG-only sync). */
export type SendExtra = Pick<PodUpdateMessage, 'statusNotBeforeMs' | 'previousStatus' | 'plegOnly'>;

/** Role: hand work for one pod to its worker. */
export interface PodWork {
  /** A create, update or sync for a pod that is not being killed. */
  send(pod: V1Pod, updateType: 'create' | 'update' | 'sync', extra?: SendExtra): void;
  /** Kill the pod (creating its mirror if it has none); it stops counting for admission. */
  kill(pod: V1Pod, kill: KillOptions): void;
  /** Send a pod's kill (again): `kill` is its mirror's. */
  sendKill(uid: string, pod: V1Pod, kill: KillOptions, extra?: SendExtra): void;
  /**
   * A killed pod gets its kill again; a desired pod gets a sync (`plegOnly`: sent only because
   * the PLEG saw its runtime objects change); a pod without a worker nothing.
   */
  resync(uid: string, opts?: { plegOnly?: boolean }): void;
}

/** Role: which pods have a worker, read-only. */
export interface WorkerPresence {
  has(uid: string): boolean;
}

export interface WorkingPodCount {
  lifecycle: 'sync' | 'terminating' | 'terminated';
  config: 'desired' | 'orphan';
  isStatic: boolean;
  count: number;
}

export interface PodWorkerMirrorsDeps {
  logger: Logger;
  dispatcher: PodDispatcher;
  podManager: Pick<PodManager, 'get' | 'has' | 'pods'>;
  /** Why the pod network is not ready, stamped on every sync (see PodLifecycleDeps.networkError). */
  networkError?: () => string | undefined;
}

export class PodWorkerMirrors implements PodWork, WorkerPresence {
  readonly #d: PodWorkerMirrorsDeps;
  /** Pods handed to a worker and not yet forgotten by it. */
  readonly #mirrors = new Map<string, WorkerMirror>();
  /** Admission's view (see the module invariants). */
  readonly #active: { count: number; used: ResourceAmounts } = { count: 0, used: { ...ZERO_RESOURCES } };
  /** whenStopped() waiters per pod; woken (and dropped) when its worker reports it terminated or forgets it. */
  readonly #stopWaiters = new Map<string, Array<() => void>>();

  constructor(deps: PodWorkerMirrorsDeps) {
    this.#d = deps;
  }

  get(uid: string): WorkerMirror | undefined {
    return this.#mirrors.get(uid);
  }

  has(uid: string): boolean {
    return this.#mirrors.has(uid);
  }

  entries(): IterableIterator<[string, WorkerMirror]> {
    return this.#mirrors.entries();
  }

  /** The worker forgot the pod. */
  forget(uid: string): void {
    this.#mirrors.delete(uid);
    this.noteStopped(uid);
  }

  /**
   * Resolves once the pod's worker has reported it terminated (its containers and sandbox
   * stopped) or forgotten it; at once when it already is, or has no worker. The graceful node
   * shutdown waits on it (the kubelet's TerminatePodAbnormallyAndWait).
   */
  whenStopped(uid: string): Promise<void> {
    const w = this.#mirrors.get(uid);
    if (w === undefined || w.state === 'terminated') return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.#stopWaiters.get(uid);
      if (list) list.push(resolve);
      else this.#stopWaiters.set(uid, [resolve]);
    });
  }

  /** The worker reported the pod terminated (or forgot it): wake its whenStopped() waiters. */
  noteStopped(uid: string): void {
    const list = this.#stopWaiters.get(uid);
    if (list === undefined) return;
    this.#stopWaiters.delete(uid);
    for (const resolve of list) resolve();
  }

  /** What admission counts: the admitted, still active pods. */
  get active(): ActiveUsage {
    return this.#active;
  }

  /** An admitted pod: its mirror (syncing, counted as active) and its first sync. */
  startAdmitted(pod: V1Pod): void {
    const mirror: WorkerMirror = { pod, state: 'syncing' };
    this.#mirrors.set(pod.metadata?.uid ?? '', mirror);
    this.#activate(mirror);
    this.send(pod, 'create');
  }

  kill(pod: V1Pod, kill: KillOptions): void {
    const uid = pod.metadata?.uid ?? '';
    let w = this.#mirrors.get(uid);
    if (!w) this.#mirrors.set(uid, (w = { pod, state: 'syncing' }));
    const terminalStatus = w.kill?.terminalStatus ?? kill.terminalStatus;
    w.kill = w.kill ? { ...kill, removed: w.kill.removed || kill.removed, ...(terminalStatus ? { terminalStatus } : {}) } : kill;
    this.deactivate(w);
    this.#d.logger.v(2).info('killing pod', { ...podFields(pod), reason: kill.reason });
    this.#d.dispatcher.send({ kind: 'update', uid, updateType: 'kill', pod, kill: w.kill });
  }

  send(pod: V1Pod, updateType: 'create' | 'update' | 'sync', extra: SendExtra = {}): void {
    const networkNotReady = this.#d.networkError?.();
    this.#d.dispatcher.send({ kind: 'update', uid: pod.metadata?.uid ?? '', updateType, pod, ...extra, ...(networkNotReady !== undefined ? { networkNotReady } : {}) });
  }

  sendKill(uid: string, pod: V1Pod, kill: KillOptions, extra: SendExtra = {}): void {
    this.#d.dispatcher.send({ kind: 'update', uid, updateType: 'kill', pod, kill, ...extra });
  }

  /**
   * Resync one pod that has a worker (probe updates, PLEG, due work): a pod being killed gets
   * its kill again, whether or not a source still wants it (a removed pod whose termination or
   * cleanup failed, e.g. its log directory could not be removed, stays with its worker until
   * the retry succeeds: the error backoff requeues it here); a desired pod gets a sync.
   */
  resync(uid: string, opts: { plegOnly?: boolean } = {}): void {
    const w = this.#mirrors.get(uid);
    if (!w) return;
    if (w.kill) {
      this.sendKill(uid, w.pod, w.kill);
      return;
    }
    const pod = this.#d.podManager.get(uid);
    if (pod) this.send(pod, 'sync', opts.plegOnly === true ? { plegOnly: true } : {});
  }

  #activate(w: WorkerMirror): void {
    const r = podRequests(w.pod);
    w.requests = r;
    this.#active.count++;
    this.#active.used.cpuMillis += r.cpuMillis;
    this.#active.used.memoryBytes += r.memoryBytes;
    this.#active.used.ephemeralStorageBytes += r.ephemeralStorageBytes;
  }

  /** The pod no longer counts for admission (killed, terminating or finished). Idempotent. */
  deactivate(w: WorkerMirror): void {
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
    for (const w of this.#mirrors.values()) if (w.requests) out.push(w.pod);
    return out;
  }

  /** Counts for kubelet_desired_pods and kubelet_working_pods{lifecycle,config,static}. */
  counts(): { desired: { static: number; other: number }; working: WorkingPodCount[] } {
    const podManager = this.#d.podManager;
    let st = 0;
    let other = 0;
    for (const p of podManager.pods()) (isStaticPod(p) ? st++ : other++);
    const working = new Map<string, WorkingPodCount>();
    for (const lifecycle of ['sync', 'terminating', 'terminated'] as const) {
      for (const config of ['desired', 'orphan'] as const) {
        for (const isStatic of [true, false]) working.set(`${lifecycle}|${config}|${isStatic}`, { lifecycle, config, isStatic, count: 0 });
      }
    }
    for (const [uid, w] of this.#mirrors) {
      const lifecycle = w.state === 'syncing' ? 'sync' : w.state;
      // The kubelet's "orphan": a pod worker whose pod is no longer in the config.
      const config = podManager.has(uid) ? 'desired' : 'orphan';
      working.get(`${lifecycle}|${config}|${isStaticPod(w.pod)}`)!.count++;
    }
    return { desired: { static: st, other }, working: [...working.values()] };
  }
}
