/**
 * Bounded polling of real external state (a socket appearing, a container exiting). This is
 * the one place tests wait on something outside the process: each probe asks the system, the
 * interval only paces the asking, and the deadline turns "never" into a clear failure.
 */
import { realClock, type Clock } from '../../src/shared/clock/clock.js';

export class PollTimeoutError extends Error {
  override readonly name = 'PollTimeoutError';
  readonly code = 'ERR_HARNESS_POLL_TIMEOUT';
}

export interface PollOptions {
  /** What is awaited, for the timeout message. */
  readonly what: string;
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  readonly clock?: Clock;
}

/**
 * Calls `probe` until it returns something other than `undefined`, and returns that. A probe
 * that throws is retried; the last error is reported on timeout.
 */
export async function pollUntil<T>(probe: () => Promise<T | undefined> | T | undefined, opts: PollOptions): Promise<T> {
  const clock = opts.clock ?? realClock;
  const deadline = clock.monotonic() + opts.timeoutMs;
  const interval = opts.intervalMs ?? 50;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (clock.monotonic() >= deadline) {
      const why = lastError instanceof Error ? `: last error: ${lastError.message}` : '';
      throw new PollTimeoutError(`timed out after ${opts.timeoutMs} ms waiting for ${opts.what}${why}`);
    }
    await clock.sleep(interval);
  }
}

/**
 * Awaits a completion signal (a promise the code under test or a fake resolves) with a bound in
 * real time: the one helper for "wait for this, but never forever". The timer is cleared when
 * the signal comes, so a passing test leaves nothing armed.
 */
export async function within<T>(signal: Promise<T>, what: string, ms = 5_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PollTimeoutError(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([signal, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
