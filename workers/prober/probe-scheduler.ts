/**
 * One timer for all probe workers of a thread. The kubelet gives each probe worker a goroutine
 * and a time.Ticker; on a dense node that is thousands of independent timers. Here every worker
 * is an entry in a binary min-heap keyed by its next tick, and the scheduler keeps exactly one
 * Clock timer armed for the earliest tick (or none when idle). Ticks are allocation-free: a due
 * entry's `dueAt` advances by its period in place and sifts down.
 *
 * Ticker semantics (Go's time.Ticker): ticks stay on the grid `first + k·period` whatever the
 * probe's duration; ticks missed while the thread was busy are dropped, not replayed. Whether a
 * tick finds a probe still in flight is the entry's business (the worker remembers one pending
 * tick, as Go's ticker channel buffers one).
 *
 * Entries due within `batchWindowMs` of the earliest fire in the same wake-up, so workers whose
 * ticks fall within a few ms of each other share one timer callback. The window must be shorter
 * than the shortest period (1 s) so an entry never ticks twice in one batch.
 *
 * Ownership: `dueAt`, `heapIndex` and `triggerQueued` of an entry are written only here.
 * Times are Clock.monotonic() milliseconds.
 */
import type { Clock, TimerHandle } from '../../src/shared/clock/clock.js';

export interface ScheduledProbe {
  /** Next tick (monotonic ms). Written by the scheduler. */
  dueAt: number;
  /** Position in the heap; -1 when not scheduled. Written by the scheduler. */
  heapIndex: number;
  /** Queued for a manual trigger. Written by the scheduler. */
  triggerQueued: boolean;
  /** Tick period in ms (>= 1000). */
  readonly periodMs: number;
  /** Called on each tick (`manual` false) and each manual trigger (`manual` true). Must not throw. */
  tick(manual: boolean): void;
}

export interface ProbeSchedulerOptions {
  clock: Clock;
  /** Fire entries due within this many ms of the earliest in one wake-up (default 0, max 999). */
  batchWindowMs?: number;
}

export class ProbeScheduler {
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #heap: ScheduledProbe[] = [];
  #timer: TimerHandle | undefined;
  #timerAt = Infinity;
  #triggered: ScheduledProbe[] = [];
  #spare: ScheduledProbe[] = [];
  #flushTimer: TimerHandle | undefined;
  #closed = false;

  constructor(opts: ProbeSchedulerOptions) {
    if (!opts.clock) throw new TypeError('ProbeScheduler: clock is required');
    const w = opts.batchWindowMs ?? 0;
    if (!(w >= 0 && w < 1000)) throw new RangeError(`ProbeScheduler: batchWindowMs must be in [0, 1000), got ${w}`);
    this.#clock = opts.clock;
    this.#windowMs = w;
  }

  /** Number of scheduled entries. */
  get size(): number {
    return this.#heap.length;
  }

  /** Schedule `p`, first tick after `firstDelayMs`, then every `p.periodMs`. No-op if scheduled. */
  add(p: ScheduledProbe, firstDelayMs: number): void {
    if (this.#closed || p.heapIndex >= 0) return;
    if (!(p.periodMs >= 1000)) throw new RangeError(`ProbeScheduler: periodMs must be >= 1000, got ${p.periodMs}`);
    p.dueAt = this.#clock.monotonic() + Math.max(0, firstDelayMs);
    p.heapIndex = this.#heap.length;
    this.#heap.push(p);
    this.#siftUp(p.heapIndex);
    this.#arm();
  }

  /** Unschedule `p` (and drop a queued trigger). Idempotent. */
  remove(p: ScheduledProbe): void {
    p.triggerQueued = false;
    const i = p.heapIndex;
    if (i < 0) return;
    const last = this.#heap.pop() as ScheduledProbe;
    p.heapIndex = -1;
    if (last !== p) {
      this.#heap[i] = last;
      last.heapIndex = i;
      this.#siftDown(i);
      this.#siftUp(last.heapIndex);
    }
    // The armed timer may now be early; it re-arms when it fires. Cancel only when idle.
    if (this.#heap.length === 0) this.#cancelTimer();
  }

  /**
   * Tick `p` soon, outside the caller's stack (the kubelet's manualTriggerCh), without moving
   * its grid. Coalesced: several triggers before the flush are one extra tick.
   */
  trigger(p: ScheduledProbe): void {
    if (this.#closed || p.heapIndex < 0 || p.triggerQueued) return;
    p.triggerQueued = true;
    this.#triggered.push(p);
    this.#flushTimer ??= this.#clock.setTimer(0, this.#flush, { unref: true });
  }

  /** Stop all timers; entries stay untouched but never tick again. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelTimer();
    this.#flushTimer?.cancel();
    this.#flushTimer = undefined;
    for (const p of this.#heap) {
      p.heapIndex = -1;
      p.triggerQueued = false;
    }
    this.#heap.length = 0;
    this.#triggered.length = 0;
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    if (this.#closed) return;
    const now = this.#clock.monotonic();
    const limit = now + this.#windowMs;
    try {
      for (;;) {
        const p = this.#heap[0];
        if (p === undefined || p.dueAt > limit) break;
        // Next grid point strictly after `limit`: missed ticks are dropped (time.Ticker).
        p.dueAt += p.periodMs * (Math.floor((limit - p.dueAt) / p.periodMs) + 1);
        this.#siftDown(0);
        p.tick(false);
      }
    } finally {
      this.#arm();
    }
  };

  readonly #flush = (): void => {
    this.#flushTimer = undefined;
    const batch = this.#triggered;
    this.#triggered = this.#spare;
    this.#spare = batch;
    for (const p of batch) {
      if (!p.triggerQueued) continue;
      p.triggerQueued = false;
      if (p.heapIndex >= 0) p.tick(true);
    }
    batch.length = 0;
  };

  #arm(): void {
    const root = this.#heap[0];
    if (this.#closed || root === undefined) return this.#cancelTimer();
    if (this.#timer !== undefined && this.#timerAt <= root.dueAt) return;
    this.#cancelTimer();
    this.#timerAt = root.dueAt;
    this.#timer = this.#clock.setTimer(Math.max(0, root.dueAt - this.#clock.monotonic()), this.#onTimer, { unref: true });
  }

  #cancelTimer(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  #siftUp(i: number): void {
    const h = this.#heap;
    const p = h[i] as ScheduledProbe;
    while (i > 0) {
      const parentIdx = (i - 1) >> 1;
      const parent = h[parentIdx] as ScheduledProbe;
      if (parent.dueAt <= p.dueAt) break;
      h[i] = parent;
      parent.heapIndex = i;
      i = parentIdx;
    }
    h[i] = p;
    p.heapIndex = i;
  }

  #siftDown(i: number): void {
    const h = this.#heap;
    const n = h.length;
    const p = h[i] as ScheduledProbe;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const left = h[l] as ScheduledProbe;
      const right = h[r];
      const child = right !== undefined && right.dueAt < left.dueAt ? right : left;
      const childIdx = child === left ? l : r;
      if (p.dueAt <= child.dueAt) break;
      h[i] = child;
      child.heapIndex = i;
      i = childIdx;
    }
    h[i] = p;
    p.heapIndex = i;
  }
}
