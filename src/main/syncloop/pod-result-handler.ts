/**
 * What the pod workers report back: each PodResult moves the pod's mirror (syncing →
 * terminating → terminated → forgotten), feeds the status manager, and requeues the pod; a
 * replaced worker thread gets every pod of its shard again.
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { cacheNow } from '../../shared/pod-cache/pod-cache.js';
import type { PodResultMessage } from '../../shared/protocol/pod-worker-protocol.js';
import { shardOf } from '../dispatch/shard-table.js';
import type { PodManager } from '../pod-manager/pod-manager.js';
import type { StatusManager } from '../status/status-manager.js';
import type { PodAdditions } from './pod-config-handler.js';
import type { RuntimePodTracker } from './pod-housekeeping.js';
import type { PodWork, PodWorkerMirrors } from './pod-worker-mirrors.js';
import type { RuntimeReturnWindow } from './runtime-return-window.js';
import type { WorkQueue } from './work-queue.js';

export interface PodResultHandlerDeps {
  clock: Clock;
  logger: Logger;
  workers: Pick<PodWorkerMirrors, 'get' | 'entries' | 'forget' | 'deactivate' | 'noteStopped'> & Pick<PodWork, 'send' | 'sendKill'>;
  podManager: Pick<PodManager, 'get' | 'has'>;
  statusManager: Pick<StatusManager, 'setStatus' | 'podTerminated' | 'remove' | 'get'>;
  workQueue: Pick<WorkQueue, 'forget' | 'enqueue'>;
  /** A pod re-added during its kill is admitted again once its worker forgot it. */
  additions: PodAdditions;
  runtimePods: Pick<RuntimePodTracker, 'noteForgotten'>;
  /** A failure right after the runtime came back is retried soon, not after its backoff. */
  returnWindow: Pick<RuntimeReturnWindow, 'failedRequeueMs'>;
}

export class PodResultHandler {
  readonly #d: PodResultHandlerDeps;

  constructor(deps: PodResultHandlerDeps) {
    this.#d = deps;
  }

  handlePodResult(msg: PodResultMessage): void {
    const { workers, statusManager, workQueue } = this.#d;
    const w = workers.get(msg.uid);
    if (!w) return;
    w.state = msg.state;
    w.failed = msg.error !== undefined;
    if (w.state !== 'syncing') workers.deactivate(w);
    // A pod waiting to restart shows its restart-pending status, not its dying instance's status.
    if (msg.apiStatus && w.restartRequested !== true) statusManager.setStatus(w.pod, msg.apiStatus, msg.imagePullWindow);
    if (msg.state === 'terminated') {
      statusManager.podTerminated(w.pod);
      workers.noteStopped(msg.uid);
    }
    if (msg.forgotten) {
      workers.forget(msg.uid);
      if (msg.forgottenAtMs !== undefined) this.#d.runtimePods.noteForgotten(msg.uid, msg.forgottenAtMs);
      workQueue.forget(msg.uid);
      const again = w.restartRequested === true ? this.#d.podManager.get(msg.uid) : undefined;
      if (again !== undefined) {
        statusManager.remove(msg.uid);
        this.#d.additions.handleAdditions([again]);
      } else if (!this.#d.podManager.has(msg.uid)) statusManager.remove(msg.uid);
      return;
    }
    if (msg.requeueAfterMs !== undefined) {
      const delay = msg.error !== undefined ? this.#d.returnWindow.failedRequeueMs(msg.requeueAfterMs) : msg.requeueAfterMs;
      workQueue.enqueue(msg.uid, this.#d.clock.monotonic(), delay);
    }
  }

  /**
   * A replaced worker thread starts empty: resend every pod of its shard. Their first sync waits
   * for a relist that started after now (statusNotBeforeMs): the dead thread's last actions may
   * not be in the cache yet, and acting on an older status would repeat them.
   */
  handleShardRestarted(shard: number, shards: number): void {
    const { workers, statusManager } = this.#d;
    let n = 0;
    const statusNotBeforeMs = cacheNow(this.#d.clock);
    for (const [uid, w] of workers.entries()) {
      if (shardOf(uid, shards) !== shard) continue;
      n++;
      // The new thread knows nothing of the pod: carry the reported status over (startTime,
      // transition times; activeDeadlineSeconds counts from that startTime).
      const prev = statusManager.get(uid);
      const previousStatus = prev === undefined ? {} : { previousStatus: prev };
      if (w.kill) workers.sendKill(uid, w.pod, w.kill, { statusNotBeforeMs, ...previousStatus });
      else workers.send(w.pod, 'create', { statusNotBeforeMs, ...previousStatus });
    }
    this.#d.logger.info('re-dispatched pods of a restarted worker thread', { shard, pods: n });
  }
}
