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

export const realClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => Number(process.hrtime.bigint()) / 1e6,
  setTimer(ms: number, fn: () => void, opts?: { unref?: boolean }): TimerHandle {
    const t = setTimeout(fn, ms);
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
