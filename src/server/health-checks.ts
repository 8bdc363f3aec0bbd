/**
 * The kubelet's two liveness verdicts, as HealthCheckResult builders the agent core can feed
 * from its own state (both take the injected Clock):
 *
 *   syncloop — server.go syncLoopHealthCheck: fails when the sync loop has not been entered for
 *              max(2 × resync interval, 5m); message "sync Loop took longer than expected".
 *   pleg     — generic.go Healthy: fails when the last relist started more than the threshold
 *              ago (default 3m); message "pleg was last seen active <d> ago; threshold is <t>".
 * Durations print as Go's time.Duration.String() does, so the text matches the kubelet's.
 */
import type { Clock } from '../clock/clock.js';
import type { HealthCheckResult } from './server-sources.js';

export const SYNC_LOOP_MIN_THRESHOLD_MS = 5 * 60_000;
export const PLEG_RELIST_THRESHOLD_MS = 3 * 60_000;

export interface SyncLoopCheckDeps {
  clock: Pick<Clock, 'monotonic'>;
  /** Monotonic ms when the sync loop last started an iteration; undefined before the first. */
  latestLoopEntry(): number | undefined;
  /** The sync loop's resync interval (kubelet default 1 min). */
  resyncIntervalMs: number;
}

export function syncLoopCheck(deps: SyncLoopCheckDeps): HealthCheckResult {
  const threshold = Math.max(2 * deps.resyncIntervalMs, SYNC_LOOP_MIN_THRESHOLD_MS);
  const entered = deps.latestLoopEntry();
  if (entered !== undefined && deps.clock.monotonic() > entered + threshold) {
    return { name: 'syncloop', ok: false, reason: 'sync Loop took longer than expected' };
  }
  return { name: 'syncloop', ok: true };
}

export interface PlegCheckDeps {
  clock: Pick<Clock, 'monotonic'>;
  /** Monotonic ms when the last relist started; undefined before the first (then healthy). */
  lastRelist(): number | undefined;
  thresholdMs?: number;
}

export function plegCheck(deps: PlegCheckDeps): HealthCheckResult {
  const threshold = deps.thresholdMs ?? PLEG_RELIST_THRESHOLD_MS;
  const last = deps.lastRelist();
  if (last === undefined) return { name: 'pleg', ok: true };
  const elapsed = deps.clock.monotonic() - last;
  if (elapsed > threshold) {
    return {
      name: 'pleg',
      ok: false,
      reason: `pleg was last seen active ${formatGoDuration(elapsed)} ago; threshold is ${formatGoDuration(threshold)}`,
    };
  }
  return { name: 'pleg', ok: true };
}

/** Go's time.Duration.String() for a duration given in (fractional) milliseconds. */
export function formatGoDuration(ms: number): string {
  let ns = Math.round(ms * 1e6);
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  ns = Math.abs(ns);
  if (ns < 1e9) {
    if (ns < 1e3) return `${sign}${ns}ns`;
    if (ns < 1e6) return `${sign}${trimFraction(ns, 1e3)}µs`;
    return `${sign}${trimFraction(ns, 1e6)}ms`;
  }
  const h = Math.floor(ns / 3.6e12);
  ns -= h * 3.6e12;
  const m = Math.floor(ns / 6e10);
  ns -= m * 6e10;
  const s = `${trimFraction(ns, 1e9)}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}

/** `value / unit` with the fraction's trailing zeros removed (exact: integer arithmetic). */
function trimFraction(value: number, unit: number): string {
  const whole = Math.floor(value / unit);
  const frac = value - whole * unit;
  if (frac === 0) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(frac).padStart(digits, '0').replace(/0+$/, '')}`;
}
