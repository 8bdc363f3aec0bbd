/**
 * Exponential backoff, one definition for every retry loop of the agent and its workers (the API
 * client, reflector, status sync, mirror pods, node registration, token refresh, sync loop,
 * runtime connect, PLEG and pool thread restarts, mount events, the kubelet's keyed Backoff,
 * the CRI channel's reconnects). Each keeps its own state and constants (the kubelet's values,
 * named where they are used); the arithmetic lives here.
 *
 * Pure functions: no clock, no state. Jitter takes the caller's injected random source.
 */
import type { Random } from '../clock/clock.js';

export interface BackoffStep {
  /** The ceiling, in ms. */
  readonly maxMs: number;
  /** Growth per failure (default 2: doubling). */
  readonly factor?: number;
  /** Added before the cap (the kubelet's flowcontrol.Backoff adds its jitter so). Default 0. */
  readonly extraMs?: number;
}

/** The delay after `currentMs`: currentMs × factor (+ extraMs), at most maxMs. */
export function nextBackoffMs(currentMs: number, s: BackoffStep): number {
  return Math.min(currentMs * (s.factor ?? 2) + (s.extraMs ?? 0), s.maxMs);
}

/** The delay before attempt `failures` (0-based): initialMs × factor^failures, at most maxMs. */
export function backoffForAttempt(failures: number, s: BackoffStep & { readonly initialMs: number }): number {
  return Math.min(s.initialMs * (s.factor ?? 2) ** failures, s.maxMs);
}

/** `ms` spread by ±`jitter` (a fraction: 0.2 → 80 %–120 %), with the caller's random source. */
export function jitteredMs(ms: number, jitter: number, random: Random): number {
  return ms * (1 + jitter * (2 * random() - 1));
}
