/**
 * Prometheus text exposition format 0.0.4 for catalogue metrics: `# HELP`, `# TYPE`, then one
 * line per sample. Histograms are stored non-cumulatively (metric-catalog cellsPerSeries) and
 * rendered cumulatively here, with `_count` equal to the `+Inf` bucket by construction, so a
 * snapshot taken mid-observation is still a valid histogram.
 */
import type { MetricDefinition } from './metric-definition.js';

export const PROMETHEUS_TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface FamilySeries {
  readonly labelValues: readonly string[];
  readonly values: ArrayLike<number>;
}

export interface Family {
  readonly def: MetricDefinition;
  readonly series: readonly FamilySeries[];
}

/** Renders families in order; a family with no series renders HELP/TYPE only. */
export function renderFamilies(families: Iterable<Family>): string {
  const out: string[] = [];
  for (const { def, series } of families) {
    out.push(`# HELP ${def.name} ${escapeHelp(def.help)}`, `# TYPE ${def.name} ${def.type}`);
    for (const s of series) {
      const labels = def.labelNames.map((n, i) => `${n}="${escapeLabelValue(s.labelValues[i] ?? '')}"`);
      switch (def.type) {
        case 'counter':
        case 'gauge':
          out.push(`${def.name}${braces(labels)} ${formatValue(s.values[0] ?? 0)}`);
          break;
        case 'histogram':
          renderHistogram(out, def.name, def.buckets ?? [], labels, s.values);
          break;
        default: {
          const never: never = def.type;
          throw new Error(`unknown metric type ${String(never)}`);
        }
      }
    }
  }
  return out.length === 0 ? '' : out.join('\n') + '\n';
}

function renderHistogram(out: string[], name: string, buckets: readonly number[], labels: string[], v: ArrayLike<number>): void {
  let cumulative = 0;
  for (let i = 0; i < buckets.length; i++) {
    cumulative += v[i] ?? 0;
    out.push(`${name}_bucket${braces([...labels, `le="${formatValue(buckets[i] as number)}"`])} ${formatValue(cumulative)}`);
  }
  cumulative += v[buckets.length] ?? 0;
  out.push(`${name}_bucket${braces([...labels, 'le="+Inf"'])} ${formatValue(cumulative)}`);
  out.push(`${name}_sum${braces(labels)} ${formatValue(v[buckets.length + 1] ?? 0)}`);
  out.push(`${name}_count${braces(labels)} ${formatValue(cumulative)}`);
}

function braces(labels: readonly string[]): string {
  return labels.length === 0 ? '' : `{${labels.join(',')}}`;
}

/** Sample values and `le` bounds as Prometheus writes them (+Inf, -Inf, NaN). */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

export function escapeHelp(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

export function escapeLabelValue(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
