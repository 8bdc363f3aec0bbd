/**
 * The main thread's metrics: the one object the agent's main entry creates. It owns the arena,
 * the aggregator (what /metrics calls), the main thread's own slot (threadId 0) with typed
 * handles for what the pod manager and sync loop observe, and the event-loop delay sampler.
 *
 *   const metrics = createMetricsSystem();
 *   pool = new Piscina({ workerData: { metricsArena: metrics.arena.buffer, ... } });
 *   pool.on('workerDestroy', (w) => metrics.aggregator.retireThread(w.threadId)); // after exit
 *   createAgentServer({ metrics: metrics.aggregator, ... });
 *   metrics.main.runningPods.set(n);  // or refresh in metrics.aggregator.onCollect(...)
 */
import * as k from '../../shared/metrics/kubelet-metrics.js';
import * as s from '../../shared/metrics/shardlet-metrics.js';
import { claimSlot, createMetricsArena, type ArenaOptions, type MetricsArena } from '../../shared/metrics/metrics-arena.js';
import { MetricsAggregator } from './metrics-aggregator.js';
import { MetricsRecorder, type BoundCounter, type BoundGauge, type BoundHistogram } from '../../shared/metrics/metrics-recorder.js';
import { RegionWriter } from '../../shared/metrics/region-writer.js';
import { startEventLoopDelayMonitor, type EventLoopDelayMonitor } from './event-loop-delay.js';
import { MetricsError } from '../../shared/metrics/metrics-errors.js';

/** kubecontainer.State values used as container_state. */
export type ContainerStateLabel = 'created' | 'running' | 'exited' | 'unknown';
/** The kubelet's working_pods labels (pod_workers.go). */
export type WorkingPodLifecycle = 'sync' | 'terminating' | 'terminated';
export type WorkingPodConfig = 'desired' | 'orphan' | 'runtime_only';

export interface MainMetrics {
  readonly recorder: MetricsRecorder;
  readonly runningPods: BoundGauge;
  runningContainers(state: ContainerStateLabel): BoundGauge;
  desiredPods(isStatic: boolean): BoundGauge;
  activePods(isStatic: boolean): BoundGauge;
  workingPods(lifecycle: WorkingPodLifecycle, config: WorkingPodConfig, isStatic: boolean): BoundGauge;
  readonly orphanedRuntimePods: BoundCounter;
  readonly podStartDuration: BoundHistogram;
  readonly podStartSliDuration: BoundHistogram;
  readonly syncLoopIteration: BoundHistogram;
  readonly threadRestarts: BoundCounter;
  readonly cacheSlotsUsed: BoundGauge;
  readonly cacheSlotsCapacity: BoundGauge;
  readonly cacheFull: BoundCounter;
  readonly cacheOversize: BoundCounter;
  readonly cacheTrimmed: BoundCounter;
  readonly cacheUnstored: BoundGauge;
}

export interface MetricsSystemOptions {
  arena?: ArenaOptions;
  /** prom-client default process metrics on the main thread. Default true. */
  processMetrics?: boolean;
  /** Sample main-thread event-loop delay. Default true. */
  eventLoopDelay?: boolean;
}

export interface MetricsSystem {
  readonly arena: MetricsArena;
  readonly aggregator: MetricsAggregator;
  readonly main: MainMetrics;
  /** Stops the event-loop sampler; idempotent. */
  close(): void;
}

/** The main thread's threadId in worker_threads, and its `thread` label. */
export const MAIN_THREAD_ID = 0;

export function createMetricsSystem(opts: MetricsSystemOptions = {}): MetricsSystem {
  const arena = createMetricsArena(opts.arena);
  const aggregator = new MetricsAggregator({ arena, processMetrics: opts.processMetrics ?? true });
  const slot = claimSlot(arena, MAIN_THREAD_ID);
  if (slot === undefined) throw new MetricsError('ERR_METRICS_BAD_OPTION', 'metrics arena: no slot for the main thread');
  const recorder = new MetricsRecorder(new RegionWriter(slot));
  const main = mainMetricsOf(recorder);
  let monitor: EventLoopDelayMonitor | undefined;
  let unhook: (() => void) | undefined;
  if (opts.eventLoopDelay ?? true) {
    const m = startEventLoopDelayMonitor(recorder);
    monitor = m;
    unhook = aggregator.onCollect(() => m.sample());
  }
  return {
    arena,
    aggregator,
    main,
    close() {
      unhook?.();
      monitor?.stop();
    },
  };
}

/** Typed main-thread handles over a recorder (exported for tests and inline setups). */
export function mainMetricsOf(r: MetricsRecorder): MainMetrics {
  const str = (b: boolean): string => (b ? 'true' : 'false');
  return {
    recorder: r,
    runningPods: r.gauge(k.runningPods).bind({}),
    runningContainers: (state) => r.gauge(k.runningContainers).bind({ container_state: state }),
    desiredPods: (isStatic) => r.gauge(k.desiredPods).bind({ static: str(isStatic) }),
    activePods: (isStatic) => r.gauge(k.activePods).bind({ static: str(isStatic) }),
    workingPods: (lifecycle, config, isStatic) => r.gauge(k.workingPods).bind({ lifecycle, config, static: str(isStatic) }),
    orphanedRuntimePods: r.counter(k.orphanedRuntimePodsTotal).bind({}),
    podStartDuration: r.histogram(k.podStartDuration).bind({}),
    podStartSliDuration: r.histogram(k.podStartSliDuration).bind({}),
    syncLoopIteration: r.histogram(s.syncLoopIterationDuration).bind({}),
    threadRestarts: r.counter(s.threadRestartsTotal).bind({}),
    cacheSlotsUsed: r.gauge(s.cacheSlotsUsed).bind({}),
    cacheSlotsCapacity: r.gauge(s.cacheSlotsCapacity).bind({}),
    cacheFull: r.counter(s.cacheFullTotal).bind({}),
    cacheOversize: r.counter(s.cacheOversizeTotal).bind({}),
    cacheTrimmed: r.counter(s.cacheTrimmedTotal).bind({}),
    cacheUnstored: r.gauge(s.cacheUnstoredPods).bind({}),
  };
}
