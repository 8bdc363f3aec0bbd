/**
 * PLEG thread entry: wires a CRI client, the attached pod cache and GenericPleg to the thread
 * protocol (pleg-protocol.ts). Thin on purpose; the logic is in generic-pleg.ts. A standby
 * thread (opts.standby) wires everything, connects its channel, posts 'ready' and starts the
 * PLEG only on 'activate'.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { realClock } from '../../src/shared/clock/clock.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { createLogger } from '../../src/shared/logging/logger.js';
import { attachPodCache } from '../../src/shared/pod-cache/pod-cache-create.js';
import { sampleThreadHeap } from '../../src/shared/metrics/thread-heap.js';
import { quietCollectionFields, startQuietCollector } from '../../src/shared/heap/quiet-collector.js';
import { GenericPleg, GENERIC_PLEG_DEFAULTS } from './generic-pleg.js';
import { terminationMessageReader } from '../runtime-status/termination-message.js';
import { PLEG_THREAD_DEFAULTS, isPlegInbound, type PlegOutbound, type PlegStartOptions } from '../../src/shared/protocol/pleg-protocol.js';

if (!parentPort) throw new Error('pleg-thread.js must run in a worker thread');
const port = parentPort;
const post = (m: PlegOutbound): void => port.postMessage(m);

function main(opts: PlegStartOptions): void {
  const logger = createLogger({ verbosity: opts.verbosity ?? 0, sink: (line) => post({ type: 'log', line }), fields: { thread: 'pleg' } });
  const client = new CriClient({ endpoint: opts.endpoint });
  const { reader, writer } = attachPodCache(opts.cacheBuffer);
  // Collects this isolate's garbage once it goes quiet after a burst (unref'd; issue 15). At
  // thousands of pods a relist every second keeps this thread about as busy in steady state as
  // in a burst, so "quiet" is looser here, and at most one per 30 s (at 5,000 pods it found
  // 25–75 MiB of new garbage every 10 s; each collection costs 0.15–0.8 s of this thread).
  startQuietCollector({ clock: realClock, quietUtilization: 0.4, minIntervalMs: 30_000, onCollect: (c) => logger.info('Quiet heap collection', quietCollectionFields(c)) });
  const pleg = new GenericPleg({
    runtime: client,
    cache: writer,
    cacheReader: reader,
    clock: realClock,
    logger,
    relistPeriodMs: opts.relistPeriodMs || GENERIC_PLEG_DEFAULTS.relistPeriodMs,
    relistThresholdMs: opts.relistThresholdMs || GENERIC_PLEG_DEFAULTS.relistThresholdMs,
    eventCapacity: opts.eventCapacity ?? GENERIC_PLEG_DEFAULTS.eventCapacity,
    inspectConcurrency: opts.inspectConcurrency ?? GENERIC_PLEG_DEFAULTS.inspectConcurrency,
    ...(opts.rootDir ? { messages: terminationMessageReader({ rootDir: opts.rootDir }) } : {}),
    sink: (r) => {
      post({ type: 'relist', ...r, heap: sampleThreadHeap() });
      postHealth();
    },
  });
  const postHealth = (): void => {
    const h = pleg.healthy();
    post({ type: 'health', health: { healthy: h.healthy, reason: h.reason, lastRelistMs: pleg.lastRelistMs() ?? null, counters: pleg.counters() } });
  };
  let healthTimer: NodeJS.Timeout | undefined;
  let started = false;
  const start = (): void => {
    if (started) return;
    started = true;
    healthTimer = setInterval(postHealth, opts.healthIntervalMs ?? PLEG_THREAD_DEFAULTS.healthIntervalMs);
    pleg.start();
    post({ type: 'started' });
  };
  port.on('message', (m: unknown) => {
    if (!isPlegInbound(m)) {
      logger.error('pleg thread: unknown message', { message: JSON.stringify(m)?.slice(0, 200) });
      return;
    }
    switch (m.type) {
      case 'ack':
        pleg.ackEvents(m.count);
        return;
      case 'activate':
        start();
        return;
      case 'stop':
        clearInterval(healthTimer);
        void pleg.close().finally(() => {
          client.close();
          post({ type: 'stopped' });
          port.close();
        });
        return;
      default: {
        const never: never = m;
        logger.error('pleg thread: unhandled message', { type: String(never) });
      }
    }
  });
  if (!opts.standby) {
    start();
    return;
  }
  // Warm the channel (connection and HTTP/2 session) so the first relist after activation
  // does not pay for it; a failure here is the runtime's, seen again by that relist.
  void client.version().catch(() => undefined).finally(() => post({ type: 'ready' }));
}

try {
  main(workerData as PlegStartOptions);
} catch (err) {
  const code = typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : 'ERR_PLEG_START';
  post({ type: 'fatal', error: { code, message: err instanceof Error ? err.message : String(err) } });
  port.close();
}
