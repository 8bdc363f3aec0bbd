/**
 * What a thread that does pod work calls to record metrics: pod-worker threads, the PLEG
 * thread, and the main thread itself (`--workers 0`, or main-thread metrics such as pod counts).
 * Each call is a few Float64 writes into this thread's slot of the shared metrics arena; the
 * main thread reads all slots at scrape time (src/main/metrics/metrics-aggregator.ts). No messages,
 * no awaits: recording never yields and never throws for a well-typed call.
 *
 * Wiring: the main thread creates the arena (`createMetricsArena()`) and passes `arena.buffer`
 * to every thread (Piscina `workerData`); each thread calls `createWorkerMetrics({ arena })`
 * once at startup. Label values follow the kubelet (see src/shared/metrics/kubelet-metrics.ts).
 */
import { threadId as currentThreadId } from 'node:worker_threads';
import type { SyncPodType } from '../../src/shared/protocol/pod-worker-protocol.js';
import type { ProbeResult, ProbeType } from '../../src/shared/protocol/probe-update.js';
import * as k from '../../src/shared/metrics/kubelet-metrics.js';
import * as s from '../../src/shared/metrics/shardlet-metrics.js';
import { claimSlot, createMetricsArena, openMetricsArena, type MetricsArena } from '../../src/shared/metrics/metrics-arena.js';
import { MetricsRecorder, type BoundCounter, type BoundHistogram } from '../../src/shared/metrics/metrics-recorder.js';
import { RegionWriter } from '../../src/shared/metrics/region-writer.js';

export interface WorkerMetricsOptions {
  /** The arena from the main thread (`arena.buffer` through workerData), or the arena itself on main. */
  arena: SharedArrayBuffer | MetricsArena;
  /** The `thread` label and the key the main thread retires by. Default: worker_threads threadId. */
  threadId?: number;
}

/** Container kinds of kubelet_started_containers_total (metrics.go Container/InitContainer/EphemeralContainer). */
export type ContainerType = 'container' | 'init_container' | 'ephemeral_container';

export interface ProbeObservation {
  type: ProbeType;
  result: ProbeResult;
  container: string;
  pod: string;
  namespace: string;
  podUID: string;
  /** How long the probe took; recorded for success and unknown results only, as the kubelet does. */
  seconds: number;
}

export interface WorkerMetrics {
  readonly threadId: number;
  /** False when every arena slot was taken: calls still work but nothing reaches the exposition. */
  readonly attached: boolean;
  /** Generic access to any catalogue metric (for metrics without a helper below). */
  readonly recorder: MetricsRecorder;
  /** One CRI call: `method` is the gRPC method ('RunPodSandbox') or the kubelet operation type ('run_podsandbox'). */
  runtimeOperation(method: string, seconds: number, failed?: boolean): void;
  /** RunPodSandbox latency by RuntimeClass handler ('' for the default handler, as in the kubelet). */
  runPodSandbox(runtimeHandler: string, seconds: number, failed?: boolean): void;
  podWorkerDuration(operationType: SyncPodType, seconds: number): void;
  podWorkerStartDuration(seconds: number): void;
  startedPod(failed?: boolean): void;
  /** A container start attempt; `errorCode` (e.g. 'CreateContainerError') marks a failure. */
  startedContainer(containerType: ContainerType, errorCode?: string): void;
  containersPerPod(count: number): void;
  probe(p: ProbeObservation): void;
  /** Deletes a container's prober series (call when its probe worker stops, as the kubelet does). */
  removeProbeSeries(p: Omit<ProbeObservation, 'result' | 'seconds'>): void;
  plegRelist(seconds: number, intervalSeconds?: number): void;
  /** Unix time in seconds (kubelet_pleg_last_seen_seconds). */
  plegLastSeen(unixSeconds: number): void;
  plegDiscardEvents(count: number): void;
  /** This thread's load (shardlet_thread_*{thread}). */
  threadLoad(podsOwned: number, queueDepth: number): void;
  threadBusy(seconds: number): void;
  /** A PLEG-only sync skipped (shardlet_pod_syncs_skipped_total). */
  podSyncSkipped(): void;
  /** One log line of this thread dropped (shardlet_log_lines_dropped_total). */
  logLineDropped(): void;
  /** One pod evicted (kubelet_evictions{eviction_signal}). */
  eviction(signal: string): void;
}

/** Claims this thread's slot and returns its recording API. Call once per thread. */
export function createWorkerMetrics(opts: WorkerMetricsOptions): WorkerMetrics {
  const arena = opts.arena instanceof SharedArrayBuffer ? openMetricsArena(opts.arena) : opts.arena;
  const threadId = opts.threadId ?? currentThreadId;
  const claimed = claimSlot(arena, threadId);
  // Arena full: record into a private one-slot arena so callers need no special case.
  const slot = claimed ?? (claimSlot(createMetricsArena({ slots: 1 }), threadId) as NonNullable<typeof claimed>);
  const r = new MetricsRecorder(new RegionWriter(slot));

  const memo = <T>(make: (key: string) => T): ((key: string) => T) => {
    const m = new Map<string, T>();
    return (key) => {
      let v = m.get(key);
      if (v === undefined) m.set(key, (v = make(key)));
      return v;
    };
  };
  // One entry per CRI method name (a few dozen): the label resolved and the series bound once,
  // not a regex pass and three label lookups per call.
  const opSeries = memo((method): { total: BoundCounter; errors: BoundCounter; duration: BoundHistogram } => {
    const operation_type = runtimeOperationType(method);
    return {
      total: r.counter(k.runtimeOperationsTotal).bind({ operation_type }),
      errors: r.counter(k.runtimeOperationsErrorsTotal).bind({ operation_type }),
      duration: r.histogram(k.runtimeOperationsDuration).bind({ operation_type }),
    };
  });
  const workerDuration = memo((t): BoundHistogram => r.histogram(k.podWorkerDuration).bind({ operation_type: t }));
  const thread = { thread: String(threadId) };
  const podsOwned = r.gauge(s.threadPodsOwned).bind(thread);
  const queueDepth = r.gauge(s.threadQueueDepth).bind(thread);
  const busy = r.counter(s.threadBusySeconds).bind(thread);
  const syncsSkipped = r.counter(s.podSyncsSkippedTotal).bind({});
  const probeTypeLabel = (t: ProbeType): string => PROBE_TYPE_LABEL[t];

  return {
    threadId,
    attached: claimed !== undefined,
    recorder: r,
    runtimeOperation(method, seconds, failed = false) {
      const op = opSeries(method);
      op.total.inc();
      op.duration.observe(seconds);
      if (failed) op.errors.inc();
    },
    runPodSandbox(runtimeHandler, seconds, failed = false) {
      r.histogram(k.runPodSandboxDuration).observe({ runtime_handler: runtimeHandler }, seconds);
      if (failed) r.counter(k.runPodSandboxErrorsTotal).inc({ runtime_handler: runtimeHandler });
    },
    podWorkerDuration: (t, seconds) => workerDuration(t).observe(seconds),
    podWorkerStartDuration: (seconds) => r.histogram(k.podWorkerStartDuration).observe({}, seconds),
    startedPod(failed = false) {
      r.counter(k.startedPodsTotal).inc({});
      if (failed) r.counter(k.startedPodsErrorsTotal).inc({});
    },
    startedContainer(containerType, errorCode) {
      r.counter(k.startedContainersTotal).inc({ container_type: containerType });
      if (errorCode !== undefined) r.counter(k.startedContainersErrorsTotal).inc({ container_type: containerType, code: errorCode });
    },
    containersPerPod: (count) => r.histogram(k.containersPerPodCount).observe({}, count),
    probe(p) {
      const base = { probe_type: probeTypeLabel(p.type), container: p.container, pod: p.pod, namespace: p.namespace };
      r.counter(k.proberProbeTotal).inc({ ...base, result: PROBE_RESULT_LABEL[p.result], pod_uid: p.podUID });
      if (p.result !== 'failure') r.histogram(k.proberProbeDuration).observe(base, p.seconds);
    },
    removeProbeSeries(p) {
      const base = { probe_type: probeTypeLabel(p.type), container: p.container, pod: p.pod, namespace: p.namespace };
      for (const result of Object.values(PROBE_RESULT_LABEL)) r.counter(k.proberProbeTotal).remove({ ...base, result, pod_uid: p.podUID });
      r.histogram(k.proberProbeDuration).remove(base);
    },
    plegRelist(seconds, intervalSeconds) {
      r.histogram(k.plegRelistDuration).observe({}, seconds);
      if (intervalSeconds !== undefined) r.histogram(k.plegRelistInterval).observe({}, intervalSeconds);
    },
    plegLastSeen: (unixSeconds) => r.gauge(k.plegLastSeen).set({}, unixSeconds),
    plegDiscardEvents: (count) => r.counter(k.plegDiscardEvents).inc({}, count),
    threadLoad(owned, depth) {
      podsOwned.set(owned);
      queueDepth.set(depth);
    },
    threadBusy: (seconds) => busy.inc(seconds),
    podSyncSkipped: () => syncsSkipped.inc(),
    logLineDropped: () => r.counter(s.logLinesDroppedTotal).inc({}),
    eviction: (signal) => r.counter(k.evictions).inc({ eviction_signal: signal }),
  };
}

/** The kubelet's probe_type label values (probeType.String() in prober_manager.go). */
const PROBE_TYPE_LABEL: Readonly<Record<ProbeType, string>> = Object.freeze({
  liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup',
});

/** The kubelet's result label values (probeResultSuccessful/Failed/Unknown). */
const PROBE_RESULT_LABEL: Readonly<Record<ProbeResult, string>> = Object.freeze({
  success: 'successful', failure: 'failed', unknown: 'unknown',
});

/**
 * The kubelet's operation_type for a CRI method (instrumented_services.go): snake_case, with
 * "PodSandbox" as one word: 'RunPodSandbox' → 'run_podsandbox', 'ImageFsInfo' → 'image_fs_info'.
 * A value that is already snake_case passes through.
 */
export function runtimeOperationType(method: string): string {
  return method
    .replace(/PodSandbox/g, 'Podsandbox')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();
}
