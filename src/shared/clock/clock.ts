/**
 * The time seam. Core logic never calls Date.now(), setTimeout or Math.random() directly; it
 * takes a Clock (and a Random for jitter) so tests step a fake clock instead of sleeping.
 */

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Wall-clock milliseconds since the epoch (what status timestamps use). */
  now(): number;
  /**
   * Monotonic milliseconds, for durations and for every time that crosses threads (pod cache
   * timestamps, the PLEG's last relist). The real clock reads the process-wide
   * CLOCK_MONOTONIC (process.hrtime), so every thread of the process reads the same time base
   * (performance.now() would not: its origin is per thread), and a wall-clock step never moves it.
   */
  monotonic(): number;
  /** Runs `fn` after `ms`; the returned handle cancels it. Real timers are unref'd when `unref` is set. */
  setTimer(ms: number, fn: () => void, opts?: { unref?: boolean }): TimerHandle;
  /** Resolves after `ms`, or rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** A source of uniform randoms in [0, 1), injected for jitter. */
export type Random = () => number;

/**
 * The longest delay Node's timers can schedule (2^31 - 1 ms, about 24.8 days). A longer delay is
 * not an error for Node: it warns (TimeoutOverflowWarning) and fires after 1 ms, so a pod with
 * `terminationGracePeriodSeconds: 400000000000` would be killed at once and a probe with a huge
 * timeout would time out at once, in a loop.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Any requested delay as one Node can schedule: a number in [0, MAX_TIMER_MS] (NaN → 0). The
 * one helper every timer and every CRI deadline goes through; a delay past the limit is served as
 * the limit (a grace period of 12,000 years ends after 24.8 days).
 */
export function clampTimerMs(ms: number): number {
  if (!(ms > 0)) return 0;
  return ms >= MAX_TIMER_MS ? MAX_TIMER_MS : ms;
}

export const realClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => Number(process.hrtime.bigint()) / 1e6,
  setTimer(ms: number, fn: () => void, opts?: { unref?: boolean }): TimerHandle {
    const t = setTimeout(fn, clampTimerMs(ms));
    if (opts?.unref) t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(realClock, ms, signal);
  },
});

export const realRandom: Random = Math.random;

/** `sleep` in terms of `setTimer`, shared by the real and fake clocks. */
export function sleepWith(clock: Pick<Clock, 'setTimer'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
