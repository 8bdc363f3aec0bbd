import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffForAttempt, jitteredMs, nextBackoffMs } from '../../../src/shared/backoff/exponential-backoff.js';

test('nextBackoffMs: doubles by default, other factors, capped; extraMs added before the cap', () => {
  const seq: number[] = [];
  for (let ms = 100; seq.length < 8; ms = nextBackoffMs(ms, { maxMs: 5_000 })) seq.push(ms);
  assert.deepEqual(seq, [100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000]);
  assert.equal(nextBackoffMs(100, { maxMs: 3_000, factor: 1.6 }), 160);
  assert.equal(nextBackoffMs(10_000, { maxMs: 300_000, extraMs: 7 }), 20_007);
  assert.equal(nextBackoffMs(200_000, { maxMs: 300_000, extraMs: 7 }), 300_000);
});

test('backoffForAttempt: initial × factor^failures, capped', () => {
  assert.deepEqual([0, 1, 2, 3, 10].map((n) => backoffForAttempt(n, { initialMs: 100, maxMs: 5_000 })), [100, 200, 400, 800, 5_000]);
});

test('jitteredMs: ±jitter around the delay, from the injected random source', () => {
  assert.equal(jitteredMs(1_000, 0.2, () => 0), 800);
  assert.equal(jitteredMs(1_000, 0.2, () => 0.5), 1_000);
  assert.equal(Math.round(jitteredMs(1_000, 0.2, () => 1)), 1_200);
});
