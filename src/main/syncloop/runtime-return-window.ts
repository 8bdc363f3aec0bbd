/**
 * The few seconds right after the runtime came back (the PLEG lists it again after relists that
 * could not). Every thread has its own CRI channel, and each reconnects on its own backoff
 * (100 ms doubling to 3 s): the PLEG thread's channel may be back while a pod-worker thread's
 * is still waiting for its next attempt. A pod retried at the return (PlegEventHandler
 * handleRuntimeReturned) can then fail at once on that worker ("No connection established")
 * and, without this window, wait out the 10–15 s error backoff: seen as 15 s convergence after a
 * runtime restart in the fault tests, 3 runs in 10 under load.
 *
 * Inside the window a failed pod is requeued after `retryMs` (one relist period) instead; after
 * it, results keep the backoff the worker asked for. Bounded: at most windowMs / retryMs early
 * retries per pod per return, and only while failures keep coming in that window.
 */
import type { Clock } from '../../shared/clock/clock.js';

export const RUNTIME_RETURN_WINDOW_DEFAULTS = Object.freeze({
  /** Longer than the channels' maximum reconnect backoff (3 s), so each has reconnected in it. */
  windowMs: 5_000,
  /** One relist period. */
  retryMs: 1_000,
});

export class RuntimeReturnWindow {
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #retryMs: number;
  /** Monotonic ms the window closes; -Infinity before the first return. */
  #until = -Infinity;

  constructor(clock: Clock, opts: Partial<typeof RUNTIME_RETURN_WINDOW_DEFAULTS> = {}) {
    this.#clock = clock;
    this.#windowMs = opts.windowMs ?? RUNTIME_RETURN_WINDOW_DEFAULTS.windowMs;
    this.#retryMs = opts.retryMs ?? RUNTIME_RETURN_WINDOW_DEFAULTS.retryMs;
  }

  /** The runtime is back (now). */
  open(): void {
    this.#until = this.#clock.monotonic() + this.#windowMs;
  }

  /** The requeue delay for a pod whose work failed now and asked for `requestedMs`. */
  failedRequeueMs(requestedMs: number): number {
    return this.#clock.monotonic() < this.#until ? Math.min(requestedMs, this.#retryMs) : requestedMs;
  }
}
