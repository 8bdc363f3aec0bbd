/**
 * The PLEG on the main thread: the same GenericPleg the PLEG thread runs (workers/pleg/
 * generic-pleg.ts), on the same shared pod cache, with the same relist report and event
 * hand-off, but without a thread. Hollow mode (src/main/hollow) runs hundreds of nodes in one
 * process: one PLEG thread (plus its warm spare) per node would cost two isolates per node, so
 * each hollow node relists inline; a standalone agent keeps its supervised thread (pleg-runner.ts).
 *
 * Differences from the thread runner, by design:
 *  - nothing to supervise: there is no thread to die, so `threadId()` is 0, `restarts` stays 0,
 *    `standbyReady()` is false and `terminateThread()` is refused (ERR_PLEG_INLINE);
 *  - events are acknowledged as soon as `onEvents` returned (the thread runner acks on the
 *    main thread's receipt too), so the event capacity behaves the same;
 *  - a relist runs on the main thread's event loop: CRI calls are asynchronous, the cache writes
 *    and the diff are the main thread's CPU (the thread runner pays them on its own isolate).
 */
import type { Clock } from '../../shared/clock/clock.js';
import { CriClient } from '../../shared/cri/cri-client.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { PlegHealth } from '../../shared/pleg/pleg-health.js';
import type { PodLifecycleEvent } from '../../shared/pleg/pod-lifecycle-event.js';
import { attachPodCache } from '../../shared/pod-cache/pod-cache-create.js';
import { GenericPleg, GENERIC_PLEG_DEFAULTS } from '../../../workers/pleg/generic-pleg.js';
import { terminationMessageReader } from '../../../workers/runtime-status/termination-message.js';
import type { PlegRunner, RelistObservation } from './pleg-runner.js';

export interface InlinePlegOptions {
  endpoint: string;
  cacheBuffer: SharedArrayBuffer;
  relistPeriodMs?: number;
  relistThresholdMs?: number;
  eventCapacity?: number;
  rootDir?: string;
  clock: Clock;
  logger: Logger;
  onEvents: (events: PodLifecycleEvent[]) => void;
  onRelist?: (r: RelistObservation) => void;
}

export class InlinePlegError extends Error {
  readonly code = 'ERR_PLEG_INLINE';
}

/** Starts relisting at once (the first relist runs now); resolves with the runner. */
export function startInlinePleg(o: InlinePlegOptions): Promise<PlegRunner> {
  const client = new CriClient({ endpoint: o.endpoint });
  const { reader, writer } = attachPodCache(o.cacheBuffer);
  const pleg: GenericPleg = new GenericPleg({
    runtime: client,
    cache: writer,
    cacheReader: reader,
    clock: o.clock,
    logger: o.logger,
    relistPeriodMs: o.relistPeriodMs || GENERIC_PLEG_DEFAULTS.relistPeriodMs,
    relistThresholdMs: o.relistThresholdMs || GENERIC_PLEG_DEFAULTS.relistThresholdMs,
    eventCapacity: o.eventCapacity ?? GENERIC_PLEG_DEFAULTS.eventCapacity,
    ...(o.rootDir ? { messages: terminationMessageReader({ rootDir: o.rootDir }) } : {}),
    sink: (r) => {
      o.onRelist?.({ ok: r.ok, durationSeconds: r.durationSeconds, intervalSeconds: r.intervalSeconds, discarded: r.discarded, ...(r.runtimeCounts ? { runtimeCounts: r.runtimeCounts } : {}) });
      if (r.events.length > 0) {
        o.onEvents(r.events);
        pleg.ackEvents(r.events.length);
      }
    },
  });
  let closing: Promise<void> | undefined;
  pleg.start();
  const runner: PlegRunner = {
    lastRelistMs: () => pleg.lastRelistMs(),
    health: (): PlegHealth => pleg.healthy(),
    threadId: () => 0,
    standbyReady: () => false,
    hasStandby: () => false,
    restarts: 0,
    terminateThread: () => Promise.reject(new InlinePlegError('the inline PLEG has no thread to terminate')),
    close: () =>
      (closing ??= pleg.close().finally(() => client.close())),
  };
  return Promise.resolve(runner);
}
