/**
 * A FakeClock that tells the test when code under test starts waiting: `nextSleep()` resolves
 * with the duration of the next sleep()/setTimer() call (bounded in real time), so a test steps
 * time exactly when the loop is parked, without counting event-loop turns.
 */
import type { TimerHandle } from '../../../src/shared/clock/clock.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';

export class SignalClock extends FakeClock {
  readonly #waits: number[] = [];
  #waiter: ((ms: number) => void) | undefined;

  override setTimer(ms: number, fn: () => void): TimerHandle {
    const h = super.setTimer(ms, fn);
    const w = this.#waiter;
    this.#waiter = undefined;
    if (w) w(ms);
    else this.#waits.push(ms);
    return h;
  }

  /** The duration of the next timer armed (one already armed and not yet taken first). */
  nextSleep(boundMs = 5_000): Promise<number> {
    const queued = this.#waits.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no timer armed within ${boundMs} ms`)), boundMs);
      this.#waiter = (ms) => {
        clearTimeout(t);
        resolve(ms);
      };
    });
  }
}
