/**
 * The agent's heap policy on the main thread (issue 15): V8's `gc` is exposed to every isolate
 * before any worker thread starts, and the main thread runs a quiet collector
 * (src/shared/heap/quiet-collector.ts) that collects once the thread goes quiet after a burst.
 * The PLEG and pod-worker threads start their own collector (pleg-thread.ts,
 * pod-worker-factory.ts); the manifest decoder thread exits when idle instead
 * (manifest-decode-thread-client.ts).
 */
import type { Clock } from '../../shared/clock/clock.js';
import { exposeGc, startQuietCollector, type QuietCollector } from '../../shared/heap/quiet-collector.js';
import type { Logger } from '../../shared/logging/logger.js';

export function startAgentHeapPolicy(d: { clock: Clock; logger: Logger }): QuietCollector {
  const gc = exposeGc();
  return startQuietCollector({
    clock: d.clock,
    gc,
    onCollect: (c) => d.logger.v(2).info('Quiet heap collection', { thread: 'main', usedBeforeMiB: Math.round(c.usedBeforeBytes / 2 ** 20), usedAfterMiB: Math.round(c.usedAfterBytes / 2 ** 20), ms: Math.round(c.durationMs) }),
  });
}
