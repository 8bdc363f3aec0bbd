/**
 * The last start failure of each container (the kubelet's ReasonCache, kubelet/reason_cache.go):
 * written after each sync from its start results, read when generating the API status so a
 * container that should run but does not shows why (`state.waiting.reason`/`message`).
 *
 * Owned by one syncer on one thread; a pod's entries are dropped by `forgetPod` at cleanup.
 */
import type { StartFailureReason } from './kuberuntime-errors.js';

export interface ReasonEntry {
  reason: StartFailureReason;
  message: string;
}

/** One start attempt of a sync: a failure, or success (which clears the container's entry). */
export interface StartResult {
  containerName: string;
  failure?: ReasonEntry;
}

export class ReasonCache {
  readonly #byPod = new Map<string, Map<string, ReasonEntry>>();

  get(podUID: string, containerName: string): ReasonEntry | undefined {
    return this.#byPod.get(podUID)?.get(containerName);
  }

  /** Apply a sync's start results: failures are recorded, successes clear the entry. */
  update(podUID: string, results: readonly StartResult[]): void {
    for (const r of results) {
      if (r.failure) {
        let m = this.#byPod.get(podUID);
        if (!m) this.#byPod.set(podUID, (m = new Map()));
        m.set(r.containerName, r.failure);
      } else {
        this.remove(podUID, r.containerName);
      }
    }
  }

  remove(podUID: string, containerName: string): void {
    const m = this.#byPod.get(podUID);
    if (!m) return;
    m.delete(containerName);
    if (m.size === 0) this.#byPod.delete(podUID);
  }

  forgetPod(podUID: string): void {
    this.#byPod.delete(podUID);
  }

  get podCount(): number {
    return this.#byPod.size;
  }
}
