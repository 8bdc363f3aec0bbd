/**
 * What the bench measures about a running process and the agent, without touching either:
 *   - CPU seconds (utime + stime of every thread) from /proc/<pid>/stat;
 *   - resident memory (VmRSS, VmHWM) from /proc/<pid>/status;
 *   - the agent's main-thread event-loop delay and PLEG relist figures, from two /metrics
 *     scrapes bracketing a workload window.
 * The /proc readers are small I/O shells; the window arithmetic (`agentWindow`) is pure.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { histogramBuckets, sampleSum, type ParsedMetrics } from './prom-text.js';
import { bucketDelta, histogramQuantile } from './stats.js';
import type { RelistStats } from './results.js';

export class BenchMeasureError extends Error {
  readonly code = 'ERR_BENCH_MEASURE';
}

let clockTicks: number | undefined;

/** Kernel clock ticks per second (`getconf CLK_TCK`); 100 when getconf is unavailable. */
export function clockTicksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * utime + stime in seconds from the text of /proc/<pid>/stat. Fields are counted after the
 * closing parenthesis of `comm` (which may itself contain spaces and parentheses): state is
 * field 3, utime field 14, stime field 15.
 */
export function parseProcStatCpuSeconds(stat: string, ticksPerSecond: number): number {
  const close = stat.lastIndexOf(')');
  if (close < 0) throw new BenchMeasureError(`unreadable /proc stat line: ${stat.slice(0, 80)}`);
  const fields = stat.slice(close + 2).trim().split(/\s+/);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new BenchMeasureError(`no utime/stime in /proc stat line: ${stat.slice(0, 80)}`);
  return (utime + stime) / ticksPerSecond;
}

/** VmRSS and VmHWM in MiB from the text of /proc/<pid>/status (null when absent, e.g. a zombie). */
export function parseProcStatusMemory(status: string): { rssMiB: number | null; hwmMiB: number | null } {
  const kb = (key: string): number | null => {
    const m = new RegExp(`^${key}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
    return m ? Number(m[1]) / 1024 : null;
  };
  return { rssMiB: kb('VmRSS'), hwmMiB: kb('VmHWM') };
}

export function readCpuSeconds(pid: number): number {
  return parseProcStatCpuSeconds(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'), clockTicksPerSecond());
}

export function readMemory(pid: number): { rssMiB: number | null; hwmMiB: number | null } {
  try {
    return parseProcStatusMemory(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return { rssMiB: null, hwmMiB: null };
  }
}

/** The agent's main-thread event-loop delay gauge (reset at each scrape: "since the previous scrape"). */
export const ELD_METRIC = 'shardlet_main_event_loop_delay_seconds';
export const RELIST_METRIC = 'kubelet_pleg_relist_duration_seconds';
/**
 * The main thread's share of PLEG work: the relist itself runs on the PLEG thread; the main
 * thread queues each event batch it reports and handles it in a sync-loop iteration. This
 * counter (src/shared/metrics/shardlet-metrics.ts) sums that main-thread time.
 */
export const PLEG_MAIN_METRIC = 'shardlet_pleg_events_main_thread_seconds_total';

export interface AgentWindow {
  eventLoopDelayMs: { p50: number | null; p99: number | null; max: number | null; metric: string } | null;
  relist: RelistStats | null;
}

/**
 * Figures for the window between two scrapes. The event-loop delay gauges describe the time
 * since the previous scrape, so `after` alone carries the window (the `before` scrape is what
 * reset them). Relist figures are histogram deltas `after - before`; the main thread's PLEG
 * time is the {@link PLEG_MAIN_METRIC} delta, and its share is that time over the relist time
 * (null when the agent does not expose the counter).
 */
export function agentWindow(before: ParsedMetrics, after: ParsedMetrics): AgentWindow {
  const eld = (stat: string): number | null => {
    const v = sampleSum(after, ELD_METRIC, { stat });
    return v === null || !Number.isFinite(v) ? null : v * 1000;
  };
  const eldP99 = eld('p99');
  const eventLoopDelayMs = eldP99 === null && eld('max') === null ? null : { p50: eld('p50'), p99: eldP99, max: eld('max'), metric: ELD_METRIC };

  const delta = bucketDelta(histogramBuckets(before, RELIST_METRIC), histogramBuckets(after, RELIST_METRIC));
  const count = (sampleSum(after, `${RELIST_METRIC}_count`) ?? 0) - (sampleSum(before, `${RELIST_METRIC}_count`) ?? 0);
  const sum = (sampleSum(after, `${RELIST_METRIC}_sum`) ?? 0) - (sampleSum(before, `${RELIST_METRIC}_sum`) ?? 0);
  let relist: RelistStats | null = null;
  if (count > 0) {
    const mainAfter = sampleSum(after, PLEG_MAIN_METRIC);
    const mainThreadSeconds = mainAfter === null ? null : mainAfter - (sampleSum(before, PLEG_MAIN_METRIC) ?? 0);
    const mainThreadShare = mainThreadSeconds !== null && sum > 0 ? mainThreadSeconds / sum : null;
    const mainThreadMetric = mainThreadSeconds === null ? null : PLEG_MAIN_METRIC;
    const p99 = histogramQuantile(delta, 0.99);
    const p50 = histogramQuantile(delta, 0.5);
    relist = { count, meanMs: (sum / count) * 1000, p50Ms: Number.isFinite(p50) ? p50 * 1000 : null, p99Ms: Number.isFinite(p99) ? p99 * 1000 : null, mainThreadMsPerRelist: mainThreadSeconds === null ? null : (mainThreadSeconds / count) * 1000, mainThreadShare, mainThreadMetric };
  }
  return { eventLoopDelayMs, relist };
}
