/**
 * The shape of one metric definition, shared by the kubelet and shardlet catalogues
 * (kubelet-metrics.ts, shardlet-metrics.ts), the shared-memory recorder (metrics-region.ts)
 * and the main-thread prom-client registry (main-metrics.ts).
 *
 * Every catalogue metric is recorded the same way on every thread: into that thread's
 * SharedArrayBuffer region (metrics-region.ts), summed across threads by the main thread at
 * scrape time (metrics-aggregator.ts). `observedOn` only documents which thread is expected to
 * observe it, so a reader knows where the work happens; nothing enforces it (with
 * `--workers 0` the main thread observes the pod-worker metrics itself).
 *
 * Only Node's default process metrics (prom-client collectDefaultMetrics) live elsewhere: in a
 * prom-client registry on the main thread, never in workers (per-worker collection multiplies RSS).
 */

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** The thread expected to observe a metric (documentation; see the module comment). */
export type ObservingThread = 'pod-worker' | 'pleg' | 'main';

export interface MetricDefinition<L extends string = string> {
  /** Full exposition name, e.g. `kubelet_runtime_operations_total`. */
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  /** Label names in exposition order. */
  readonly labelNames: readonly L[];
  /** Histogram upper bounds, ascending, without +Inf. Required for histograms only. */
  readonly buckets?: readonly number[];
  readonly observedOn: ObservingThread;
  /**
   * The series carry per-pod labels (prober_probe_total). Such series are deleted when the pod
   * goes away (as the kubelet's prober does) and are *not* folded into the retired accumulator
   * when their thread dies (see metrics-aggregator.ts).
   */
  readonly perPod?: boolean;
}

/** prometheus.DefBuckets (client_golang). */
export const DEF_BUCKETS: readonly number[] = Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);

/** prometheus.ExponentialBuckets(start, factor, count), rounded like Go's float64 arithmetic. */
export function exponentialBuckets(start: number, factor: number, count: number): readonly number[] {
  if (!(start > 0) || !(factor > 1) || !(count >= 1)) {
    throw new RangeError(`exponentialBuckets: bad arguments start=${start} factor=${factor} count=${count}`);
  }
  const out: number[] = [];
  let b = start;
  for (let i = 0; i < count; i++) {
    out.push(b);
    b *= factor;
  }
  return Object.freeze(out);
}

/** Builds a frozen definition; validates names and buckets once, at module load. */
export function defineMetric<const L extends string>(def: MetricDefinition<L>): MetricDefinition<L> {
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(def.name)) throw new Error(`metric name ${JSON.stringify(def.name)} is invalid`);
  for (const l of def.labelNames) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(l) || l.startsWith('__') || l === 'le') {
      throw new Error(`metric ${def.name}: label name ${JSON.stringify(l)} is invalid`);
    }
  }
  if (def.type === 'histogram') {
    const b = def.buckets;
    if (b === undefined || b.length === 0) throw new Error(`metric ${def.name}: histogram needs buckets`);
    for (let i = 1; i < b.length; i++) {
      if (!((b[i] as number) > (b[i - 1] as number))) throw new Error(`metric ${def.name}: buckets must ascend`);
    }
  } else if (def.buckets !== undefined) {
    throw new Error(`metric ${def.name}: only histograms have buckets`);
  }
  return Object.freeze({ ...def, labelNames: Object.freeze([...def.labelNames]) });
}
