/**
 * A FakeClock that tells the test when code under test starts waiting: `nextSleep()` resolves
 * with the duration of the next sleep()/setTimer() call, `armed(ms)` when a timer of that
 * duration is armed, `whenPendingTimers(n)` once n timers are pending (all bounded in real
 * time), so a test steps time exactly when the code is parked, without counting event-loop turns.
 */
import type { TimerHandle } from '../../../src/shared/clock/clock.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';

export class SignalClock extends FakeClock {
  readonly #waits: number[] = [];
  #waiter: ((ms: number) => void) | undefined;
  #armWatchers: { ms: number; resolve: () => void }[] = [];
  #pendingWatchers: { n: number; resolve: () => void }[] = [];
  #nextArmWatchers: ((ms: number) => void)[] = [];

  override setTimer(ms: number, fn: () => void): TimerHandle {
    const h = super.setTimer(ms, fn);
    if (this.#pendingWatchers.length > 0) {
      const pending = this.pendingTimers;
      for (const w of this.#pendingWatchers.filter((x) => pending >= x.n)) w.resolve();
      this.#pendingWatchers = this.#pendingWatchers.filter((x) => pending < x.n);
    }
    for (const w of this.#armWatchers.filter((x) => x.ms === ms)) w.resolve();
    this.#armWatchers = this.#armWatchers.filter((x) => x.ms !== ms);
    const next = this.#nextArmWatchers;
    this.#nextArmWatchers = [];
    for (const f of next) f(ms);
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

  /**
   * Resolves when a timer of exactly `ms` is armed after this call (bounded in real time): call
   * it before the action that arms the timer, await it after.
   */
  armed(ms: number, boundMs = 5_000): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${ms} ms timer armed within ${boundMs} ms`)), boundMs);
      this.#armWatchers.push({ ms, resolve: () => { clearTimeout(t); resolve(); } });
    });
  }

  /**
   * Resolves once at least `n` timers are pending (checked now and whenever a timer is armed;
   * bounded in real time): "the code under test is parked on its timers".
   */
  whenPendingTimers(n: number, boundMs = 5_000): Promise<void> {
    if (this.pendingTimers >= n) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`fewer than ${n} timers pending after ${boundMs} ms (${this.pendingTimers})`)), boundMs);
      this.#pendingWatchers.push({ n, resolve: () => { clearTimeout(t); resolve(); } });
    });
  }

  /**
   * The duration of the first timer armed after this call (unlike nextSleep, timers armed
   * before are not considered; bounded in real time): call it before the action, await after.
   */
  nextArm(boundMs = 5_000): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no timer armed within ${boundMs} ms`)), boundMs);
      this.#nextArmWatchers.push((ms) => { clearTimeout(t); resolve(ms); });
    });
  }
}
