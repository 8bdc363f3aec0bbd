/**
 * Main-thread side of the PLEG thread (workers/pleg/pleg-thread.ts): spawns and SUPERVISES it,
 * forwards each relist's events to the sync loop and acknowledges them (freeing the PLEG's event
 * capacity), records relist metrics, forwards its log lines, and answers PLEG health with the
 * one check (pleg-health.ts) from the last successful relist the thread reported.
 *
 * Thread lifecycle (state machine):
 *
 *   starting ──'started'──▶ running ──exit (not asked)──▶ backoff ──timer──▶ starting ...
 *       │                      │                                      ▲
 *       └──exit/fatal──────────┴──────────────────────────────────────┘ (restart, doubling backoff)
 *   any ──close()──▶ closed
 *
 * A thread that dies is replaced after a backoff (restartBackoff.initialMs doubling to maxMs on
 * the injected Clock; reset once a replacement relists successfully). Before the replacement,
 * onThreadExit(threadId) runs so the agent can recover the pod-cache locks the dead thread held
 * (it may have died inside a cache write). The replacement starts with empty pod records; its
 * first relist is a resync (GenericPleg: pods whose cache entry matches the listing get a
 * PodSync from the entry, the others are inspected and get their events).
 *
 * Warm spare: once the live thread relists, a second thread is booted in standby (modules
 * loaded, cache attached, channel connected; it does nothing until activated). A replacement
 * activates it instead of booting a thread, which is most of a replacement's cost (0.25 s idle,
 * over 2 s on a loaded 2-core machine), then a new spare is booted once the activated one
 * relists. A spare that dies unasked is not replaced until a live thread relists again, and a
 * replacement without a ready spare starts cold as before. The spare costs one idle thread
 * (~20 MiB RSS), so it is kept only while the runtime holds pods: it boots at the first relist
 * that lists a ready sandbox or a container, and is stopped once relists have found the runtime
 * empty for `spareIdleStopMs` (an idle node pays for one PLEG thread, not two; a relist that
 * reports no counts counts as "pods present").
 * Health keeps the dead thread's last relist time, so a PLEG that cannot be restarted turns
 * unhealthy after the threshold, as the kubelet's does.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import { stderrSink, type Logger } from '../../shared/logging/logger.js';
import type { PodLifecycleEvent } from '../../shared/pleg/pod-lifecycle-event.js';
import type { PlegOutbound, PlegStartOptions, RuntimeCounts } from '../../shared/protocol/pleg-protocol.js';
import { plegHealth, type PlegHealth } from '../../shared/pleg/pleg-health.js';
import type { ThreadHeapSample } from '../../shared/metrics/thread-heap.js';
import { WORKER_HEAP_LIMITS } from '../dispatch/worker-heap-limits.js';
import { nextBackoffMs } from '../../shared/backoff/exponential-backoff.js';

/** One relist as the PLEG thread reported it (observed on the main thread). */
export interface RelistObservation {
  ok: boolean;
  durationSeconds: number;
  intervalSeconds: number | null;
  discarded: number;
  runtimeCounts?: RuntimeCounts;
  /** The PLEG thread's isolate after the relist. */
  heap?: ThreadHeapSample;
}

export interface PlegRunnerOptions extends PlegStartOptions {
  logger: Logger;
  clock: Clock;
  onEvents: (events: PodLifecycleEvent[]) => void;
  /** kubelet_pleg_relist_duration_seconds / _interval_seconds / _discard_events observers. */
  onRelist?: (r: RelistObservation) => void;
  /** A PLEG thread exited unasked (before its replacement starts): recover its cache locks here. */
  onThreadExit?: (threadId: number) => void;
  /** A replacement thread is being started (shardlet_thread_restarts_total). */
  onRestart?: () => void;
  restartBackoff?: { initialMs: number; maxMs: number };
  /** Keep a booted standby thread for the next replacement (default true; see the header). */
  warmSpare?: boolean;
  /** Observer: a standby thread booted and is ready to take over (tests await it). */
  onSpareReady?: () => void;
  /** Stop the spare once the runtime has been empty this long (ms; default 60 s). */
  spareIdleStopMs?: number;
}

export const PLEG_RUNNER_DEFAULTS = Object.freeze({ restartBackoff: Object.freeze({ initialMs: 100, maxMs: 5_000 }), warmSpare: true, spareIdleStopMs: 60_000 });

export interface PlegRunner {
  /** Monotonic ms (cache time) of the last successful relist start, or undefined before the first. */
  lastRelistMs(): number | undefined;
  /** The one PLEG health check, evaluated now. */
  health(): PlegHealth;
  /** The live thread's id, undefined while none runs (between a death and its replacement). */
  threadId(): number | undefined;
  /** Whether a booted standby thread waits to replace the live one. */
  standbyReady(): boolean;
  /** Whether a standby thread exists (booting or ready). */
  hasStandby(): boolean;
  /** Number of replacement threads started. */
  readonly restarts: number;
  /** Fault injection for tests and operators: terminate the live thread now (it is replaced). */
  terminateThread(): Promise<void>;
  close(): Promise<void>;
}

type RunnerState = 'starting' | 'running' | 'backoff' | 'closed';

const PLEG_THREAD_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../workers/pleg/pleg-thread.js');

/** Starts the PLEG thread; resolves once the first one has started (rejects if it cannot). */
export function startPleg(o: PlegRunnerOptions): Promise<PlegRunner> {
  const { logger, clock, onEvents, onRelist, onThreadExit, onRestart, onSpareReady, restartBackoff, warmSpare, spareIdleStopMs, ...start } = o;
  const spareIdleStop = spareIdleStopMs ?? PLEG_RUNNER_DEFAULTS.spareIdleStopMs;
  /** Monotonic ms since which every relist found the runtime empty; undefined: it holds pods. */
  let emptySince: number | undefined;
  const backoff = restartBackoff ?? PLEG_RUNNER_DEFAULTS.restartBackoff;
  const useSpare = warmSpare ?? PLEG_RUNNER_DEFAULTS.warmSpare;
  let state: RunnerState = 'starting';
  let worker: Worker | undefined;
  /** The warm spare (see the header); `ready` once it posted 'ready'. */
  let spare: { w: Worker; ready: boolean; exited: Promise<void> } | undefined;
  /** A spare died unasked: no new one until an activated thread relists (no spawn loop). */
  let spareBroken = false;
  let exited: Promise<void> = Promise.resolve();
  let lastRelist: number | undefined;
  let delayMs = backoff.initialMs;
  let timer: TimerHandle | undefined;
  let restarts = 0;
  let firstStart: { resolve: () => void; reject: (e: Error) => void } | undefined;

  const exitOf = (w: Worker): Promise<void> => new Promise<void>((resolve) => w.once('exit', () => resolve()));

  /** The live thread's messages. */
  const onActiveMessage = (w: Worker, m: PlegOutbound): void => {
    switch (m.type) {
      case 'ready':
        return;
      case 'started':
        state = 'running';
        firstStart?.resolve();
        firstStart = undefined;
        return;
      case 'relist':
        if (m.ok) {
          lastRelist = m.timestampMs;
          delayMs = backoff.initialMs;
          spareBroken = false;
          const c = m.runtimeCounts;
          const empty = c !== undefined && c.runningPods === 0 && c.containers.created + c.containers.running + c.containers.exited + c.containers.unknown === 0;
          if (!empty) emptySince = undefined;
          else emptySince ??= clock.monotonic();
          if (emptySince === undefined) ensureSpare();
          else if (spare?.ready === true && clock.monotonic() - emptySince >= spareIdleStop) void stopSpare();
        }
        onRelist?.({ ok: m.ok, durationSeconds: m.durationSeconds, intervalSeconds: m.intervalSeconds, discarded: m.discarded, ...(m.runtimeCounts ? { runtimeCounts: m.runtimeCounts } : {}), ...(m.heap ? { heap: m.heap } : {}) });
        if (m.events.length > 0) {
          onEvents(m.events);
          w.postMessage({ type: 'ack', count: m.events.length });
        }
        return;
      case 'health':
        return;
      case 'log':
        stderrSink(m.line);
        return;
      case 'stopped':
        return;
      case 'fatal':
        logger.error('PLEG thread failed to start', { code: m.error.code, error: m.error.message });
        return;
      default: {
        const never: never = m;
        logger.error('unknown PLEG message', { message: JSON.stringify(never) });
      }
    }
  };

  /** The live thread died unasked: recover its locks, then replace it after the backoff. */
  const onActiveExit = (id: number, code: number): void => {
    worker = undefined;
    if (state === 'closed') return;
    logger.error('PLEG thread exited; replacing it', { threadId: id, code, backoffMs: delayMs });
    try {
      onThreadExit?.(id);
    } catch (err) {
      logger.error('PLEG thread exit handling failed', { error: String(err) });
    }
    if (firstStart) {
      // The very first thread never started: the agent cannot run without a PLEG.
      firstStart.reject(new Error(`PLEG thread exited with code ${code} before starting`));
      firstStart = undefined;
      state = 'closed';
      void stopSpare();
      return;
    }
    state = 'backoff';
    timer = clock.setTimer(delayMs, () => {
      timer = undefined;
      if (state !== 'backoff') return;
      restarts++;
      onRestart?.();
      const s = spare;
      if (s?.ready) activate(s);
      else {
        // No warm spare (none yet, still booting, or broken): a cold start, the booting spare goes.
        void stopSpare();
        spawn(false);
      }
    });
    delayMs = nextBackoffMs(delayMs, { maxMs: backoff.maxMs });
  };

  /** Creates a thread; `standby` ones become the spare, the others the live thread. */
  const spawn = (standby: boolean): void => {
    const w = new Worker(PLEG_THREAD_FILE, { workerData: { ...start, standby } satisfies PlegStartOptions, resourceLimits: { ...WORKER_HEAP_LIMITS } });
    const id = w.threadId;
    const done = exitOf(w);
    if (standby) spare = { w, ready: false, exited: done };
    else {
      state = 'starting';
      worker = w;
      exited = done;
    }
    w.on('message', (m: PlegOutbound) => {
      if (worker === w) onActiveMessage(w, m);
      else if (spare?.w === w) {
        if (m.type === 'ready') {
          spare.ready = true;
          onSpareReady?.();
        } else if (m.type === 'log') stderrSink(m.line);
        else if (m.type === 'fatal') logger.error('standby PLEG thread failed to start', { code: m.error.code, error: m.error.message });
      }
    });
    w.on('error', (err) => logger.error('PLEG thread error', { threadId: id, error: err.message }));
    w.on('exit', (code) => {
      if (worker === w) onActiveExit(id, code);
      else if (spare?.w === w) {
        spare = undefined;
        if (state === 'closed') return;
        spareBroken = true;
        logger.error('standby PLEG thread exited; the next replacement starts cold', { threadId: id, code });
      }
    });
  };

  /** The spare becomes the live thread at once: no boot, its first relist is the resync. */
  const activate = (s: NonNullable<typeof spare>): void => {
    spare = undefined;
    state = 'starting';
    worker = s.w;
    exited = s.exited;
    s.w.postMessage({ type: 'activate' });
  };

  /** A spare is kept booted beside a live thread that relists (warmSpare). */
  const ensureSpare = (): void => {
    if (!useSpare || spare !== undefined || spareBroken || state !== 'running') return;
    spawn(true);
  };

  const stopSpare = async (): Promise<void> => {
    const s = spare;
    spare = undefined;
    if (!s) return;
    s.w.postMessage({ type: 'stop' });
    const kill = setTimeout(() => void s.w.terminate(), 3_000);
    await s.exited;
    clearTimeout(kill);
  };

  const runner: PlegRunner = {
    lastRelistMs: () => lastRelist,
    health: () => plegHealth(lastRelist, clock.monotonic(), start.relistThresholdMs),
    threadId: () => (state === 'running' || state === 'starting' ? worker?.threadId : undefined),
    standbyReady: () => spare?.ready === true,
    hasStandby: () => spare !== undefined,
    get restarts() {
      return restarts;
    },
    async terminateThread() {
      const w = worker;
      if (w) await w.terminate();
    },
    async close() {
      if (state === 'closed') {
        await Promise.all([exited, stopSpare()]);
        return;
      }
      state = 'closed';
      timer?.cancel();
      const spareStopped = stopSpare();
      const w = worker;
      if (w) {
        w.postMessage({ type: 'stop' });
        const kill = setTimeout(() => void w.terminate(), 3_000);
        await exited;
        clearTimeout(kill);
      }
      await spareStopped;
    },
  };
  return new Promise<PlegRunner>((resolve, reject) => {
    firstStart = { resolve: () => resolve(runner), reject };
    spawn(false);
  });
}
