import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { TokenBucket } from '../../../src/main/apiserver/token-bucket.js';
import { isAborted } from '../../../src/main/apiserver/api-errors.js';

/** Records the order in which acquires resolve. */
function track(p: Promise<void>, order: string[], name: string): Promise<void> {
  return p.then(() => void order.push(name));
}

test('burst tokens are granted at once, then one per 1/qps seconds', async () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 5, burst: 3, clock });
  for (let i = 0; i < 3; i++) assert.equal(b.tryAcquire(), true);
  assert.equal(b.tryAcquire(), false);
  const order: string[] = [];
  const a = track(b.acquire('normal'), order, 'a');
  const c = track(b.acquire('normal'), order, 'b');
  clock.step(199);
  assert.equal(b.waiting, 2, 'no token before 1/qps has passed');
  clock.step(1);
  assert.equal(b.waiting, 1);
  await a;
  assert.deepEqual(order, ['a']);
  clock.step(200);
  await c;
  assert.deepEqual(order, ['a', 'b']);
  assert.equal(b.waiting, 0);
  assert.equal(clock.pendingTimers, 0, 'no timer armed while nobody waits');
});

test('a high-priority waiter is served before older normal waiters', async () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 10, burst: 1, clock });
  assert.equal(b.tryAcquire(), true);
  const order: string[] = [];
  const n1 = track(b.acquire('normal'), order, 'n1');
  const n2 = track(b.acquire('normal'), order, 'n2');
  const h1 = track(b.acquire('high'), order, 'h1');
  clock.step(100);
  await h1;
  clock.step(100);
  await n1;
  clock.step(100);
  await n2;
  assert.deepEqual(order, ['h1', 'n1', 'n2']);
});

test('the long-run rate never exceeds qps: burst + qps × elapsed, checked every 100 ms for 10 s', async () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 5, burst: 10, clock });
  const all: Promise<void>[] = [];
  for (let i = 0; i < 100; i++) all.push(b.acquire('normal'));
  // Grants happen synchronously in the bucket's timer; `waiting` shows them at once.
  for (let elapsed = 100; elapsed <= 10_000; elapsed += 100) {
    clock.step(100);
    const granted = 100 - b.waiting;
    assert.ok(granted <= 10 + Math.floor((5 * elapsed) / 1000), `at ${elapsed} ms: ${granted} granted`);
    assert.ok(granted >= 10 + Math.floor((5 * elapsed) / 1000) - 1, `at ${elapsed} ms: only ${granted} granted`);
  }
  clock.step(8_000); // the remaining 40 tokens
  assert.equal(b.waiting, 0);
  await Promise.all(all);
});

test('an aborted waiter is removed and rejects with ERR_API_ABORTED', async () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 1, burst: 1, clock });
  b.tryAcquire();
  const ac = new AbortController();
  const p = b.acquire('normal', ac.signal);
  ac.abort();
  await assert.rejects(p, (e: unknown) => isAborted(e));
  assert.equal(b.waiting, 0);
});

test('qps 0 means unlimited', async () => {
  const b = new TokenBucket({ qps: 0, burst: 1, clock: new FakeClock() });
  for (let i = 0; i < 1000; i++) await b.acquire('normal');
  assert.equal(b.unlimited, true);
});

test('bad options are rejected up front', () => {
  assert.throws(() => new TokenBucket({ qps: 5, burst: 0, clock: new FakeClock() }), RangeError);
  assert.throws(() => new TokenBucket({ qps: Number.NaN, burst: 1, clock: new FakeClock() }), RangeError);
});
