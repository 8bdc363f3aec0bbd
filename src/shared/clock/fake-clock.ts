/**
 * A deterministic Clock for tests and for the simulated runtime's replayable mode: time moves
 * only when `step()`/`stepTo()` is called, and due timers fire in time order during the step.
 * Lives in src/ (not test/) because the simulated runtime can run on it too.
 */
import { clampTimerMs, sleepWith, type Clock, type TimerHandle } from './clock.js';

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class FakeClock implements Clock {
  #now: number;
  /** What stepWall added to the wall clock only (a clock step: NTP, an operator's `date -s`). */
  #wallOffset = 0;
  #seq = 0;
  #timers: PendingTimer[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now + this.#wallOffset;
  }

  monotonic(): number {
    return this.#now;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const t: PendingTimer = { at: this.#now + clampTimerMs(ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(t);
    return { cancel: () => void (t.cancelled = true) };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /**
   * Step the wall clock alone (negative: backwards), as NTP or `date -s` does: now() moves,
   * monotonic() and timers do not.
   */
  stepWall(ms: number): void {
    this.#wallOffset += ms;
  }

  /** Number of timers not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Time of the earliest pending timer, or undefined. */
  nextTimerAt(): number | undefined {
    let best: number | undefined;
    for (const t of this.#timers) if (!t.cancelled && (best === undefined || t.at < best)) best = t.at;
    return best;
  }

  /** Advance by `ms`, firing due timers in order (timers added while stepping fire too if due). */
  step(ms: number): void {
    this.stepTo(this.#now + ms);
  }

  stepTo(target: number): void {
    for (;;) {
      this.#timers = this.#timers.filter((t) => !t.cancelled);
      let next: PendingTimer | undefined;
      for (const t of this.#timers) {
        if (t.at <= target && (next === undefined || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      }
      if (!next) break;
      this.#now = Math.max(this.#now, next.at);
      next.cancelled = true;
      next.fn();
    }
    this.#now = Math.max(this.#now, target);
  }

  /**
   * Step in increments, letting promise continuations run between them (await a macrotask
   * turn), until `done()` is true or `maxMs` of fake time passed. Returns whether done.
   */
  async runUntil(done: () => boolean, opts: { stepMs?: number; maxMs?: number } = {}): Promise<boolean> {
    const stepMs = opts.stepMs ?? 100;
    const end = this.#now + (opts.maxMs ?? 600_000);
    while (!done()) {
      if (this.#now >= end) return false;
      await new Promise<void>((r) => setImmediate(r));
      if (done()) return true;
      this.step(stepMs);
    }
    return true;
  }
}
