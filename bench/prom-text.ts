/**
 * A small parser for the Prometheus text exposition format (version 0.0.4), enough to read the
 * agent's /metrics: `# TYPE` lines, samples with labels (escaped `\"`, `\\`, `\n`), special
 * values (NaN, +Inf, -Inf) and optional timestamps. `# HELP` and other comments are skipped.
 *
 * Pure: text in, data out. Lines it cannot read are collected in `errors` rather than thrown,
 * so one odd metric from another component does not cost a whole benchmark run.
 */
import type { Bucket } from './stats.js';

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

export interface ParsedMetrics {
  samples: Sample[];
  /** Family name → declared type. */
  types: Map<string, MetricType>;
  /** Lines that did not parse, with their 1-based line number. */
  errors: string[];
}

const METRIC_TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePromText(text: string): ParsedMetrics {
  const samples: Sample[] = [];
  const types = new Map<string, MetricType>();
  const errors: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^#\s*TYPE\s+(\S+)\s+(\S+)/.exec(line);
      if (m && METRIC_TYPES.has(m[2] as string)) types.set(m[1] as string, m[2] as MetricType);
      continue;
    }
    const s = parseSampleLine(line);
    if (s) samples.push(s);
    else errors.push(`line ${i + 1}: ${line.slice(0, 120)}`);
  }
  return { samples, types, errors };
}

function parseSampleLine(line: string): Sample | null {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) return null;
  const name = nameMatch[0];
  let pos = name.length;
  const labels: Record<string, string> = {};
  if (line[pos] === '{') {
    pos++;
    for (;;) {
      while (line[pos] === ' ' || line[pos] === ',') pos++;
      if (line[pos] === '}') {
        pos++;
        break;
      }
      const key = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(pos));
      if (!key) return null;
      pos += key[0].length;
      if (line[pos] !== '=' || line[pos + 1] !== '"') return null;
      pos += 2;
      let value = '';
      for (;;) {
        const c = line[pos];
        if (c === undefined) return null;
        pos++;
        if (c === '"') break;
        if (c === '\\') {
          const e = line[pos++];
          value += e === 'n' ? '\n' : (e ?? '');
        } else value += c;
      }
      labels[key[0]] = value;
    }
  }
  const rest = line.slice(pos).trim().split(/\s+/);
  const value = parseValue(rest[0] ?? '');
  if (value === null) return null;
  return { name, labels, value };
}

function parseValue(v: string): number | null {
  switch (v) {
    case 'NaN':
      return Number.NaN;
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
    default: {
      if (v === '') return null;
      const n = Number(v);
      return Number.isNaN(n) ? null : n;
    }
  }
}

/** True when every label in `match` is present in `labels` with that value. */
function labelsMatch(labels: Readonly<Record<string, string>>, match: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(match)) if (labels[k] !== v) return false;
  return true;
}

/** Sum of the samples named exactly `name` whose labels include `match` (null when none). */
export function sampleSum(m: ParsedMetrics, name: string, match: Readonly<Record<string, string>> = {}): number | null {
  let found = false;
  let sum = 0;
  for (const s of m.samples) {
    if (s.name === name && labelsMatch(s.labels, match)) {
      found = true;
      sum += s.value;
    }
  }
  return found ? sum : null;
}

/**
 * The cumulative buckets of histogram family `name` (samples `name_bucket`), summed across
 * label sets that include `match` (other labels, e.g. per-worker, are aggregated away).
 */
export function histogramBuckets(m: ParsedMetrics, name: string, match: Readonly<Record<string, string>> = {}): Bucket[] {
  const byLe = new Map<number, number>();
  for (const s of m.samples) {
    if (s.name !== `${name}_bucket` || !labelsMatch(s.labels, match)) continue;
    const leText = s.labels['le'];
    if (leText === undefined) continue;
    const le = parseValue(leText);
    if (le === null) continue;
    byLe.set(le, (byLe.get(le) ?? 0) + s.value);
  }
  return [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, count]) => ({ le, count }));
}

/** Names of the metric families present (histogram/summary suffixes folded into the family). */
export function familyNames(m: ParsedMetrics): string[] {
  const names = new Set<string>(m.types.keys());
  for (const s of m.samples) names.add(s.name.replace(/_(bucket|sum|count)$/, ''));
  return [...names].sort();
}
