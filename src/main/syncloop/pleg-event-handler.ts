/**
 * What the sync loop does with PLEG output (the kubelet's HandlePodSyncs from plegCh): each
 * relist batch resyncs every pod it names, once, and tells housekeeping which pods the runtime
 * holds; the first relist to succeed after failing ones (the runtime is back) retries at once
 * the pods whose last work failed.
 */
import type { Logger } from '../../shared/logging/logger.js';
import type { PodLifecycleEvent } from '../../shared/pleg/pod-lifecycle-event.js';
import type { RuntimePodTracker } from './pod-housekeeping.js';
import type { RuntimeReturnWindow } from './runtime-return-window.js';
import type { PodWork, PodWorkerMirrors } from './pod-worker-mirrors.js';
import type { WorkQueue } from './work-queue.js';

export interface PlegEventHandlerDeps {
  logger: Logger;
  runtimePods: Pick<RuntimePodTracker, 'noteRuntimePod'>;
  workers: Pick<PodWorkerMirrors, 'entries'> & Pick<PodWork, 'resync'>;
  workQueue: Pick<WorkQueue, 'forget'>;
  /** Opened at each return: failures right after it are retried soon (runtime-return-window.ts). */
  returnWindow: Pick<RuntimeReturnWindow, 'open'>;
}

export class PlegEventHandler {
  readonly #d: PlegEventHandlerDeps;

  constructor(deps: PlegEventHandlerDeps) {
    this.#d = deps;
  }

  /** PLEG events: resync the pod (HandlePodSyncs); remember runtime pods for housekeeping. */
  handlePlegEvents(events: readonly PodLifecycleEvent[]): void {
    const touched = new Set<string>();
    for (const ev of events) {
      this.#d.runtimePods.noteRuntimePod(ev.id);
      touched.add(ev.id);
    }
    for (const uid of touched) this.#d.workers.resync(uid, { plegOnly: true });
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
    this.#d.returnWindow.open();
    let n = 0;
    for (const [uid, w] of this.#d.workers.entries()) {
      if (!w.failed) continue;
      w.failed = false;
      this.#d.workQueue.forget(uid);
      this.#d.workers.resync(uid);
      n++;
    }
    if (n > 0) this.#d.logger.info('runtime listed again: retrying pods whose last sync failed', { pods: n });
    return n;
  }
}
