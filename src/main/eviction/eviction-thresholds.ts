/**
 * Eviction signals and thresholds, as the kubelet's pkg/kubelet/eviction/api and helpers.go
 * define them: parsing (ParseThresholdConfig and its statement parsers, with the kubelet's
 * error messages), and the pure set arithmetic of a synchronize pass (thresholdsMet,
 * thresholdsFirstObservedAt, thresholdsMetGracePeriod, nodeConditions and their transition
 * period, mergeThresholds, thresholdsUpdatedStats, byEvictionPriority).
 *
 * Units: byte and count quantities are numbers; percentages are Go float32 fractions (0.1 for
 * 10%, rounded as Go rounds them); times are ms on the injected clock.
 *
 * Signals shardlet measures: memory.available, nodefs.available, nodefs.inodesFree,
 * imagefs.available, imagefs.inodesFree, pid.available. The kubelet's other signal names
 * (allocatableMemory.available, containerfs.*) are refused by name: shardlet has no pods-cgroup
 * memory observation and no separate container filesystem, and a threshold is never dropped
 * silently.
 */
import { parseDurationMs } from '../../shared/clock/go-duration.js';
import { parseQuantity, unitValue } from '../../shared/resources/quantity.js';
import { formatOfText, formatQuantity, type QuantityFormat } from './eviction-quantity.js';

export const SIGNALS = ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'] as const;
export type Signal = (typeof SIGNALS)[number];

/** Kubelet signal names shardlet does not measure (refused with their own message). */
const UNMEASURED = new Set(['allocatableMemory.available', 'containerfs.available', 'containerfs.inodesFree']);

export type StarvedResource = 'memory' | 'ephemeral-storage' | 'inodes' | 'pids';
export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** signalToResource. */
export const SIGNAL_RESOURCE: Readonly<Record<Signal, StarvedResource>> = Object.freeze({
  'memory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'pid.available': 'pids',
});

/** signalToNodeCondition. */
export const SIGNAL_CONDITION: Readonly<Record<Signal, PressureCondition>> = Object.freeze({
  'memory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
});

/** A quantity (with the format it prints in) or a fraction of capacity. */
export type ThresholdValue = { quantity: number; format: QuantityFormat } | { percentage: number };

export interface Threshold {
  signal: Signal;
  /** Operator is always LessThan (OpForSignal). */
  value: ThresholdValue;
  /** 0 = hard threshold (isHardEvictionThreshold). */
  gracePeriodMs: number;
  minReclaim?: ThresholdValue;
}

/** One measured signal (signalObservation). */
export interface Observation {
  available: number;
  capacity: number;
  /** When it was measured (ms); absent when unknown. */
  timeMs?: number;
}

export type Observations = ReadonlyMap<Signal, Observation>;

export class ThresholdParseError extends Error {
  override readonly name = 'ThresholdParseError';
  readonly code = 'ERR_EVICTION_THRESHOLD';
}

function validSignal(s: string): Signal {
  if ((SIGNALS as readonly string[]).includes(s)) return s as Signal;
  if (UNMEASURED.has(s)) throw new ThresholdParseError(`eviction signal ${s} is not supported by shardlet (it measures ${SIGNALS.join(', ')})`);
  throw new ThresholdParseError(`unsupported eviction signal ${s}`);
}

/** parsePercentage: Go's ParseFloat(…, 32) then float32 division by 100. */
function parsePercentage(val: string): number {
  const text = val.replace(/%+$/, '');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new ThresholdParseError(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`);
  return Math.fround(Math.fround(Number(text)) / 100);
}

function parseQuantityValue(val: string): { quantity: number; format: QuantityFormat; negative: boolean } {
  const q = parseQuantity(val);
  if (q === undefined) throw new ThresholdParseError(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  const negative = q.mantissa < 0n;
  const n = unitValue(q);
  return { quantity: negative ? -unitValue({ ...q, mantissa: -q.mantissa }) : n, format: formatOfText(val), negative };
}

/** parseThresholdStatement: undefined for "0%" and "100%" (ignored, as the kubelet ignores them). */
export function parseThresholdStatement(signalName: string, val: string): Threshold | undefined {
  const signal = validSignal(signalName);
  if (val.endsWith('%')) {
    if (val === '0%' || val === '100%') return undefined;
    const percentage = parsePercentage(val);
    if (percentage < 0) throw new ThresholdParseError(`eviction percentage threshold ${signal} must be >= 0%: ${val}`);
    if (percentage > 1) throw new ThresholdParseError(`eviction percentage threshold ${signal} must be <= 100%: ${val}`);
    return { signal, value: { percentage }, gracePeriodMs: 0 };
  }
  const q = parseQuantityValue(val);
  if (q.quantity <= 0) throw new ThresholdParseError(`eviction threshold ${signal} must be positive: ${formatQuantity(q.quantity, q.format)}`);
  return { signal, value: { quantity: q.quantity, format: q.format }, gracePeriodMs: 0 };
}

export interface ThresholdConfigInput {
  hard: Readonly<Record<string, string>>;
  soft: Readonly<Record<string, string>>;
  softGracePeriod: Readonly<Record<string, string>>;
  minimumReclaim: Readonly<Record<string, string>>;
}

/** Which flag a parse error belongs to (for the ConfigError). */
export class ThresholdConfigError extends ThresholdParseError {
  constructor(readonly flag: string, message: string) {
    super(message);
  }
}

function inFlag<T>(flag: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof ThresholdParseError) throw new ThresholdConfigError(flag, err.message);
    throw err;
  }
}

/**
 * ParseThresholdConfig: hard thresholds, then soft ones with their grace periods (a soft
 * threshold without one is an error), minimum reclaims attached to every threshold of their
 * signal. Throws ThresholdConfigError naming the flag.
 */
export function parseThresholdConfig(c: ThresholdConfigInput): Threshold[] {
  const statements = (flag: string, m: Readonly<Record<string, string>>): Threshold[] =>
    inFlag(flag, () => Object.entries(m).flatMap(([s, v]) => parseThresholdStatement(s, v) ?? []));
  const hard = statements('--eviction-hard', c.hard);
  const soft = statements('--eviction-soft', c.soft);
  const grace = inFlag('--eviction-soft-grace-period', () => {
    const out = new Map<Signal, number>();
    for (const [s, v] of Object.entries(c.softGracePeriod)) {
      const signal = validSignal(s);
      const neg = v.trim().startsWith('-');
      const ms = parseDurationMs(neg ? v.trim().slice(1) : v);
      if (ms === undefined) throw new ThresholdParseError(`time: invalid duration ${JSON.stringify(v)}`);
      if (neg && ms > 0) throw new ThresholdParseError(`invalid eviction grace period specified: ${v}, must be a positive value`);
      out.set(signal, ms);
    }
    return out;
  });
  const reclaims = inFlag('--eviction-minimum-reclaim', () => {
    const out = new Map<Signal, ThresholdValue>();
    for (const [s, v] of Object.entries(c.minimumReclaim)) {
      const signal = validSignal(s);
      if (v.endsWith('%')) {
        const percentage = parsePercentage(v);
        if (percentage <= 0) throw new ThresholdParseError(`eviction percentage minimum reclaim ${signal} must be positive: ${v}`);
        out.set(signal, { percentage });
        continue;
      }
      const q = parseQuantityValue(v);
      if (q.negative) throw new ThresholdParseError(`negative eviction minimum reclaim specified for ${signal}`);
      out.set(signal, { quantity: q.quantity, format: q.format });
    }
    return out;
  });
  for (const t of soft) {
    const period = grace.get(t.signal);
    if (period === undefined) throw new ThresholdConfigError('--eviction-soft-grace-period', `grace period must be specified for the soft eviction threshold ${t.signal}`);
    t.gracePeriodMs = period;
  }
  const all = [...hard, ...soft];
  for (const t of all) {
    const r = reclaims.get(t.signal);
    if (r !== undefined) t.minReclaim = r;
  }
  return all;
}

/** GetThresholdQuantity: a quantity as is; a percentage of capacity, truncated (int64(float64(cap) * float64(pct))). */
export function thresholdQuantity(v: ThresholdValue, capacity: number): number {
  return 'quantity' in v ? v.quantity : Math.trunc(capacity * v.percentage);
}

/** The threshold quantity as the kubelet's message prints it. */
export function formatThresholdQuantity(t: Threshold, capacity: number): string {
  // A percentage's quantity is built with resource.NewQuantity(…, BinarySI), whatever the signal.
  const format: QuantityFormat = 'quantity' in t.value ? t.value.format : 'BinarySI';
  return formatQuantity(thresholdQuantity(t.value, capacity), format);
}

/** Identity of a threshold (Go compares the struct: signal, value, grace period, min reclaim). */
export function thresholdKey(t: Threshold): string {
  const v = (x: ThresholdValue | undefined): string => (x === undefined ? '-' : 'quantity' in x ? `q${x.quantity}` : `p${x.percentage}`);
  return `${t.signal}|${v(t.value)}|${t.gracePeriodMs}|${v(t.minReclaim)}`;
}

export function isHard(t: Threshold): boolean {
  return t.gracePeriodMs === 0;
}

/** thresholdsMet: those whose observed available is below the quantity (+ min reclaim when enforced). */
export function thresholdsMet(thresholds: readonly Threshold[], obs: Observations, enforceMinReclaim: boolean, onMissing?: (s: Signal) => void): Threshold[] {
  const out: Threshold[] = [];
  for (const t of thresholds) {
    const o = obs.get(t.signal);
    if (o === undefined) {
      onMissing?.(t.signal);
      continue;
    }
    let q = thresholdQuantity(t.value, o.capacity);
    if (enforceMinReclaim && t.minReclaim !== undefined) q += thresholdQuantity(t.minReclaim, o.capacity);
    if (q > o.available) out.push(t);
  }
  return out;
}

/** mergeThresholds: a, then b's not already in a. */
export function mergeThresholds(a: readonly Threshold[], b: readonly Threshold[]): Threshold[] {
  const out = [...a];
  const seen = new Set(a.map((t) => `${t.signal}|${t.gracePeriodMs}|${'quantity' in t.value ? `q${t.value.quantity}` : `p${t.value.percentage}`}`));
  for (const t of b) {
    const k = `${t.signal}|${t.gracePeriodMs}|${'quantity' in t.value ? `q${t.value.quantity}` : `p${t.value.percentage}`}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push(t);
    }
  }
  return out;
}

export type ObservedAt = Map<string, { threshold: Threshold; atMs: number }>;

/** thresholdsFirstObservedAt: the active thresholds with when each was first met. */
export function thresholdsFirstObservedAt(thresholds: readonly Threshold[], last: ObservedAt, nowMs: number): ObservedAt {
  const out: ObservedAt = new Map();
  for (const t of thresholds) {
    const k = thresholdKey(t);
    out.set(k, { threshold: t, atMs: last.get(k)?.atMs ?? nowMs });
  }
  return out;
}

/** thresholdsMetGracePeriod: those met for at least their grace period. */
export function thresholdsMetGracePeriod(observedAt: ObservedAt, nowMs: number): Threshold[] {
  const out: Threshold[] = [];
  for (const { threshold, atMs } of observedAt.values()) if (nowMs - atMs >= threshold.gracePeriodMs) out.push(threshold);
  return out;
}

/** nodeConditions: the conditions of the given thresholds, deduplicated, in order. */
export function conditionsOf(thresholds: readonly Threshold[]): PressureCondition[] {
  const out: PressureCondition[] = [];
  for (const t of thresholds) {
    const c = SIGNAL_CONDITION[t.signal];
    if (!out.includes(c)) out.push(c);
  }
  return out;
}

/** nodeConditionsLastObservedAt: the current ones now, the others keep their last time. */
export function conditionsLastObservedAt(current: readonly PressureCondition[], last: ReadonlyMap<PressureCondition, number>, nowMs: number): Map<PressureCondition, number> {
  const out = new Map<PressureCondition, number>();
  for (const c of current) out.set(c, nowMs);
  for (const [c, at] of last) if (!out.has(c)) out.set(c, at);
  return out;
}

/**
 * nodeConditionsObservedSince: the conditions seen within the transition period, in the
 * kubelet's condition order (MemoryPressure, DiskPressure, PIDPressure: Go iterates a map, so
 * its order is random; a fixed one keeps the admission message stable).
 */
export function conditionsObservedSince(observedAt: ReadonlyMap<PressureCondition, number>, periodMs: number, nowMs: number): PressureCondition[] {
  return (['MemoryPressure', 'DiskPressure', 'PIDPressure'] as const).filter((c) => {
    const at = observedAt.get(c);
    return at !== undefined && nowMs - at < periodMs;
  });
}

/** thresholdsUpdatedStats: those whose observation is newer than the last pass's (or has no time). */
export function thresholdsUpdatedStats(thresholds: readonly Threshold[], obs: Observations, last: Observations): Threshold[] {
  return thresholds.filter((t) => {
    const o = obs.get(t.signal);
    if (o === undefined) return false;
    const l = last.get(t.signal);
    return l === undefined || o.timeMs === undefined || l.timeMs === undefined || o.timeMs > l.timeMs;
  });
}

/** byEvictionPriority: memory first, then the others in their order (a stable sort). */
export function byEvictionPriority(thresholds: readonly Threshold[]): Threshold[] {
  return [...thresholds].sort((a, b) => Number(b.signal === 'memory.available') - Number(a.signal === 'memory.available'));
}
