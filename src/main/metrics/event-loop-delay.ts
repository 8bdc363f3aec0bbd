/**
 * Main-thread event-loop delay, sampled with perf_hooks.monitorEventLoopDelay and published at
 * scrape time as shardlet_main_event_loop_delay_seconds{stat="p50"|"p99"|"max"} for the window
 * since the previous scrape (the histogram is reset after each read, as prom-client does for
 * nodejs_eventloop_lag_*). With several scrapers each sees the window since anyone's last scrape.
 *
 * This is Node's own sampler (a libuv timer), not agent logic, so it does not take the Clock.
 * The histogram records the time between sampler ticks, so each value includes the sampling
 * interval itself (an idle loop reads ≈ resolution); the interval is subtracted so the gauge is
 * the delay proper (idle ≈ 0), comparable with a "p99 ≤ 10 ms" target.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { MetricsRecorder } from '../../shared/metrics/metrics-recorder.js';
import { eventLoopDelay } from '../../shared/metrics/shardlet-metrics.js';

export interface EventLoopDelayMonitor {
  /** Publishes the window's p50/p99/max (seconds) and starts a new window. */
  sample(): void;
  /** Stops the sampler; idempotent. */
  stop(): void;
}

export function startEventLoopDelayMonitor(recorder: MetricsRecorder, resolutionMs = 10): EventLoopDelayMonitor {
  const h: IntervalHistogram = monitorEventLoopDelay({ resolution: resolutionMs });
  h.enable();
  const g = recorder.gauge(eventLoopDelay);
  const p50 = g.bind({ stat: 'p50' });
  const p99 = g.bind({ stat: 'p99' });
  const max = g.bind({ stat: 'max' });
  let stopped = false;
  return {
    sample() {
      // An empty window reports 0 rather than the sampler's sentinel values.
      const empty = h.count === 0;
      const delay = (ns: number): number => (empty ? 0 : Math.max(0, ns / 1e6 - resolutionMs) / 1e3);
      p50.set(delay(h.percentile(50)));
      p99.set(delay(h.percentile(99)));
      max.set(delay(h.max));
      h.reset();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      h.disable();
    },
  };
}
