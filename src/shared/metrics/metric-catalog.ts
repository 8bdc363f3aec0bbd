/**
 * The one ordered list of every catalogue metric. A metric's position here is its index in the
 * shared-memory regions (metrics-region.ts): writer threads and the main-thread reader load the
 * same module, so the index means the same metric on both sides.
 */
import { KUBELET_METRICS } from './kubelet-metrics.js';
import type { MetricDefinition } from './metric-definition.js';
import { SHARDLET_METRICS } from './shardlet-metrics.js';
import { GC_METRICS } from './gc-metrics.js';

export const METRIC_CATALOG: readonly MetricDefinition[] = Object.freeze([...KUBELET_METRICS, ...SHARDLET_METRICS, ...GC_METRICS]);

const indexByName = new Map<string, number>();
METRIC_CATALOG.forEach((d, i) => {
  if (indexByName.has(d.name)) throw new Error(`metric ${d.name} is defined twice`);
  indexByName.set(d.name, i);
});

/** Index of a definition in {@link METRIC_CATALOG}; throws for a metric not in the catalogue. */
export function catalogIndexOf(def: MetricDefinition): number {
  const i = indexByName.get(def.name);
  if (i === undefined || METRIC_CATALOG[i] !== def) throw new Error(`metric ${def.name} is not in the catalogue`);
  return i;
}

/** Number of value cells a series of this metric occupies in a region. */
export function cellsPerSeries(def: MetricDefinition): number {
  // Histogram: one non-cumulative count per finite bucket, one for +Inf, one for the sum.
  return def.type === 'histogram' ? (def.buckets?.length ?? 0) + 2 : 1;
}
