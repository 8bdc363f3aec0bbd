/**
 * Main-thread side of cross-thread metrics: at scrape time it snapshots every claimed arena slot
 * (pod-worker threads, the PLEG thread, the main thread's own slot), sums series with equal
 * labels across threads, adds the retired accumulator, and renders one Prometheus text
 * exposition, followed by Node's default process metrics (collected on the main thread only).
 *
 * Registration needs no call: a thread registers by claiming a slot (createWorkerMetrics in
 * workers/metrics/worker-metrics.ts). The main thread must call {@link retireThread} after a
 * thread's Worker 'exit' event, which keeps a replaced thread's totals exactly:
 *
 *   - counters and histograms without per-pod or `thread` labels (runtime operations, pod worker
 *     durations, started pods, PLEG…) are read one last time — nothing writes the slot any more,
 *     so the read is exact — and added to the *retired accumulator*; the slot is then zeroed and
 *     freed in the same synchronous step, so a total is never lost, never counted twice, and
 *     never goes backwards;
 *   - gauges of a dead thread are dropped (a dead thread owns no pods and has no queue);
 *   - `thread`-labelled series (shardlet_thread_busy_seconds_total{thread="7"}) disappear with
 *     their thread: the series ends, no other series changes;
 *   - per-pod series (prober_probe_*) disappear: the pods' probes restart on the replacement
 *     thread from zero, which Prometheus sees as a counter reset of that series (rate() copes).
 *     The kubelet likewise deletes a pod's prober series when its probe workers stop.
 * A thread that died and is never retired keeps its slot and its last values in the exposition.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import { H_STATE, H_THREAD, retireSlot, SLOT_CLAIMED, type MetricsArena } from '../../shared/metrics/metrics-arena.js';
import { METRIC_CATALOG, catalogIndexOf, cellsPerSeries } from '../../shared/metrics/metric-catalog.js';
import type { MetricDefinition } from '../../shared/metrics/metric-definition.js';
import { renderFamilies, type Family, type FamilySeries } from './exposition-text.js';
import { RegionReader, type SlotSnapshot } from './region-reader.js';
import { seriesKey } from '../../shared/metrics/region-writer.js';
import { metricsSeriesDropped } from '../../shared/metrics/shardlet-metrics.js';

export interface MetricsAggregatorOptions {
  arena: MetricsArena;
  /** Append prom-client's default process/nodejs metrics (main thread only). Default true. */
  processMetrics?: boolean;
}

const NON_CONFORMING_DEFAULT_METRICS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

interface MergedSeries {
  defIndex: number;
  labelValues: readonly string[];
  values: Float64Array;
}

export class MetricsAggregator {
  private readonly arena: MetricsArena;
  private readonly readers = new Map<number, RegionReader>();
  /** Last good snapshot per slot, used when a slot's owner keeps changing structure. */
  private readonly lastSnapshot = new Map<number, SlotSnapshot>();
  private readonly retired = new Map<string, MergedSeries>();
  private retiredDropped = 0;
  private readonly hooks = new Set<() => void>();
  private readonly processRegistry: Registry | undefined;

  constructor(opts: MetricsAggregatorOptions) {
    this.arena = opts.arena;
    if (opts.processMetrics ?? true) {
      this.processRegistry = new Registry();
      collectDefaultMetrics({ register: this.processRegistry });
      // Gauges named *_total break Prometheus naming (promtool flags them); nodejs_active_*{type}
      // carries the same numbers broken down by type.
      for (const name of NON_CONFORMING_DEFAULT_METRICS) this.processRegistry.removeSingleMetric(name);
    }
  }

  /** Runs `fn` at the start of every collect() (e.g. to refresh gauges); returns an unsubscribe. */
  onCollect(fn: () => void): () => void {
    this.hooks.add(fn);
    return () => this.hooks.delete(fn);
  }

  /**
   * Folds the slot(s) of a dead or dying thread into the retired accumulator and retires them.
   * Call it from the pool's 'workerDestroy' (or a Worker's 'exit'). Returns the number of slots retired (0 if the thread
   * never claimed one or was already retired; calling twice is harmless).
   */
  retireThread(threadId: number): number {
    let n = 0;
    for (let i = 0; i < this.arena.slotCount; i++) {
      const slot = this.arena.slot(i);
      if (Atomics.load(slot.header, H_STATE) !== SLOT_CLAIMED || Atomics.load(slot.header, H_THREAD) !== threadId) continue;
      const snap = (this.readers.get(i) ?? new RegionReader(slot)).finalSnapshot();
      for (const s of snap.series) {
        const def = METRIC_CATALOG[s.defIndex] as MetricDefinition;
        if (isRetainedAfterExit(def)) addInto(this.retired, s.key, s.defIndex, s.labelValues, s.values);
      }
      this.retiredDropped += snap.dropped;
      retireSlot(this.arena, slot);
      this.readers.delete(i);
      this.lastSnapshot.delete(i);
      n++;
    }
    return n;
  }

  /** The whole exposition (Prometheus text 0.0.4). */
  async collect(): Promise<string> {
    for (const fn of this.hooks) fn();
    const merged = new Map<string, MergedSeries>();
    for (const [key, r] of this.retired) addInto(merged, key, r.defIndex, r.labelValues, r.values);
    let dropped = this.retiredDropped;
    for (const snap of this.liveSnapshots()) {
      for (const s of snap.series) addInto(merged, s.key, s.defIndex, s.labelValues, s.values);
      dropped += snap.dropped;
    }
    const droppedIdx = catalogIndexOf(metricsSeriesDropped);
    merged.set(seriesKey(droppedIdx, []), { defIndex: droppedIdx, labelValues: [], values: Float64Array.of(dropped) });
    const text = renderFamilies(familiesOf(merged));
    return this.processRegistry === undefined ? text : text + (await this.processRegistry.metrics());
  }

  private *liveSnapshots(): Generator<SlotSnapshot> {
    for (let i = 0; i < this.arena.slotCount; i++) {
      const slot = this.arena.slot(i);
      if (Atomics.load(slot.header, H_STATE) !== SLOT_CLAIMED) continue;
      let reader = this.readers.get(i);
      if (reader === undefined) {
        reader = new RegionReader(slot);
        this.readers.set(i, reader);
      }
      const snap = reader.snapshot() ?? this.lastSnapshot.get(i);
      if (snap === undefined) continue;
      this.lastSnapshot.set(i, snap);
      yield snap;
    }
  }
}

/** Which series of an exited thread stay in the exposition (see the module comment). */
export function isRetainedAfterExit(def: MetricDefinition): boolean {
  return def.type !== 'gauge' && def.perPod !== true && !def.labelNames.includes('thread');
}

function addInto(into: Map<string, MergedSeries>, key: string, defIndex: number, labelValues: readonly string[], values: ArrayLike<number>): void {
  const m = into.get(key);
  if (m === undefined) {
    into.set(key, { defIndex, labelValues, values: Float64Array.from(values) });
    return;
  }
  for (let i = 0; i < m.values.length; i++) m.values[i] = (m.values[i] as number) + (values[i] ?? 0);
}

/**
 * Families in catalogue order, as client_golang exposes them: a label-less metric always shows
 * (zero until observed); a labelled one shows only once it has a series.
 */
function familiesOf(merged: Map<string, MergedSeries>): Family[] {
  const byDef: FamilySeries[][] = METRIC_CATALOG.map(() => []);
  for (const m of merged.values()) byDef[m.defIndex]?.push(m);
  const out: Family[] = [];
  METRIC_CATALOG.forEach((def, i) => {
    const series = byDef[i] as FamilySeries[];
    if (series.length === 0) {
      if (def.labelNames.length > 0) return;
      series.push({ labelValues: [], values: new Float64Array(cellsPerSeries(def)) });
    }
    series.sort((a, b) => compareLabels(a.labelValues, b.labelValues));
    out.push({ def, series });
  });
  return out;
}

function compareLabels(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
