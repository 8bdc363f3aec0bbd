/**
 * Metrics wiring on the main thread: the metrics system (arena for the worker threads, the
 * main thread's recorder, the aggregator the scrapes read), the log-drop counter on the shared
 * stderr sink, what each PLEG relist report sets, and the gauges read from the pod lifecycle and
 * the pod cache at each collection. Where the work happens records its own series; this module
 * only wires the observations that cross modules.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../shared/clock/clock.js';
import { stderrSink } from '../../shared/logging/logger.js';
import * as km from '../../shared/metrics/kubelet-metrics.js';
import * as sm from '../../shared/metrics/shardlet-metrics.js';
import type { PodCacheStats } from '../../shared/pod-cache/pod-cache.js';
import { createMetricsSystem, type ContainerStateLabel, type MetricsSystem, type MetricsSystemOptions } from '../metrics/main-metrics.js';
import { PodCacheMetrics } from '../metrics/pod-cache-metrics.js';
import { recordThreadHeap, sampleThreadHeap } from '../../shared/metrics/thread-heap.js';
import type { RelistObservation } from '../pleg/pleg-runner.js';
import { isStaticPod } from '../pod-manager/pod-manager.js';
import type { WorkingPodCount } from '../syncloop/pod-worker-mirrors.js';

/** The metrics system, with the main thread's stderr drops counted (its lines and the PLEG thread's). */
export function createAgentMetrics(embedded?: MetricsSystemOptions): MetricsSystem {
  // An embedded agent (hollow mode) shares the process: its arena is sized by the embedder and
  // the process-wide stderr drop observer (one slot) is left to the embedder.
  if (embedded !== undefined) return createMetricsSystem(embedded);
  const metrics = createMetricsSystem();
  const logDropped = metrics.main.recorder.counter(sm.logLinesDroppedTotal);
  stderrSink.observeDrops(() => logDropped.inc({}));
  return metrics;
}

/** Undoes createAgentMetrics: stops counting drops, then closes the system. */
export function closeAgentMetrics(metrics: MetricsSystem, embedded = false): void {
  if (!embedded) stderrSink.observeDrops(undefined);
  metrics.close();
}

/**
 * What one relist report sets: kubelet_pleg_relist_duration_seconds / _interval_seconds,
 * kubelet_pleg_last_seen_seconds, kubelet_pleg_discard_events, and kubelet_running_pods /
 * kubelet_running_containers{container_state} from the relist's listing, as the kubelet's PLEG
 * does (every runtime pod, orphans included); and the PLEG thread's heap (shardlet_thread_heap_bytes).
 */
export function relistObserver(metrics: MetricsSystem, clock: Clock): (r: RelistObservation) => void {
  const rec = metrics.main.recorder;
  return (r) => {
    rec.histogram(km.plegRelistDuration).observe({}, r.durationSeconds);
    if (r.intervalSeconds !== null) rec.histogram(km.plegRelistInterval).observe({}, r.intervalSeconds);
    if (r.ok) rec.gauge(km.plegLastSeen).set({}, clock.now() / 1000);
    if (r.discarded > 0) rec.counter(km.plegDiscardEvents).inc({}, r.discarded);
    if (r.runtimeCounts) {
      metrics.main.runningPods.set(r.runtimeCounts.runningPods);
      for (const [state, n] of Object.entries(r.runtimeCounts.containers) as [ContainerStateLabel, number][]) metrics.main.runningContainers(state).set(n);
    }
    if (r.heap) recordThreadHeap(rec, 'pleg', 'pleg', r.heap);
  };
}

/** The pod lifecycle's counts, as the collection reads them. */
export interface PodCountsSource {
  counts(): { desired: { static: number; other: number }; working: WorkingPodCount[] };
  activePods(): V1Pod[];
}

/**
 * At each collection: kubelet_desired_pods, kubelet_working_pods, kubelet_active_pods (by
 * static), the pod cache's slots and totals (shardlet_pod_cache_*) and the main thread's heap. The cache's counters are
 * observed once now too, so they exist before the first scrape.
 */
export function observeAtCollect(metrics: MetricsSystem, pods: PodCountsSource, cache: { stats(): PodCacheStats }): void {
  const cacheMetrics = new PodCacheMetrics(metrics.main);
  cacheMetrics.observe(cache.stats());
  metrics.aggregator.onCollect(() => {
    const counts = pods.counts();
    metrics.main.desiredPods(true).set(counts.desired.static);
    metrics.main.desiredPods(false).set(counts.desired.other);
    for (const w of counts.working) metrics.main.workingPods(w.lifecycle, w.config, w.isStatic).set(w.count);
    const active = pods.activePods();
    const activeStatic = active.filter(isStaticPod).length;
    metrics.main.activePods(true).set(activeStatic);
    metrics.main.activePods(false).set(active.length - activeStatic);
    cacheMetrics.observe(cache.stats());
    recordThreadHeap(metrics.main.recorder, '0', 'main', sampleThreadHeap());
  });
}
