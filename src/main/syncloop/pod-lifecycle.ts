/**
 * The sync loop's handlers for each kind of input, kept apart from the loop mechanics in
 * sync-loop.ts, each concern in its own module behind small role interfaces:
 *   pod-worker-mirrors.ts   the main-side mirror of each pod worker, admission's active view,
 *                           and the only sender of work to the dispatcher (PodWork)
 *   pod-config-handler.ts   source updates: ADD (admission) / UPDATE / DELETE / REMOVE
 *   pleg-event-handler.ts   PLEG batches and the runtime coming back
 *   runtime-return-window.ts  failures right after the runtime came back: retried soon
 *   pod-result-handler.ts   pod workers' results and restarted shards
 *   pod-housekeeping.ts     runtime pods no source wants (orphans), pod files still needed
 * This class builds them over one set of dependencies and is what the sync loop, the agent and
 * the tests hold. Main thread only: they update desired state and hand work to the dispatcher;
 * they never call the runtime.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { PodUpdate } from '../../shared/manifest/pod-update.js';
import type { PodLifecycleEvent } from '../../shared/pleg/pod-lifecycle-event.js';
import type { CacheEntry } from '../../shared/pod-cache/pod-cache.js';
import type { KillOptions, PodResultMessage } from '../../shared/protocol/pod-worker-protocol.js';
import type { PodDispatcher } from '../dispatch/pod-dispatcher.js';
import type { PodManager } from '../pod-manager/pod-manager.js';
import type { StatusManager } from '../status/status-manager.js';
import type { PodAdmitter } from './pod-admitter.js';
import { PodConfigHandler } from './pod-config-handler.js';
import { PodHousekeeping } from './pod-housekeeping.js';
import { PlegEventHandler } from './pleg-event-handler.js';
import { PodResultHandler } from './pod-result-handler.js';
import { PodWorkerMirrors, type WorkingPodCount } from './pod-worker-mirrors.js';
import { RuntimeReturnWindow } from './runtime-return-window.js';
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
  /** A pod refused at admission (the kubelet's rejectPod records a Warning event with the reason). */
  onPodRejected?: (pod: V1Pod, reason: string, message: string) => void;
  /**
   * Why the pod network is not ready (the runtime's NetworkReady=false), or undefined. Stamped
   * on every sync handed to a worker (PodUpdateMessage.networkNotReady): the syncer then holds
   * back pods that are not host-network, as the kubelet's syncPod does.
   */
  networkError?: () => string | undefined;
}

export class PodLifecycle {
  readonly #clock: Clock;
  readonly #workQueue: WorkQueue;
  readonly #workers: PodWorkerMirrors;
  readonly #config: PodConfigHandler;
  readonly #housekeeping: PodHousekeeping;
  readonly #pleg: PlegEventHandler;
  readonly #results: PodResultHandler;

  constructor(d: PodLifecycleDeps) {
    const { clock, logger, podManager, statusManager, workQueue } = d;
    this.#clock = clock;
    this.#workQueue = workQueue;
    const workers = (this.#workers = new PodWorkerMirrors({ logger, dispatcher: d.dispatcher, podManager, ...(d.networkError ? { networkError: d.networkError } : {}) }));
    this.#config = new PodConfigHandler({ logger, podManager, statusManager, workQueue, admitter: d.admitter, workers, ...(d.onPodStarted ? { onPodStarted: d.onPodStarted } : {}), ...(d.onPodRejected ? { onPodRejected: d.onPodRejected } : {}) });
    const housekeeping = (this.#housekeeping = new PodHousekeeping({ logger, sourcesReady: d.sourcesReady, cache: d.cache, podManager, workers, ...(d.onOrphan ? { onOrphan: d.onOrphan } : {}) }));
    const returnWindow = new RuntimeReturnWindow(clock);
    this.#pleg = new PlegEventHandler({ logger, runtimePods: housekeeping, workers, workQueue, returnWindow });
    this.#results = new PodResultHandler({ clock, logger, workers, podManager, statusManager, workQueue, additions: this.#config, runtimePods: housekeeping, returnWindow });
  }

  handleConfigUpdate(u: PodUpdate): void {
    this.#config.handleConfigUpdate(u);
  }

  handlePlegEvents(events: readonly PodLifecycleEvent[]): void {
    this.#pleg.handlePlegEvents(events);
  }

  /** See PlegEventHandler.handleRuntimeReturned. Returns how many pods were retried. */
  handleRuntimeReturned(): number {
    return this.#pleg.handleRuntimeReturned();
  }

  /** See PodWorkerMirrors.resync (probe updates, PLEG, due work). */
  resync(uid: string): void {
    this.#workers.resync(uid);
  }

  /** The 1 s sync tick: pods whose requeue time has come. */
  syncDue(): void {
    for (const uid of this.#workQueue.takeDue(this.#clock.monotonic())) this.#workers.resync(uid);
  }

  handlePodResult(msg: PodResultMessage): void {
    this.#results.handlePodResult(msg);
  }

  handleShardRestarted(shard: number, shards: number): void {
    this.#results.handleShardRestarted(shard, shards);
  }

  /** Housekeeping (every 2 s, like the kubelet's HandlePodCleanups): see PodHousekeeping. */
  housekeeping(): void {
    this.#housekeeping.housekeeping();
  }

  /**
   * Kill an active pod for good with the status the node gives it (node-pressure eviction: phase
   * Failed, reason Evicted); `gracePeriodSeconds` may only shorten the pod's own.
   */
  evict(pod: V1Pod, gracePeriodSeconds: number, status: { reason: string; message: string }): void {
    this.#workers.kill(pod, { removed: false, reason: 'evicted', gracePeriodSeconds, terminalStatus: status });
  }

  isPodKnown(uid: string): boolean {
    return this.#housekeeping.isPodKnown(uid);
  }

  /** No source wants the pod and no worker holds it (the container GC's "pod is gone"). */
  isPodGone(uid: string): boolean {
    return this.#housekeeping.isPodGone(uid);
  }

  /** Admitted pods not yet terminal or terminating (what admission counts). */
  activePods(): V1Pod[] {
    return this.#workers.activePods();
  }

  /**
   * Kill a pod on the node's own account (graceful node shutdown): it stops counting for
   * admission and terminates with the kill's grace period and terminal status.
   */
  killPod(pod: V1Pod, kill: KillOptions): void {
    this.#workers.kill(pod, kill);
  }

  /** See PodWorkerMirrors.whenStopped. */
  whenStopped(uid: string): Promise<void> {
    return this.#workers.whenStopped(uid);
  }

  /** Counts for kubelet_desired_pods and kubelet_working_pods{lifecycle,config,static}. */
  counts(): { desired: { static: number; other: number }; working: WorkingPodCount[] } {
    return this.#workers.counts();
  }
}
