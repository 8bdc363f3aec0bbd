/**
 * Typed recording handles over one thread's region: what observing code calls. One recorder
 * per thread (it owns the thread's RegionWriter). Counters only go up (a negative or NaN
 * increment is ignored, as prom-client ignores it with a warning — here silently, since a
 * metrics call must never throw on a hot path).
 *
 * Label values are given as an object keyed by the definition's label names (checked by the
 * type system); `bind()` resolves a series once so hot paths skip the lookup.
 */
import { catalogIndexOf } from './metric-catalog.js';
import type { MetricDefinition } from './metric-definition.js';
import { MetricsError } from './metrics-errors.js';
import type { RegionWriter } from './region-writer.js';

export type LabelValues<L extends string> = { readonly [K in L]: string };

export interface BoundCounter { inc(by?: number): void }
export interface BoundGauge { set(v: number): void; inc(by?: number): void; dec(by?: number): void }
export interface BoundHistogram { observe(v: number): void }

export interface Counter<L extends string> {
  inc(labels: LabelValues<L>, by?: number): void;
  bind(labels: LabelValues<L>): BoundCounter;
  /** Removes the series from the exposition (the kubelet's `CounterVec.Delete`). */
  remove(labels: LabelValues<L>): void;
}
export interface Gauge<L extends string> {
  set(labels: LabelValues<L>, v: number): void;
  bind(labels: LabelValues<L>): BoundGauge;
  remove(labels: LabelValues<L>): void;
}
export interface Histogram<L extends string> {
  observe(labels: LabelValues<L>, v: number): void;
  bind(labels: LabelValues<L>): BoundHistogram;
  remove(labels: LabelValues<L>): void;
}

export class MetricsRecorder {
  constructor(private readonly writer: RegionWriter) {}

  counter<L extends string>(def: MetricDefinition<L>): Counter<L> {
    expectType(def, 'counter');
    const bind = (labels: LabelValues<L>): BoundCounter => {
      const cell = this.cell(def, labels);
      return { inc: (by = 1) => { if (by > 0) this.writer.add(cell, by); } };
    };
    return { inc: (labels, by) => bind(labels).inc(by), bind, remove: (labels) => this.remove(def, labels) };
  }

  gauge<L extends string>(def: MetricDefinition<L>): Gauge<L> {
    expectType(def, 'gauge');
    const bind = (labels: LabelValues<L>): BoundGauge => {
      const cell = this.cell(def, labels);
      return {
        set: (v) => this.writer.set(cell, v),
        inc: (by = 1) => this.writer.add(cell, by),
        dec: (by = 1) => this.writer.add(cell, -by),
      };
    };
    return { set: (labels, v) => bind(labels).set(v), bind, remove: (labels) => this.remove(def, labels) };
  }

  histogram<L extends string>(def: MetricDefinition<L>): Histogram<L> {
    expectType(def, 'histogram');
    const buckets = def.buckets ?? [];
    const bind = (labels: LabelValues<L>): BoundHistogram => {
      const cell = this.cell(def, labels);
      return { observe: (v) => { if (!Number.isNaN(v)) this.writer.observe(cell, buckets, v); } };
    };
    return { observe: (labels, v) => bind(labels).observe(v), bind, remove: (labels) => this.remove(def, labels) };
  }

  private cell<L extends string>(def: MetricDefinition<L>, labels: LabelValues<L>): number {
    return this.writer.series(catalogIndexOf(def), labelValuesOf(def, labels));
  }

  private remove<L extends string>(def: MetricDefinition<L>, labels: LabelValues<L>): void {
    this.writer.delete(catalogIndexOf(def), labelValuesOf(def, labels));
  }
}

function expectType(def: MetricDefinition, type: MetricDefinition['type']): void {
  if (def.type !== type) throw new MetricsError('ERR_METRICS_LABELS', `metric ${def.name} is a ${def.type}, not a ${type}`);
}

/** Label values in the definition's order; throws ERR_METRICS_LABELS for a missing one. */
function labelValuesOf<L extends string>(def: MetricDefinition<L>, labels: LabelValues<L>): string[] {
  return def.labelNames.map((n) => {
    const v = labels[n];
    if (typeof v !== 'string') throw new MetricsError('ERR_METRICS_LABELS', `metric ${def.name}: label ${n} is missing`);
    return v;
  });
}
