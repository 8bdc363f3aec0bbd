/**
 * The quiet collector (src/shared/heap/quiet-collector.ts): a thread's garbage is collected once
 * the thread has been quiet for `quietPeriods` periods and its heap grew enough since the last
 * collection; never while it is busy; at most once per `minIntervalMs`. The last test checks the
 * product's assumption that `exposeGc()` gives every worker thread started afterwards a `gc`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { exposeGc, startQuietCollector, type QuietCollection } from '../../../src/shared/heap/quiet-collector.js';

const MiB = 2 ** 20;

/** A thread whose heap and event-loop load the test sets; gc() drops the heap to `live`. */
function fakeThread(startUsed: number): { used: number; live: number; elu: number; gcCalls: number; opts: { gc: () => void; usedHeapBytes: () => number; utilization: () => number } } {
  const t = {
    used: startUsed,
    live: startUsed,
    elu: 0.9,
    gcCalls: 0,
    opts: {
      gc: () => {
        t.gcCalls++;
        t.used = t.live;
      },
      usedHeapBytes: () => t.used,
      utilization: () => t.elu,
    },
  };
  return t;
}

test('collects once after two quiet periods with enough garbage, never while busy', () => {
  const clock = new FakeClock();
  const t = fakeThread(20 * MiB);
  const seen: QuietCollection[] = [];
  const c = startQuietCollector({ clock, ...t.opts, periodMs: 1_000, quietUtilization: 0.2, quietPeriods: 2, minGarbageBytes: 16 * MiB, garbageRatio: 0.5, minIntervalMs: 30_000, onCollect: (x) => seen.push(x) });
  try {
    assert.equal(c.available, true);
    // A burst: the heap grows to 180 MiB of mostly garbage while the loop is busy.
    t.used = 180 * MiB;
    clock.step(10_000);
    assert.equal(t.gcCalls, 0, 'nothing is collected while the thread is busy');
    // The burst ends: one quiet period is not enough, the second is.
    t.elu = 0.05;
    clock.step(1_000);
    assert.equal(t.gcCalls, 0, 'one quiet period is not enough');
    clock.step(1_000);
    assert.equal(t.gcCalls, 2, 'collected after the second quiet period, in two passes (the second compacts)');
    assert.deepEqual(seen.map((x) => [x.usedBeforeBytes / MiB, x.usedAfterBytes / MiB]), [[180, 20]]);
    // Still quiet, no new garbage: no further collection.
    clock.step(60_000);
    assert.equal(t.gcCalls, 2, 'a thread that stays quiet is collected once');
    assert.equal(c.collections, 1);
  } finally {
    c.stop();
  }
});

test('a thread that is idle but whose heap keeps growing (waiting on a runtime-bound burst) is not quiet', () => {
  const clock = new FakeClock();
  const t = fakeThread(20 * MiB);
  t.elu = 0.05;
  const c = startQuietCollector({ clock, ...t.opts, periodMs: 1_000, quietPeriods: 2, quietGrowthBytes: 2 * MiB, minGarbageBytes: 16 * MiB, garbageRatio: 0.5, minIntervalMs: 0 });
  try {
    for (let s = 0; s < 30; s++) {
      t.used += 5 * MiB; // the burst's allocation: 5 MiB per second
      clock.step(1_000);
    }
    assert.equal(t.gcCalls, 0, 'no collection while the heap grows 5 MiB per period');
    clock.step(1_000); // growth stops: the first quiet period
    assert.equal(t.gcCalls, 0);
    clock.step(1_000);
    assert.ok(t.gcCalls > 0, 'collected after two periods without growth');
  } finally {
    c.stop();
  }
});

test('small growth is left to V8; growth is measured against the heap after the last collection', () => {
  const clock = new FakeClock();
  const t = fakeThread(40 * MiB);
  t.elu = 0;
  const c = startQuietCollector({ clock, ...t.opts, periodMs: 1_000, quietPeriods: 1, minGarbageBytes: 16 * MiB, garbageRatio: 0.5, minIntervalMs: 0, passes: 1, quietGrowthBytes: 64 * MiB });
  try {
    t.used = 55 * MiB; // +15 MiB: below 16 MiB and below 0.5 × 40 MiB
    clock.step(5_000);
    assert.equal(t.gcCalls, 0);
    t.used = 59 * MiB; // +19 MiB: above 16 MiB but below 20 MiB (0.5 × 40)
    clock.step(5_000);
    assert.equal(t.gcCalls, 0);
    t.used = 61 * MiB;
    clock.step(1_000);
    assert.equal(t.gcCalls, 1);
  } finally {
    c.stop();
  }
});

test('at most one collection per minIntervalMs, even when garbage keeps growing in quiet periods', () => {
  const clock = new FakeClock();
  const t = fakeThread(10 * MiB);
  t.elu = 0.01;
  const c = startQuietCollector({ clock, ...t.opts, periodMs: 1_000, quietPeriods: 1, minGarbageBytes: 1 * MiB, garbageRatio: 0, minIntervalMs: 30_000, passes: 1, quietGrowthBytes: 64 * MiB });
  try {
    for (let s = 0; s < 65; s++) {
      t.used += 4 * MiB;
      clock.step(1_000);
    }
    assert.equal(t.gcCalls, 3, `collections at ~1 s, ~31 s and ~61 s; got ${t.gcCalls}`);
  } finally {
    c.stop();
  }
});

test('stop() ends the checks; without a gc the collector is unavailable and never checks', () => {
  const clock = new FakeClock();
  const t = fakeThread(10 * MiB);
  t.elu = 0;
  const c = startQuietCollector({ clock, ...t.opts, periodMs: 1_000, quietPeriods: 1, minGarbageBytes: 0, garbageRatio: 0, minIntervalMs: 0 });
  c.stop();
  c.stop();
  t.used = 100 * MiB;
  clock.step(10_000);
  assert.equal(t.gcCalls, 0);
  const none = startQuietCollector({ clock, gc: undefined, usedHeapBytes: t.opts.usedHeapBytes, utilization: t.opts.utilization, periodMs: 1_000 });
  assert.equal(none.available, false);
  clock.step(10_000);
  assert.equal(none.collections, 0);
  none.stop();
});

test('options are validated up front', () => {
  const clock = new FakeClock();
  assert.throws(() => startQuietCollector({ clock, gc: () => {}, periodMs: 10 }), /periodMs/);
  assert.throws(() => startQuietCollector({ clock, gc: () => {}, quietUtilization: 0 }), /quietUtilization/);
  assert.throws(() => startQuietCollector({ clock, gc: () => {}, quietPeriods: 0 }), /quietPeriods/);
  assert.throws(() => startQuietCollector({ clock, gc: () => {}, minGarbageBytes: -1 }), /minGarbageBytes/);
  assert.throws(() => startQuietCollector({ clock, gc: () => {}, passes: 0 }), /passes/);
  assert.throws(() => startQuietCollector({ clock, gc: () => {}, quietGrowthBytes: 0 }), /quietGrowthBytes/);
});

test('exposeGc gives this thread a gc, and every worker thread started afterwards has the gc global', async () => {
  const gc = exposeGc();
  assert.equal(typeof gc, 'function');
  gc();
  const w = new Worker("require('node:worker_threads').parentPort.postMessage(typeof globalThis.gc)", { eval: true });
  try {
    const kind = await new Promise<unknown>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('worker did not answer within 30 s')), 30_000);
      w.once('message', (m) => (clearTimeout(t), resolve(m)));
      w.once('error', (e) => (clearTimeout(t), reject(e)));
    });
    assert.equal(kind, 'function');
  } finally {
    await w.terminate();
  }
});

test('with the real gc and the real heap, a quiet collection frees what a burst left behind', () => {
  const clock = new FakeClock();
  const gc = exposeGc();
  gc();
  const seen: QuietCollection[] = [];
  // Quiet is injected (stepping a fake clock leaves no idle time to measure); gc and heap are real.
  const c = startQuietCollector({ clock, gc, utilization: () => 0, quietGrowthBytes: 2 ** 30, periodMs: 1_000, quietPeriods: 1, minGarbageBytes: 8 * MiB, garbageRatio: 0, minIntervalMs: 0, onCollect: (x) => seen.push(x) });
  try {
    let burst: unknown[] | undefined = [];
    for (let i = 0; i < 300_000; i++) burst.push({ i, s: `pod-${i}`, a: [i] });
    burst = undefined; // garbage now, still in the heap
    clock.step(1_000);
    assert.equal(seen.length, 1, 'collected');
    const x = seen[0]!;
    assert.ok(x.usedBeforeBytes - x.usedAfterBytes > 8 * MiB, `freed ${(x.usedBeforeBytes - x.usedAfterBytes) / MiB} MiB`);
    assert.equal(burst, undefined);
  } finally {
    c.stop();
  }
});
