/**
 * PLEG wiring: starts the supervised PLEG thread (pleg-runner.ts) on the shared pod cache and
 * connects it to the rest of the main thread:
 *  - each relist's events go to the sync loop (its main-thread cost counted in
 *    shardlet_pleg_events_main_thread_seconds_total);
 *  - each relist report sets the relist metrics (agent-metrics.ts), and the first successful
 *    relist after failing ones tells the pod lifecycle the runtime is back (pods whose sync
 *    failed meanwhile are retried at once, not after their error backoff);
 *  - a PLEG thread that died has its pod-cache locks recovered before its replacement starts;
 *  - PLEG health becomes a runtime health check, as the kubelet's
 *    runtimeState.addHealthCheck("PLEG", pleg.Healthy): an unhealthy PLEG is a runtime error, so
 *    the sync loop backs off instead of acting on a cache nobody refreshes.
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { PodLifecycleEvent } from '../../shared/pleg/pod-lifecycle-event.js';
import type { MetricsSystem } from '../metrics/main-metrics.js';
import { startPleg, type PlegRunner } from '../pleg/pleg-runner.js';
import { startInlinePleg } from '../pleg/pleg-inline.js';
import type { AgentConfig } from './agent-config.js';
import { relistObserver } from './agent-metrics.js';
import type { RuntimeHealth } from './runtime-health.js';

export interface AgentPlegDeps {
  config: Pick<AgentConfig, 'plegRelistPeriodMs' | 'plegRelistThresholdMs' | 'maxPods' | 'verbosity' | 'rootDir'>;
  clock: Clock;
  logger: Logger;
  metrics: MetricsSystem;
  /** CRI endpoint the PLEG thread opens its own channel to. */
  endpoint: string;
  cache: { buffer: SharedArrayBuffer; recoverThread(threadId: number): number };
  /** Where event batches go (the sync loop). */
  events: { pushPlegEvents(events: readonly PodLifecycleEvent[]): void };
  /** Adds to shardlet_pleg_events_main_thread_seconds_total (queueing batches here plus the loop handling them). */
  onPlegMainSeconds: (seconds: number) => void;
  lifecycle: { handleRuntimeReturned(): number };
  runtimeHealth: Pick<RuntimeHealth, 'addHealthCheck'>;
  /** Relist on the main thread instead of a supervised thread (hollow mode; pleg-inline.ts). */
  inline?: boolean;
}

/** Starts the PLEG thread; resolves once it runs (rejects if the first thread cannot start). */
export async function startAgentPleg(d: AgentPlegDeps): Promise<PlegRunner> {
  const { config: c, clock, logger, metrics, cache } = d;
  const observeRelist = relistObserver(metrics, clock);
  // A relist that fails means the runtime could not be listed; the first one to succeed after
  // it means the runtime is back.
  let relistFailing = false;
  const pleg = await (d.inline ? startInlinePleg : startPleg)({
    endpoint: d.endpoint,
    cacheBuffer: cache.buffer,
    relistPeriodMs: c.plegRelistPeriodMs,
    relistThresholdMs: c.plegRelistThresholdMs,
    rootDir: c.rootDir,
    // The kubelet's plegChannelCapacity is 1000; one relist after a burst yields about two
    // events per pod (sandbox + container started), so on a dense node it scales with max-pods.
    eventCapacity: Math.max(1000, c.maxPods * 4),
    verbosity: c.verbosity,
    logger,
    onEvents: (evs) => {
      const t0 = clock.monotonic();
      d.events.pushPlegEvents(evs);
      d.onPlegMainSeconds((clock.monotonic() - t0) / 1000);
    },
    onRelist: (r) => {
      // Observed on the main thread from the PLEG thread's report (one message per relist).
      observeRelist(r);
      if (!r.ok) relistFailing = true;
      else if (relistFailing) {
        relistFailing = false;
        d.lifecycle.handleRuntimeReturned();
      }
    },
    clock,
    onThreadExit: (threadId) => {
      const n = cache.recoverThread(threadId);
      if (n > 0) logger.error('recovered pod cache locks of the dead PLEG thread', { threadId, locks: n });
    },
    onRestart: () => metrics.main.threadRestarts.inc(),
  });
  d.runtimeHealth.addHealthCheck('PLEG', () => {
    const h = pleg.health();
    return h.healthy ? undefined : h.reason;
  });
  return pleg;
}
