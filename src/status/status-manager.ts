/**
 * The latest API status of each pod, as computed by its pod worker (or by admission for a
 * rejected pod). Main thread only. Serves /pods and records pod start latency: the first time
 * a pod is reported Running, it logs "pod running" with seenToRunningMs (manifest first seen →
 * running in the agent's status) and calls the onPodRunning hook (kubelet_pod_start_duration_seconds).
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { Clock } from '../clock/clock.js';
import { ConfigFirstSeenAnnotationKey } from '../kubetypes/kubelet-labels.js';
import type { Logger } from '../logging/logger.js';
import { podFields } from '../logging/logger.js';

export interface StatusManagerDeps {
  clock: Clock;
  logger: Logger;
  onPodRunning?: (pod: V1Pod, seenToRunningSeconds: number) => void;
}

interface StatusRecord {
  status: V1PodStatus;
  /** Set once the pod was first reported Running. */
  runningSeen: boolean;
}

export class StatusManager {
  readonly #d: StatusManagerDeps;
  readonly #statuses = new Map<string, StatusRecord>();

  constructor(deps: StatusManagerDeps) {
    this.#d = deps;
  }

  setStatus(pod: V1Pod, status: V1PodStatus): void {
    const uid = pod.metadata?.uid ?? '';
    let rec = this.#statuses.get(uid);
    if (!rec) this.#statuses.set(uid, (rec = { status, runningSeen: false }));
    rec.status = status;
    if (!rec.runningSeen && status.phase === 'Running') {
      rec.runningSeen = true;
      const seen = Date.parse(pod.metadata?.annotations?.[ConfigFirstSeenAnnotationKey] ?? '');
      const seenToRunningMs = Number.isFinite(seen) ? Math.max(0, this.#d.clock.now() - seen) : -1;
      this.#d.logger.v(2).info('pod running', { ...podFields(pod), seenToRunningMs });
      if (seenToRunningMs >= 0) this.#d.onPodRunning?.(pod, seenToRunningMs / 1000);
    }
  }

  get(uid: string): V1PodStatus | undefined {
    return this.#statuses.get(uid)?.status;
  }

  remove(uid: string): void {
    this.#statuses.delete(uid);
  }

  /** The pods with their current status (a v1 PodList's items). */
  podsWithStatus(pods: Iterable<V1Pod>): V1Pod[] {
    const out: V1Pod[] = [];
    for (const pod of pods) {
      const status = this.#statuses.get(pod.metadata?.uid ?? '')?.status ?? pod.status ?? { phase: 'Pending' };
      out.push({ ...pod, status });
    }
    return out;
  }
}
