/** The shared probe scheduler: heap order, ticker grid, dropped ticks, removal, triggers, one timer. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { ProbeScheduler, type ScheduledProbe } from '../../../workers/prober/probe-scheduler.js';

class Entry implements ScheduledProbe {
  dueAt = 0;
  heapIndex = -1;
  triggerQueued = false;
  readonly ticks: Array<[number, boolean]> = [];
  constructor(readonly name: string, readonly periodMs: number, private readonly clock: FakeClock, private readonly onTick?: (e: Entry) => void) {}
  tick(manual: boolean): void {
    this.ticks.push([this.clock.now() - T0, manual]);
    this.onTick?.(this);
  }
}
const T0 = new FakeClock().now();

test('entries tick on their own grid, in time order, from one timer', () => {
  const clock = new FakeClock();
  const s = new ProbeScheduler({ clock });
  const order: string[] = [];
  const a = new Entry('a', 3000, clock, (e) => order.push(e.name));
  const b = new Entry('b', 5000, clock, (e) => order.push(e.name));
  s.add(a, 1000);
  s.add(b, 0);
  assert.equal(clock.pendingTimers, 1);
  clock.step(11_000);
  assert.deepEqual(a.ticks.map((t) => t[0]), [1000, 4000, 7000, 10_000]);
  assert.deepEqual(b.ticks.map((t) => t[0]), [0, 5000, 10_000]);
  assert.deepEqual(order, ['b', 'a', 'a', 'b', 'a', 'a', 'b']);
  assert.equal(clock.pendingTimers, 1);
});

test('remove unschedules (idempotent) and the last removal leaves no timer', () => {
  const clock = new FakeClock();
  const s = new ProbeScheduler({ clock });
  const es = [1, 2, 3, 4, 5].map((i) => new Entry(`e${i}`, 1000 * i, clock));
  es.forEach((e, i) => s.add(e, i * 100));
  s.remove(es[2]!);
  s.remove(es[2]!);
  assert.equal(s.size, 4);
  clock.step(5000);
  assert.deepEqual(es[2]!.ticks, []);
  assert.ok(es[0]!.ticks.length >= 5);
  for (const e of es) s.remove(e);
  assert.equal(s.size, 0);
  assert.equal(clock.pendingTimers, 0);
});

test('a stalled timer drops missed ticks instead of replaying them', () => {
  const clock = new FakeClock();
  // A clock whose timers only run when we say so, while time moves on.
  let fire: (() => void) | undefined;
  const stalled = { ...clock, now: () => clock.now(), monotonic: () => clock.monotonic(), sleep: clock.sleep.bind(clock),
    setTimer: (_ms: number, fn: () => void) => { fire = fn; return { cancel: () => { fire = undefined; } }; } };
  const s = new ProbeScheduler({ clock: stalled });
  const e = new Entry('e', 1000, clock);
  s.add(e, 0);
  fire?.();
  clock.step(3500); // the thread was busy: ticks at 1000, 2000, 3000 missed
  fire?.();
  clock.step(500);
  fire?.();
  assert.deepEqual(e.ticks.map((t) => t[0]), [0, 3500, 4000], 'one late tick, then back on the grid');
});

test('trigger ticks soon (manual), coalesces repeats, keeps the grid, ignores unscheduled entries', () => {
  const clock = new FakeClock();
  const s = new ProbeScheduler({ clock });
  const e = new Entry('e', 10_000, clock);
  s.add(e, 5000);
  clock.step(1000);
  s.trigger(e);
  s.trigger(e);
  clock.step(0);
  clock.step(4000);
  assert.deepEqual(e.ticks, [[1000, true], [5000, false]]);
  s.remove(e);
  s.trigger(e);
  clock.step(20_000);
  assert.equal(e.ticks.length, 2);
});

test('batchWindowMs fires entries due within the window in one wake-up', () => {
  const clock = new FakeClock();
  const s = new ProbeScheduler({ clock, batchWindowMs: 20 });
  const a = new Entry('a', 1000, clock);
  const b = new Entry('b', 1000, clock);
  s.add(a, 100);
  s.add(b, 110);
  clock.step(100);
  assert.deepEqual([a.ticks[0]?.[0], b.ticks[0]?.[0]], [100, 100]);
  assert.throws(() => new ProbeScheduler({ clock, batchWindowMs: 1000 }), RangeError);
});

test('close stops everything and is idempotent', () => {
  const clock = new FakeClock();
  const s = new ProbeScheduler({ clock });
  const e = new Entry('e', 1000, clock);
  s.add(e, 0);
  s.trigger(e);
  s.close();
  s.close();
  clock.step(10_000);
  assert.deepEqual(e.ticks, []);
  assert.equal(clock.pendingTimers, 0);
  assert.equal(e.heapIndex, -1);
});
