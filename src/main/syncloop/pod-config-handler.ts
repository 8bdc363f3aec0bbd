/**
 * Config updates from the sources (the kubelet's HandlePodAdditions, HandlePodUpdates,
 * HandlePodRemoves and the DELETE of graceful deletion): desired state in the pod manager,
 * admission of new pods, and the work each change means for the pod's worker. Main thread only;
 * never calls the runtime.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logging/logger.js';
import { podFields } from '../../shared/logging/logger.js';
import type { PodUpdate } from '../../shared/manifest/pod-update.js';
import type { PodManager } from '../pod-manager/pod-manager.js';
import type { StatusManager } from '../status/status-manager.js';
import type { PodAdmitter } from './pod-admitter.js';
import type { PodWorkerMirrors } from './pod-worker-mirrors.js';
import { readinessGatesChanged } from './readiness-gates.js';
import type { WorkQueue } from './work-queue.js';

/** Role: admit and start pods (also used when a pod re-added during its kill may start again). */
export interface PodAdditions {
  handleAdditions(pods: readonly V1Pod[]): void;
}

export interface PodConfigHandlerDeps {
  logger: Logger;
  podManager: Pick<PodManager, 'addOrUpdate' | 'remove'>;
  statusManager: Pick<StatusManager, 'setStatus' | 'remove'>;
  workQueue: Pick<WorkQueue, 'forget'>;
  admitter: PodAdmitter;
  workers: Pick<PodWorkerMirrors, 'get' | 'active' | 'startAdmitted' | 'kill' | 'send' | 'sendKill'>;
  onPodStarted?: (pod: V1Pod) => void;
  onPodRejected?: (pod: V1Pod, reason: string, message: string) => void;
}

/** The status of a pod re-added while an earlier instance (same uid) is still being killed. */
const RESTART_PENDING_STATUS = Object.freeze({
  phase: 'Pending',
  reason: 'Terminating',
  message: 'the pod was removed and added again while it was being killed; it starts again once the kill completes',
});

export class PodConfigHandler implements PodAdditions {
  readonly #d: PodConfigHandlerDeps;

  constructor(deps: PodConfigHandlerDeps) {
    this.#d = deps;
  }

  handleConfigUpdate(u: PodUpdate): void {
    switch (u.op) {
      case 'ADD':
        this.handleAdditions(u.pods);
        return;
      case 'UPDATE':
        for (const pod of u.pods) this.#handleUpdate(pod);
        return;
      case 'DELETE':
        // Graceful deletion requested: terminate with the deletion grace; the pod stays desired
        // (and listed) until its source REMOVEs it.
        for (const pod of u.pods) {
          this.#d.podManager.addOrUpdate(pod);
          const w = this.#d.workers.get(pod.metadata?.uid ?? '');
          if (w) w.pod = pod; // carries the deletionTimestamp the status manager acts on
          this.#d.workers.kill(pod, { removed: false, reason: 'deleted', ...graceOverride(pod) });
        }
        return;
      case 'REMOVE':
        for (const pod of u.pods) this.#handleRemove(pod);
        return;
      case 'RECONCILE':
        // Only the status differs from the source's view; the status manager owns status, but the
        // pod's readiness gates are read from it (the kubelet's HandlePodReconcile).
        for (const pod of u.pods) this.#handleReconcile(pod);
        return;
      default: {
        const never: never = u.op;
        throw new Error(`unknown pod operation ${String(never)}`);
      }
    }
  }

  /** Additions in creation order, each admitted against the pods admitted before it. */
  handleAdditions(pods: readonly V1Pod[]): void {
    const workers = this.#d.workers;
    const sorted = [...pods].sort((a, b) => creationMs(a) - creationMs(b));
    for (const pod of sorted) {
      const uid = pod.metadata?.uid ?? '';
      this.#d.podManager.addOrUpdate(pod);
      const existing = workers.get(uid);
      if (existing?.kill?.removed === true) {
        existing.restartRequested = true;
        this.#d.logger.info('pod added again while being killed; it will start again once the kill completes', podFields(pod));
        this.#d.statusManager.setStatus(pod, { ...RESTART_PENDING_STATUS });
        continue;
      }
      if (existing) {
        workers.send(pod, 'update');
        continue;
      }
      if (pod.metadata?.deletionTimestamp) {
        // Deleted while this agent was away (or before it ever ran the pod): never admitted,
        // only terminated — whatever the runtime still holds of it is stopped, then the status
        // manager writes the terminal status and finishes the deletion.
        workers.kill(pod, { removed: false, reason: 'deleted', terminateUnknown: true, ...graceOverride(pod) });
        continue;
      }
      if (isTerminalPhase(pod)) {
        // Already Succeeded/Failed in the API when first seen (the agent restarted after the pod
        // finished, or another writer ended it): never admitted or started again, as the kubelet's
        // pod workers treat a pod that is terminal in its config source. Whatever the runtime
        // still holds of it is stopped; no status goes back (the status sync keeps terminal phases).
        this.#d.logger.v(2).info('pod already terminal: not admitted', { ...podFields(pod), phase: pod.status?.phase ?? '' });
        workers.kill(pod, { removed: false, reason: 'terminal', terminateUnknown: true });
        continue;
      }
      const verdict = this.#d.admitter.admit(pod, workers.active);
      if (!verdict.admit) {
        this.#d.logger.error('pod rejected by admission', { ...podFields(pod), reason: verdict.reason, message: verdict.message });
        // The kubelet's rejectPod: a Warning event, and the status message prefixed "Pod was rejected: ".
        this.#d.onPodRejected?.(pod, verdict.reason, verdict.message);
        this.#d.statusManager.setStatus(pod, { phase: 'Failed', reason: verdict.reason, message: `Pod was rejected: ${verdict.message}` });
        continue;
      }
      this.#d.logger.v(2).info('pod admitted', podFields(pod));
      this.#d.onPodStarted?.(pod);
      workers.startAdmitted(pod);
    }
  }

  #handleUpdate(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    this.#d.podManager.addOrUpdate(pod);
    const w = this.#d.workers.get(uid);
    if (!w) return; // rejected pods are never synced
    w.pod = pod;
    if (pod.metadata?.deletionTimestamp) this.#d.workers.kill(pod, { removed: false, reason: 'deleted', ...graceOverride(pod) });
    // Being terminated (a terminal pod, a pod already killed): an update never resumes syncing.
    else if (w.kill) this.#d.workers.sendKill(uid, pod, w.kill);
    else this.#d.workers.send(pod, 'update');
  }

  /** A status-only change: kept as the desired pod; a readiness gate's change syncs its worker. */
  #handleReconcile(pod: V1Pod): void {
    this.#d.podManager.addOrUpdate(pod);
    const w = this.#d.workers.get(pod.metadata?.uid ?? '');
    if (!w) return;
    const before = w.pod;
    w.pod = pod;
    if (!w.kill && readinessGatesChanged(before, pod)) this.#d.workers.send(pod, 'sync');
  }

  #handleRemove(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    this.#d.podManager.remove(uid);
    this.#d.workQueue.forget(uid);
    const w = this.#d.workers.get(uid);
    if (w) w.restartRequested = false;
    if (w) this.#d.workers.kill(pod, { removed: true, reason: 'removed from source' });
    else this.#d.statusManager.remove(uid);
  }
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
