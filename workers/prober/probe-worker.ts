/**
 * One probe worker: periodic probing of one probe type of one container of one pod, and the
 * thresholding of its outcomes into a result (the kubelet's prober/worker.go doProbe). Ticks come
 * from the thread's {@link ProbeScheduler}; the container's current instance comes from its
 * shared {@link ContainerView}.
 *
 * Phases:
 *   idle ──tick: instance running, past initialDelaySeconds, startup gate open──▶ probing
 *   probing ──outcome──▶ idle, or ▶ held after reporting a liveness/startup failure
 *   held ──a new container instance (id)──▶ idle    (no probing of a container being killed)
 *   any ──stop()──▶ stopped (final)
 * A tick that arrives while probing is remembered (one, as Go's ticker channel) and run when the
 * outcome arrives; a manual trigger (readiness on start) while probing is dropped, since the probe
 * in flight answers it, unless that probe is of an older instance.
 *
 * Per container instance (the kubelet's behaviour unless noted):
 *   - a new instance starts at the initial result (readiness failure, liveness success, startup
 *     unknown); shardlet also resets the consecutive-result run, the kubelet carries it over;
 *   - the initial result is not sent as an update (the main thread derives "not ready / not
 *     started" from the new instance itself); every later change is;
 *   - an instance that is CREATED (not yet started) is waited for, not probed and not failed:
 *     the kubelet would mark it failed, and a stale liveness failure would get the container
 *     killed as soon as it starts;
 *   - a non-running instance (exited, unknown) is not probed and its result is failure; the
 *     worker stops if the instance exited and will not be restarted.
 */
import { PodEventReason, containerFieldPath, type PodEventRecorder } from '../kuberuntime/pod-events.js';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../src/shared/clock/clock.js';
import type { Logger } from '../../src/shared/logging/logger.js';
import type { ContainerView } from './container-view.js';
import { isProbeAborted } from './prober-errors.js';
import type { Prober, ProbeTarget } from './prober.js';
import type { ProbeOutcome } from './probe-outcome.js';
import type { ProbeResult, ProbeType, ProbeUpdate } from '../../src/shared/protocol/probe-update.js';
import type { ProbeResultsStore } from './probe-results-store.js';
import type { ProbeScheduler, ScheduledProbe } from './probe-scheduler.js';
import type { ProbeSpec } from './probe-spec.js';

/** The kubelet's prober_probe_total / prober_probe_duration_seconds observation point. */
export type ProbeMetricsHook = (type: ProbeType, result: ProbeResult, seconds: number, pod: V1Pod, container: string) => void;

/** Shared by all workers of a manager (one object, no per-worker copies). */
export interface ProbeWorkerDeps {
  readonly clock: Clock;
  readonly results: ProbeResultsStore;
  readonly prober: Prober;
  readonly scheduler: ProbeScheduler;
  readonly logger: Logger;
  readonly emit: (u: ProbeUpdate) => void;
  readonly onProbe: ProbeMetricsHook | undefined;
  /** Cluster mode: Unhealthy events (the kubelet records one per failed probe; the spam filter bounds them). */
  readonly events: PodEventRecorder | undefined;
  /** A startup probe succeeded for the view's current instance. */
  readonly onStarted: (view: ContainerView) => void;
  /** The worker stopped itself (its container exited for good). */
  readonly onFinished: (worker: ProbeWorker) => void;
  /**
   * A probe run started (`+1`) or its outcome was applied, whatever it was (`-1`): results,
   * updates and events of that run are out when `-1` comes.
   */
  readonly onRun: (delta: 1 | -1) => void;
}

export type ProbeWorkerPhase = 'idle' | 'probing' | 'held' | 'stopped';

const INITIAL_RESULT: Readonly<Record<ProbeType, ProbeResult>> = Object.freeze({
  readiness: 'failure',
  liveness: 'success',
  startup: 'unknown',
});

export class ProbeWorker implements ScheduledProbe, ProbeTarget {
  readonly type: ProbeType;
  readonly spec: ProbeSpec;
  readonly view: ContainerView;
  readonly periodMs: number;
  dueAt = 0;
  heapIndex = -1;
  triggerQueued = false;
  /** The instance this worker's results belong to ('' before the first one). */
  containerId = '';

  readonly #deps: ProbeWorkerDeps;
  readonly #abort = new AbortController();
  #phase: ProbeWorkerPhase = 'idle';
  #pendingTick = false;
  #lastResult: ProbeResult | undefined;
  #resultRun = 0;
  #probedId = '';
  #startedAt = 0;

  constructor(deps: ProbeWorkerDeps, type: ProbeType, spec: ProbeSpec, view: ContainerView) {
    this.#deps = deps;
    this.type = type;
    this.spec = spec;
    this.view = view;
    this.periodMs = spec.periodSeconds * 1000;
  }

  get phase(): ProbeWorkerPhase {
    return this.#phase;
  }

  get isStopped(): boolean {
    return this.#phase === 'stopped';
  }

  get container(): V1Container {
    return this.view.container;
  }

  get defaultHost(): string {
    return this.view.owner.probeHost;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  tick(manual: boolean): void {
    switch (this.#phase) {
      case 'stopped':
        return;
      case 'probing':
        // A manual trigger is answered by the probe in flight, unless that probe is of an older instance.
        if (!manual || this.#probedId !== this.containerId) this.#pendingTick = true;
        return;
      case 'idle':
      case 'held':
        break;
      default: {
        const never: never = this.#phase;
        throw new Error(`unknown phase ${String(never)}`);
      }
    }
    try {
      this.#doProbe();
    } catch (err: unknown) {
      this.#deps.logger.error('Probe worker tick failed', { probeType: this.type, podUID: this.view.owner.uid, containerName: this.view.name, err: String(err) });
    }
  }

  /** Move to the view's current instance: drop the old instance's result, set the initial one. */
  adopt(id: string): void {
    if (this.#phase === 'stopped' || id === this.containerId) return;
    if (this.containerId !== '') this.#deps.results.remove(this.containerId, this.type);
    this.containerId = id;
    this.#deps.results.set(id, this.type, INITIAL_RESULT[this.type]);
    this.#lastResult = undefined;
    this.#resultRun = 0;
    if (this.#phase === 'held') this.#phase = 'idle';
  }

  /** Set `result` for the current instance now and stop (readiness of a terminating pod). */
  failAndStop(): void {
    if (this.#phase === 'stopped') return;
    if (this.containerId !== '') this.#setResult('failure');
    this.stop({ keepResult: true });
  }

  /** Stop probing for good and abort an in-flight probe; drops the result unless `keepResult`. Idempotent. */
  stop(opts: { keepResult?: boolean } = {}): void {
    if (this.#phase !== 'stopped') {
      this.#phase = 'stopped';
      this.#deps.scheduler.remove(this);
      this.#abort.abort();
    }
    if (!opts.keepResult) this.dropResult();
  }

  /** Forget this worker's result for its instance (pod removed). */
  dropResult(): void {
    if (this.containerId !== '') this.#deps.results.remove(this.containerId, this.type);
  }

  #doProbe(): void {
    const v = this.view;
    if (v.state === 'none' || v.state === 'CONTAINER_CREATED') return; // wait for a started instance
    if (v.id !== this.containerId) this.adopt(v.id);
    if (this.#phase === 'held') return;
    if (v.state !== 'CONTAINER_RUNNING') {
      this.#setResult('failure');
      if (v.state === 'CONTAINER_EXITED' && !v.restartsAfterExit) this.#deps.onFinished(this);
      return;
    }
    // Truncated whole seconds since start, as the kubelet compares them.
    if (Math.trunc((this.#deps.clock.now() - v.startedAtMs) / 1000) < this.spec.initialDelaySeconds) return;
    const started = v.isStarted(this.#deps.results);
    if (this.type === 'startup' ? started : !started) return; // startup gates liveness and readiness
    this.#phase = 'probing';
    this.#probedId = this.containerId;
    this.#startedAt = this.#deps.clock.monotonic();
    this.#deps.onRun(1);
    this.#deps.prober.run(this.spec, this).then(this.#onOutcome, this.#onCrash);
  }

  readonly #onOutcome = (o: ProbeOutcome): void => {
    try {
      this.#outcome(o);
    } finally {
      this.#deps.onRun(-1);
    }
  };

  #outcome(o: ProbeOutcome): void {
    if (this.#phase === 'stopped') return;
    this.#phase = 'idle';
    // A probe of an instance that was replaced meanwhile says nothing about the new one.
    if (this.#probedId === this.containerId) this.#apply(o, (this.#deps.clock.monotonic() - this.#startedAt) / 1000);
    if (this.#pendingTick) {
      this.#pendingTick = false;
      this.tick(false);
    }
  }

  readonly #onCrash = (err: unknown): void => {
    this.#deps.logger.error('Probe crashed', { probeType: this.type, podUID: this.view.owner.uid, containerName: this.view.name, err: String(err) });
    if (this.#phase === 'probing') this.#phase = 'idle';
    this.#deps.onRun(-1);
  };

  #apply(o: ProbeOutcome, seconds: number): void {
    const d = this.#deps;
    const pod = this.view.owner.pod;
    if (o.kind === 'error') {
      // The kubelet throws an errored probe's result away: no threshold progress, no change.
      if (isProbeAborted(o.error)) return;
      d.onProbe?.(this.type, 'unknown', seconds, pod, this.view.name);
      d.logger.v(1).info('Probe errored', { probeType: this.type, podUID: this.view.owner.uid, containerName: this.view.name, code: o.error.code, err: o.error.message });
      return;
    }
    const result: ProbeResult = o.kind === 'failure' ? 'failure' : 'success';
    d.onProbe?.(this.type, result, seconds, pod, this.view.name);
    if (o.kind === 'failure') {
      d.logger.v(1).info('Probe failed', { probeType: this.type, podUID: this.view.owner.uid, containerName: this.view.name, output: o.output });
      d.events?.(pod, 'Warning', PodEventReason.Unhealthy, `${this.#kind()} probe failed: ${o.output}`.slice(0, 1024), containerFieldPath(pod, this.view.name));
    } else if (o.kind === 'warning') {
      // The kubelet's prober.go: a warning (an HTTP redirect to another host, not followed) is a
      // success for the thresholds, and a Warning event "ProbeWarning" on every such probe (the
      // recorder's dedupe and spam filter bound the repeats, as for Unhealthy).
      d.logger.v(3).info('Probe succeeded with a warning', { probeType: this.type, podUID: this.view.owner.uid, containerName: this.view.name, output: o.output });
      d.events?.(pod, 'Warning', PodEventReason.ProbeWarning, `${this.#kind()} probe warning: ${o.output}`.slice(0, 1024), containerFieldPath(pod, this.view.name));
    }
    if (this.#lastResult === result) this.#resultRun++;
    else {
      this.#lastResult = result;
      this.#resultRun = 1;
    }
    if ((result === 'failure' && this.#resultRun < this.spec.failureThreshold) ||
        (result === 'success' && this.#resultRun < this.spec.successThreshold)) {
      return; // below threshold: the stored result stays as it is
    }
    this.#setResult(result);
    if (result === 'failure' && this.type !== 'readiness') {
      // The runtime logic will kill this instance; do not probe it again (kubelet #21751).
      this.#phase = 'held';
      this.#resultRun = 0;
    }
  }

  /** The kubelet's probeType string in event messages: "Liveness", "Readiness", "Startup". */
  #kind(): string {
    return `${this.type[0]!.toUpperCase()}${this.type.slice(1)}`;
  }

  #setResult(result: ProbeResult): void {
    const id = this.containerId;
    if (!this.#deps.results.set(id, this.type, result)) return;
    this.#deps.emit({ podUID: this.view.owner.uid, containerId: id, containerName: this.view.name, type: this.type, result });
    if (this.type === 'startup' && result === 'success') this.#deps.onStarted(this.view);
  }
}
