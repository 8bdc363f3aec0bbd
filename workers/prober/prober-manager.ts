/**
 * The prober of one thread (the kubelet's prober.Manager): liveness, readiness and startup probe
 * workers for the pods hashed onto this worker thread (or all pods inline with --workers 0).
 *
 * Who calls what, all on this thread:
 *   - the pod loop calls `addPod` when it starts syncing a pod (again on each pod update: the
 *     object is refreshed, probe specs are not: the kubelet does not support changing them
 *     either), `markTerminating` when the pod starts terminating, `removePod` when it is gone;
 *   - the runtime logic calls `updatePodStatus` with each fresh runtime status (so workers learn
 *     container ids, states, start times and the pod IP) *before* it reads `results`,
 *     `isStarted` and `isReady` to build container statuses and decide kills;
 *   - every result change goes to `onUpdate` (the thread protocol forwards it to the main
 *     thread's sync loop, as the kubelet's liveness/readiness/startup update channels).
 *
 * Timing: one worker per (pod, container, probe type), ticking every periodSeconds on the
 * shared {@link ProbeScheduler}; the first tick of each worker is at a random offset within its
 * period (injected Random). The kubelet jitters only while it has just started; shardlet always
 * does, so that pods created together on a dense node do not probe in lockstep.
 *
 * Divergences from the kubelet, on purpose: the readiness probe of a container is triggered
 * immediately once per instance when it becomes started (the kubelet re-triggers it on every
 * status update while unready, which at density is a probe storm); a terminating pod's readiness
 * is set to failure and stops (the kubelet ≥1.26 keeps probing readiness while terminating).
 */
import type { PodEventRecorder } from '../kuberuntime/pod-events.js';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Clock, Random } from '../../src/shared/clock/clock.js';
import { silentLogger, type Logger } from '../../src/shared/logging/logger.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { ContainerView, nsToMs, type PodProbeState } from './container-view.js';
import { createProber, type Prober } from './prober.js';
import type { ProbeType, ProbeUpdate } from '../../src/shared/protocol/probe-update.js';
import type { ProbeResultsReader } from './probe-results.js';
import { ProbeResultsStore } from './probe-results-store.js';
import { ProbeScheduler } from './probe-scheduler.js';
import { DEFAULT_PROBE_USER_AGENT, normalizeProbe } from './probe-spec.js';
import { ProbeWorker, type ProbeMetricsHook, type ProbeWorkerDeps } from './probe-worker.js';
import type { ExecRuntime } from './probers/exec-probe.js';

export interface ProberManagerDeps {
  /** The thread's CRI client (only ExecSync is used). */
  runtime: ExecRuntime;
  clock: Clock;
  random: Random;
  /** Every result change, for the main thread's sync loop. Must not throw. */
  onUpdate: (u: ProbeUpdate) => void;
  /** prober_probe_total / prober_probe_duration_seconds. */
  onProbe?: ProbeMetricsHook;
  /** Cluster mode: pod events (Unhealthy). */
  events?: PodEventRecorder;
  /** A probe worker stopped for good (pod removed or terminating, container exited for good): drop its metric series, as the kubelet does. */
  onWorkerStopped?: (type: ProbeType, pod: V1Pod, container: string) => void;
  logger?: Logger;
  /** Probed for host-network pods when the probe names no host (the kubelet uses the node IP). Default 127.0.0.1. */
  hostIP?: string;
  /** HTTP and gRPC probe User-Agent. Default kube-probe/1.31. */
  userAgent?: string;
  /** See ProbeScheduler. Default 0. */
  batchWindowMs?: number;
  /**
   * Observer: the number of probe runs in flight changed (a run started, or its outcome was
   * applied: its result, update and event are out). Tests await "every run done or parked".
   */
  onProbesInFlight?: (running: number) => void;
  /** Replaces the probe runner (tests). */
  prober?: Prober;
}

const PROBE_TYPES: readonly ProbeType[] = Object.freeze(['startup', 'readiness', 'liveness']);

function probeOf(c: V1Container, type: ProbeType): V1Container['livenessProbe'] {
  switch (type) {
    case 'liveness': return c.livenessProbe;
    case 'readiness': return c.readinessProbe;
    case 'startup': return c.startupProbe;
    default: {
      const never: never = type;
      return never;
    }
  }
}

export class ProberManager {
  readonly #results = new ProbeResultsStore();
  readonly #scheduler: ProbeScheduler;
  readonly #deps: ProbeWorkerDeps;
  /** Probe runs started and not yet applied (onProbesInFlight). */
  #running = 0;
  readonly #random: Random;
  readonly #hostIP: string;
  readonly #userAgent: string;
  readonly #pods = new Map<string, PodProbeState>();
  /** Current instance id → its view (only the latest instance of each probed container). */
  readonly #byContainerId = new Map<string, ContainerView>();
  readonly #onUpdate: (u: ProbeUpdate) => void;
  readonly #logger: Logger;
  readonly #onWorkerStopped: ((type: ProbeType, pod: V1Pod, container: string) => void) | undefined;
  #round = 0;
  #workerCount = 0;
  #closed = false;

  constructor(deps: ProberManagerDeps) {
    for (const k of ['runtime', 'clock', 'random', 'onUpdate'] as const) {
      if (!deps[k]) throw new TypeError(`ProberManager: ${k} is required`);
    }
    this.#random = deps.random;
    this.#hostIP = deps.hostIP ?? '127.0.0.1';
    this.#userAgent = deps.userAgent ?? DEFAULT_PROBE_USER_AGENT;
    this.#onUpdate = deps.onUpdate;
    this.#logger = deps.logger ?? silentLogger;
    this.#onWorkerStopped = deps.onWorkerStopped;
    this.#scheduler = new ProbeScheduler({ clock: deps.clock, ...(deps.batchWindowMs !== undefined ? { batchWindowMs: deps.batchWindowMs } : {}) });
    const prober = deps.prober ?? createProber({ runtime: deps.runtime, clock: deps.clock, userAgent: this.#userAgent });
    this.#deps = Object.freeze({
      clock: deps.clock,
      results: this.#results,
      prober,
      scheduler: this.#scheduler,
      logger: this.#logger,
      emit: this.#emit,
      onProbe: deps.onProbe,
      events: deps.events,
      onStarted: (view: ContainerView) => this.#triggerReadiness(view),
      onFinished: (w: ProbeWorker) => this.#finish(w),
      onRun: (delta: 1 | -1) => {
        this.#running += delta;
        deps.onProbesInFlight?.(this.#running);
      },
    });
  }

  /** The latest result per container instance and probe type ('unknown' when none). */
  get results(): ProbeResultsReader {
    return this.#results;
  }

  /** Callback given at construction for result changes. */
  get onUpdate(): (u: ProbeUpdate) => void {
    return this.#onUpdate;
  }

  /** Number of live probe workers on this thread. */
  get workerCount(): number {
    return this.#workerCount;
  }

  /** Start probe workers for the pod's probed containers (and sidecars); refresh the pod object if known. */
  addPod(pod: V1Pod): void {
    if (this.#closed) return;
    const uid = pod.metadata?.uid ?? '';
    if (uid === '') {
      this.#logger.error('Prober: pod without uid ignored', { pod: `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}` });
      return;
    }
    const known = this.#pods.get(uid);
    if (known) {
      known.pod = pod;
    } else {
      const state = this.#createPodState(uid, pod);
      if (state.views.length === 0) return; // nothing to probe: keep no state for this pod
      this.#pods.set(uid, state);
    }
    if (pod.metadata?.deletionTimestamp !== undefined) this.markTerminating(uid);
  }

  /**
   * Learn the pod's current container instances (newest first per name), their states and start
   * times, and the pod IP. A new instance resets its workers' results at once.
   */
  updatePodStatus(uid: string, status: RuntimePodStatus): void {
    const ps = this.#pods.get(uid);
    if (ps === undefined) return;
    const hostNetwork = status.sandboxes[0]?.hostNetwork ?? ps.pod.spec?.hostNetwork ?? false;
    ps.probeHost = hostNetwork ? this.#hostIP : (status.ips[0] ?? '');
    const round = ++this.#round;
    for (const c of status.containers) {
      const view = ps.views.find((v) => v.name === c.name);
      if (view === undefined || view.seenRound === round) continue; // not probed, or an older instance
      view.seenRound = round;
      if (view.id !== c.id) {
        if (view.id !== '') this.#byContainerId.delete(view.id);
        view.id = c.id;
        this.#byContainerId.set(c.id, view);
        view.startup?.adopt(c.id);
        view.readiness?.adopt(c.id);
        view.liveness?.adopt(c.id);
      }
      view.state = c.state;
      view.startedAtMs = nsToMs(c.startedAtNs);
    }
    for (const view of ps.views) this.#triggerReadiness(view);
  }

  /**
   * The pod is terminating: stop liveness and startup probing (the kubelet's
   * StopLivenessAndStartup) and set readiness to failure. The liveness result is dropped (no
   * kill decisions on a pod being stopped anyway); the startup result is kept so a started
   * container still reads as started (the kubelet gets there by treating "no startup worker" as
   * started). Idempotent.
   */
  markTerminating(uid: string): void {
    const ps = this.#pods.get(uid);
    if (ps === undefined || ps.terminating) return;
    ps.terminating = true;
    for (const v of ps.views) {
      this.#stopWorker(v.liveness);
      this.#stopWorker(v.startup, { keepResult: true });
      if (v.readiness && !v.readiness.isStopped) {
        v.readiness.failAndStop();
        this.#stopped(v.readiness);
      }
    }
  }

  /** Stop the pod's workers and forget its results. Idempotent. */
  removePod(uid: string): void {
    const ps = this.#pods.get(uid);
    if (ps === undefined) return;
    this.#pods.delete(uid);
    for (const v of ps.views) {
      this.#stopWorker(v.liveness);
      this.#stopWorker(v.startup);
      this.#stopWorker(v.readiness);
      if (v.id !== '') this.#byContainerId.delete(v.id);
    }
  }

  /**
   * Whether startup probing lets this container instance count as started: true unless it has an
   * active startup probe that has not succeeded for this instance. Callers also require the
   * container to be running (the kubelet's isContainerStarted does both). Ids the prober does not
   * track (no probes, or not yet given to updatePodStatus) have no startup gate.
   */
  isStarted(containerId: string): boolean {
    const view = this.#byContainerId.get(containerId);
    if (view === undefined || view.startup === undefined || view.startup.isStopped) return true;
    return this.#results.get(containerId, 'startup') === 'success';
  }

  /**
   * The kubelet's readiness rule for a running container: started, not terminating, and either no
   * readiness probe or its result is success. Callers also require the container to be running.
   */
  isReady(containerId: string): boolean {
    const view = this.#byContainerId.get(containerId);
    if (view === undefined) return true;
    if (view.owner.terminating || !this.isStarted(containerId)) return false;
    if (view.readiness === undefined) return true;
    return this.#results.get(containerId, 'readiness') === 'success';
  }

  /** Stop every worker and the scheduler; results are dropped. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const uid of [...this.#pods.keys()]) this.removePod(uid);
    this.#scheduler.close();
  }

  #createPodState(uid: string, pod: V1Pod): PodProbeState {
    const spec = pod.spec;
    const state: PodProbeState = { uid, pod, probeHost: spec?.hostNetwork ? this.#hostIP : '', terminating: false, views: [] };
    const sidecars = (spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
    for (const c of [...(spec?.containers ?? []), ...sidecars]) {
      if (!c.livenessProbe && !c.readinessProbe && !c.startupProbe) continue;
      const view = new ContainerView(state, c, spec?.restartPolicy);
      for (const type of PROBE_TYPES) {
        const probe = probeOf(c, type);
        if (!probe) continue;
        const w = new ProbeWorker(this.#deps, type, normalizeProbe(probe, type, this.#userAgent), view);
        view[type] = w;
        this.#workerCount++;
        this.#scheduler.add(w, this.#random() * w.periodMs);
      }
      state.views.push(view);
    }
    return state;
  }

  /** Once per started instance, probe readiness now rather than at the next tick. */
  #triggerReadiness(view: ContainerView): void {
    const w = view.readiness;
    if (w === undefined || w.isStopped || view.owner.terminating) return;
    if (view.readinessTriggeredFor === view.id || !view.isStarted(this.#results)) return;
    if (this.#results.get(view.id, 'readiness') === 'success') return;
    view.readinessTriggeredFor = view.id;
    this.#scheduler.trigger(w);
  }

  #stopWorker(w: ProbeWorker | undefined, opts: { keepResult?: boolean } = {}): void {
    if (w === undefined) return;
    const wasRunning = !w.isStopped;
    w.stop(opts);
    if (wasRunning) this.#stopped(w);
  }

  /** Bookkeeping for a worker that just stopped. */
  #stopped(w: ProbeWorker): void {
    this.#workerCount--;
    try {
      this.#onWorkerStopped?.(w.type, w.view.owner.pod, w.view.name);
    } catch (err: unknown) {
      this.#logger.error('Prober: onWorkerStopped threw', { podUID: w.view.owner.uid, containerName: w.view.name, err: String(err) });
    }
  }

  #finish(w: ProbeWorker): void {
    this.#stopWorker(w);
  }

  readonly #emit = (u: ProbeUpdate): void => {
    try {
      this.#onUpdate(u);
    } catch (err: unknown) {
      this.#logger.error('Prober: onUpdate threw', { podUID: u.podUID, containerName: u.containerName, err: String(err) });
    }
  };
}
