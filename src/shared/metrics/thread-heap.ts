/**
 * What one thread's V8 isolate holds, as `shardlet_thread_heap_bytes{thread, role, kind}`
 * (shardlet-metrics.ts). The process RSS is one number for every thread; this is how a pod's
 * and a thread's cost are told apart per thread (README, Performance).
 *
 * Sampling: `v8.getHeapStatistics()` describes the calling thread's isolate only (a few
 * microseconds, no allocation worth counting), so each thread samples itself:
 *   - main: at every collection (metrics-aggregator onCollect, wired in agent-metrics.ts);
 *   - each pod-worker thread: every THREAD_HEAP_DEFAULTS.periodMs on its injected clock
 *     ({@link startThreadHeapSampler}, wired in pod-worker-factory.ts), and once at start;
 *   - the PLEG thread: with each relist report (pleg-protocol 'relist' `heap`), recorded by main
 *     as thread="pleg" (one PLEG thread at a time; a replacement overwrites the series).
 * The manifest decoder thread is not sampled (it holds no pod state; it starts with the first
 * manifest decode and is in the process RSS only).
 */
import v8 from 'node:v8';
import type { Clock, TimerHandle } from '../clock/clock.js';
import type { MetricsRecorder } from './metrics-recorder.js';
import { threadHeapBytes } from './shardlet-metrics.js';

/** One isolate's memory, in bytes. Plain data: it crosses threads in the PLEG's relist report. */
export interface ThreadHeapSample {
  /** Heap pages resident in RAM (v8 total_physical_size): this isolate's share of RSS. */
  committedBytes: number;
  /** Live objects plus garbage not yet collected (v8 used_heap_size). */
  usedBytes: number;
  /** Off-heap memory V8 accounts for: ArrayBuffers, Buffers (v8 external_memory). */
  externalBytes: number;
}

export type ThreadRole = 'main' | 'pod-worker' | 'pleg';

export const THREAD_HEAP_DEFAULTS = Object.freeze({ periodMs: 5_000 });

/** The calling thread's isolate, now. */
export function sampleThreadHeap(): ThreadHeapSample {
  const h = v8.getHeapStatistics();
  // external_memory is in the statistics since V8 10.x (Node 18); 0 where absent.
  const external = (h as v8.HeapInfo & { external_memory?: number }).external_memory ?? 0;
  return { committedBytes: h.total_physical_size, usedBytes: h.used_heap_size, externalBytes: external };
}

/** Sets the three series of one thread. */
export function recordThreadHeap(recorder: MetricsRecorder, thread: string, role: ThreadRole, s: ThreadHeapSample): void {
  const g = recorder.gauge(threadHeapBytes);
  g.set({ thread, role, kind: 'committed' }, s.committedBytes);
  g.set({ thread, role, kind: 'used' }, s.usedBytes);
  g.set({ thread, role, kind: 'external' }, s.externalBytes);
}

export interface ThreadHeapSamplerOptions {
  recorder: MetricsRecorder;
  thread: string;
  role: ThreadRole;
  clock: Clock;
  /** Default THREAD_HEAP_DEFAULTS.periodMs. */
  periodMs?: number;
  /** Default {@link sampleThreadHeap} (tests inject a fake). */
  sample?: () => ThreadHeapSample;
}

/**
 * Records once now, then every `periodMs` until the returned stop() (idempotent). The timer is
 * unref'd: sampling never keeps a thread alive.
 */
export function startThreadHeapSampler(o: ThreadHeapSamplerOptions): { stop(): void } {
  const periodMs = o.periodMs ?? THREAD_HEAP_DEFAULTS.periodMs;
  if (!(periodMs >= 100)) throw new RangeError(`periodMs must be at least 100, got ${periodMs}`);
  const sample = o.sample ?? sampleThreadHeap;
  let timer: TimerHandle | undefined;
  let stopped = false;
  const tick = (): void => {
    if (stopped) return;
    recordThreadHeap(o.recorder, o.thread, o.role, sample());
    timer = o.clock.setTimer(periodMs, tick, { unref: true });
  };
  tick();
  return {
    stop() {
      stopped = true;
      timer?.cancel();
      timer = undefined;
    },
  };
}
