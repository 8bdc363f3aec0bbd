/**
 * What the prober knows about a pod and its probed containers, refreshed by
 * ProberManager.updatePodStatus from the runtime status. One {@link ContainerView} per probed
 * container name, shared by that container's (up to three) probe workers and mutated in place,
 * so a status update allocates nothing for containers it has seen before.
 *
 * Ownership: written only by the prober manager; read by probe workers; all on one thread.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { ContainerState } from '../../src/shared/cri/cri-types.js';
import type { ProbeResultsStore } from './probe-results-store.js';
import type { ProbeWorker } from './probe-worker.js';

export interface PodProbeState {
  readonly uid: string;
  /** The latest pod object given to addPod (its deletionTimestamp, labels for metrics). */
  pod: V1Pod;
  /** Where HTTP/TCP/gRPC probes go when the probe names no host: pod IP, or the host IP for host-network pods. */
  probeHost: string;
  /** Set by markTerminating: readiness is failure, liveness and startup stopped. */
  terminating: boolean;
  readonly views: ContainerView[];
}

/** `'none'` until the runtime reports an instance of the container. */
export type ViewState = ContainerState | 'none';

export class ContainerView {
  readonly owner: PodProbeState;
  readonly container: V1Container;
  /** Whether an exited instance will be replaced (restart policy is not Never). */
  readonly restartsAfterExit: boolean;
  /** CRI id of the latest instance ('' until one is seen). */
  id = '';
  state: ViewState = 'none';
  /** Wall-clock ms the latest instance started (0 if not started). */
  startedAtMs = 0;
  liveness: ProbeWorker | undefined;
  readiness: ProbeWorker | undefined;
  startup: ProbeWorker | undefined;
  /** Instance for which an immediate readiness probe was already triggered on start. */
  readinessTriggeredFor = '';
  /** The updatePodStatus round that last saw an instance of this container (newest wins). */
  seenRound = 0;

  constructor(owner: PodProbeState, container: V1Container, podRestartPolicy: string | undefined) {
    this.owner = owner;
    this.container = container;
    this.restartsAfterExit = (container.restartPolicy ?? podRestartPolicy ?? 'Always') !== 'Never';
  }

  get name(): string {
    return this.container.name;
  }

  /**
   * The kubelet's isContainerStarted: running, and either the startup probe succeeded for this
   * instance or there is no (active) startup probe.
   */
  isStarted(results: ProbeResultsStore): boolean {
    if (this.state !== 'CONTAINER_RUNNING') return false;
    if (this.startup === undefined || this.startup.isStopped) return true;
    return results.get(this.id, 'startup') === 'success';
  }
}

/** CRI nanoseconds as a decimal string → ms (0 stays 0). Sub-ms precision is irrelevant here. */
export function nsToMs(ns: string): number {
  const n = Number(ns);
  return Number.isFinite(n) ? n / 1e6 : 0;
}
