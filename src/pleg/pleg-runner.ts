/**
 * Main-thread side of the PLEG thread (workers/pleg/pleg-thread.ts): spawns it, forwards each
 * relist's events to the sync loop and acknowledges them (freeing the PLEG's event capacity),
 * records relist metrics, forwards its log lines, and answers health from the last snapshot.
 * The relist itself and all cache writes happen on the PLEG thread: the main thread never
 * lists containers.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { stderrSink, type Logger } from '../logging/logger.js';
import type { PlegEvent } from '../syncloop/pleg-events.js';
import type { PlegOutbound, PlegStartOptions, RuntimeCounts } from '../../workers/pleg/pleg-protocol.js';

export interface PlegRunnerOptions extends PlegStartOptions {
  logger: Logger;
  onEvents: (events: PlegEvent[]) => void;
  /** kubelet_pleg_relist_duration_seconds / _interval_seconds / _discard_events observers. */
  onRelist?: (r: { ok: boolean; durationSeconds: number; intervalSeconds: number | null; discarded: number; runtimeCounts?: RuntimeCounts }) => void;
  /** The thread died unexpectedly (the agent restarts it). */
  onExit?: (code: number) => void;
}

export interface PlegRunner {
  /** Wall-clock ms of the last successful relist start, or undefined before the first. */
  lastRelistMs(): number | undefined;
  close(): Promise<void>;
}

const PLEG_THREAD_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../workers/pleg/pleg-thread.js');

export function startPleg(o: PlegRunnerOptions): Promise<PlegRunner> {
  const { logger, onEvents, onRelist, onExit, ...start } = o;
  const worker = new Worker(PLEG_THREAD_FILE, { workerData: start satisfies PlegStartOptions });
  let lastRelist: number | undefined;
  let closing = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return new Promise<PlegRunner>((resolve, reject) => {
    const runner: PlegRunner = {
      lastRelistMs: () => lastRelist,
      async close() {
        if (closing) return exited;
        closing = true;
        worker.postMessage({ type: 'stop' });
        const timer = setTimeout(() => void worker.terminate(), 3_000);
        await exited;
        clearTimeout(timer);
      },
    };
    worker.on('message', (m: PlegOutbound) => {
      switch (m.type) {
        case 'started':
          resolve(runner);
          return;
        case 'relist':
          if (m.ok) lastRelist = m.timestampMs;
          onRelist?.({ ok: m.ok, durationSeconds: m.durationSeconds, intervalSeconds: m.intervalSeconds, discarded: m.discarded, ...(m.runtimeCounts ? { runtimeCounts: m.runtimeCounts } : {}) });
          if (m.events.length > 0) {
            onEvents(m.events.map((e) => ({ podUID: e.id, type: e.type, data: e.data })));
            worker.postMessage({ type: 'ack', count: m.events.length });
          }
          return;
        case 'health':
          if (m.health.lastRelistMs !== null) lastRelist = m.health.lastRelistMs;
          return;
        case 'log':
          stderrSink(m.line);
          return;
        case 'stopped':
          return;
        case 'fatal':
          logger.error('PLEG thread failed', { code: m.error.code, error: m.error.message });
          reject(new Error(`PLEG thread failed to start: ${m.error.message}`));
          return;
        default: {
          const never: never = m;
          logger.error('unknown PLEG message', { message: JSON.stringify(never) });
        }
      }
    });
    worker.on('error', (err) => {
      logger.error('PLEG thread error', { error: err.message });
      reject(err);
    });
    worker.on('exit', (code) => {
      if (!closing) {
        logger.error('PLEG thread exited', { code });
        onExit?.(code);
      }
    });
  });
}
