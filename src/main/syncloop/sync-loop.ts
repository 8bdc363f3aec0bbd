/**
 * The main thread's syncLoop (the kubelet's syncLoop / syncLoopIteration). Each iteration
 * wakes on one of: config updates, PLEG events, probe updates, the 1 s sync tick (pods whose
 * requeue time has come) or the 2 s housekeeping tick, and handles what is ready. When the
 * runtime reports not ready, the loop backs off 100 ms → 5 s (doubling) before trying again,
 * as the kubelet does. Pod work never runs here: handlers only update desired state and send
 * updates to the pod workers (pod-lifecycle.ts).
 *
 * State machine of the loop itself: 'idle' (not started) → 'running' → 'stopped'.
 */
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import type { PodUpdate } from '../../shared/manifest/pod-update.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { ProbeUpdate } from '../../shared/protocol/probe-update.js';
import type { PodLifecycleEvent } from '../../shared/pleg/pod-lifecycle-event.js';
import type { PodLifecycle } from './pod-lifecycle.js';
import { nextBackoffMs } from '../../shared/backoff/exponential-backoff.js';

export interface ConfigUpdateSource {
  waitReady(signal?: AbortSignal): Promise<void>;
  tryNext(): PodUpdate | undefined;
}

export interface SyncLoopDeps {
  clock: Clock;
  logger: Logger;
  updates: ConfigUpdateSource;
  lifecycle: PodLifecycle;
  /** Runtime errors from the last runtime Status check (empty when healthy). */
  runtimeErrors: () => string[];
  syncPeriodMs?: number;
  housekeepingPeriodMs?: number;
  /** Observer: duration of each iteration (shardlet_sync_loop_iteration_duration_seconds). */
  onIteration?: (seconds: number) => void;
  /** Observer: main-thread time spent handling one batch of PLEG events (shardlet_pleg_events_main_thread_seconds_total). */
  onPlegEventsHandled?: (seconds: number) => void;
  /** Further housekeeping after the lifecycle's (the pod log GC), on the same tick. Must not throw. */
  onHousekeeping?: () => void;
  /** Probe results also feed readiness into status (kubelet: status manager). */
  onProbeUpdate?: (u: ProbeUpdate) => void;
}

export const SYNC_LOOP_DEFAULTS = Object.freeze({
  syncPeriodMs: 1_000,
  housekeepingPeriodMs: 2_000,
  minBackoffMs: 100,
  maxBackoffMs: 5_000,
  /** Bound on config updates handled per iteration, so one huge burst cannot starve ticks. */
  maxConfigUpdatesPerIteration: 64,
});

export type SyncLoopState = 'idle' | 'running' | 'stopped';

export class SyncLoop {
  readonly #d: SyncLoopDeps;
  #state: SyncLoopState = 'idle';
  #plegEvents: PodLifecycleEvent[] = [];
  #probeUpdates: ProbeUpdate[] = [];
  #wake: (() => void) | undefined;
  #lastIterationMs = 0;

  constructor(deps: SyncLoopDeps) {
    this.#d = deps;
  }

  get state(): SyncLoopState {
    return this.#state;
  }

  /** Monotonic ms of the last completed iteration (syncloop health, like the kubelet's syncLoopMonitor). */
  get lastIterationMs(): number {
    return this.#lastIterationMs;
  }

  pushPlegEvents(events: readonly PodLifecycleEvent[]): void {
    for (const e of events) this.#plegEvents.push(e);
    this.#wake?.();
  }

  pushProbeUpdate(u: ProbeUpdate): void {
    this.#probeUpdates.push(u);
    this.#wake?.();
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#state !== 'idle') throw new Error(`sync loop already ${this.#state}`);
    this.#state = 'running';
    const { clock } = this.#d;
    const syncPeriod = this.#d.syncPeriodMs ?? SYNC_LOOP_DEFAULTS.syncPeriodMs;
    const hkPeriod = this.#d.housekeepingPeriodMs ?? SYNC_LOOP_DEFAULTS.housekeepingPeriodMs;
    let nextSync = clock.monotonic() + syncPeriod;
    let nextHousekeeping = clock.monotonic() + hkPeriod;
    let backoff: number = SYNC_LOOP_DEFAULTS.minBackoffMs;
    this.#lastIterationMs = clock.monotonic();
    try {
      while (!signal.aborted) {
        const errors = this.#d.runtimeErrors();
        if (errors.length > 0) {
          this.#d.logger.error('skipping pod synchronization: container runtime not ready', { errors: errors.join('; '), backoffMs: backoff });
          await clock.sleep(backoff, signal).catch(() => {});
          backoff = nextBackoffMs(backoff, { maxMs: SYNC_LOOP_DEFAULTS.maxBackoffMs });
          this.#lastIterationMs = clock.monotonic();
          continue;
        }
        backoff = SYNC_LOOP_DEFAULTS.minBackoffMs;
        await this.#waitForWork(Math.min(nextSync, nextHousekeeping), signal);
        if (signal.aborted) break;
        const start = clock.monotonic();
        this.#iteration();
        const now = clock.monotonic();
        if (now >= nextSync) {
          this.#d.lifecycle.syncDue();
          nextSync = now + syncPeriod;
        }
        if (now >= nextHousekeeping) {
          this.#d.lifecycle.housekeeping();
          this.#d.onHousekeeping?.();
          nextHousekeeping = now + hkPeriod;
        }
        this.#lastIterationMs = clock.monotonic();
        this.#d.onIteration?.((this.#lastIterationMs - start) / 1000);
      }
    } finally {
      this.#state = 'stopped';
    }
  }

  /** Waits until an input is ready or the earliest tick is due. */
  async #waitForWork(untilMs: number, signal: AbortSignal): Promise<void> {
    if (this.#plegEvents.length > 0 || this.#probeUpdates.length > 0) return;
    const ac = new AbortController();
    const onAbort = (): void => ac.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let timer: TimerHandle | undefined;
    try {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        timer = this.#d.clock.setTimer(Math.max(0, untilMs - this.#d.clock.monotonic()), resolve);
        ac.signal.addEventListener('abort', () => resolve(), { once: true });
        this.#d.updates.waitReady(ac.signal).then(resolve, () => {});
      });
    } finally {
      this.#wake = undefined;
      timer?.cancel();
      ac.abort();
      signal.removeEventListener('abort', onAbort);
    }
  }

  #iteration(): void {
    const { lifecycle } = this.#d;
    for (let i = 0; i < SYNC_LOOP_DEFAULTS.maxConfigUpdatesPerIteration; i++) {
      const u = this.#d.updates.tryNext();
      if (!u) break;
      lifecycle.handleConfigUpdate(u);
    }
    if (this.#plegEvents.length > 0) {
      const events = this.#plegEvents;
      this.#plegEvents = [];
      const t0 = this.#d.clock.monotonic();
      lifecycle.handlePlegEvents(events);
      this.#d.onPlegEventsHandled?.((this.#d.clock.monotonic() - t0) / 1000);
    }
    if (this.#probeUpdates.length > 0) {
      const updates = this.#probeUpdates;
      this.#probeUpdates = [];
      for (const u of updates) {
        this.#d.onProbeUpdate?.(u);
        lifecycle.resync(u.podUID);
      }
    }
  }
}
