/**
 * A pass that runs now, then once every period after the previous one ended (the kubelet's
 * sliding wait.Until): never two at once, so a slow pass delays the next instead of piling up.
 * Owns one clock timer (unref'd); `close` cancels it and waits for the pass in flight. The
 * container GC, the image GC and the eviction manager run their passes through it.
 */
import type { Clock, TimerHandle } from './clock.js';

export class PeriodicPass<T> {
  readonly #clock: Clock;
  readonly #periodMs: number;
  readonly #run: () => Promise<T>;
  #timer: TimerHandle | undefined;
  #running: Promise<T> | undefined;
  #closed = false;

  /** `run` must not reject (a pass reports its own failures); `periodMs` > 0. */
  constructor(clock: Clock, periodMs: number, run: () => Promise<T>) {
    if (!(periodMs > 0)) throw new RangeError(`PeriodicPass: periodMs must be positive, got ${periodMs}`);
    this.#clock = clock;
    this.#periodMs = periodMs;
    this.#run = run;
  }

  /** The pass in flight, if any (tests await it). */
  get running(): Promise<T> | undefined {
    return this.#running;
  }

  /** Whether close() was called: a pass in flight checks it between steps to stop early. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Neither started nor closed: start() would run a pass now. */
  get idle(): boolean {
    return !this.#closed && this.#timer === undefined && this.#running === undefined;
  }

  /** A pass now, then one every period after the previous ended. Idempotent. */
  start(): void {
    if (this.idle) this.#runScheduled();
  }

  #runScheduled(): void {
    this.#timer = undefined;
    this.#running = this.#run().finally(() => {
      this.#running = undefined;
      if (!this.#closed) this.#timer = this.#clock.setTimer(this.#periodMs, () => this.#runScheduled(), { unref: true });
    });
  }

  /** Stops the timer and waits for a pass in flight. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }
}
