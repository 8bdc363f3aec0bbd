import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { coalesceCollect } from '../../../src/main/metrics/coalesced-collect.js';

test('concurrent scrapes share one collection; a result is reused for 1 s, then collected again', async () => {
  const clock = new FakeClock();
  let n = 0;
  let release: (() => void) | undefined;
  const source = {
    collect: () =>
      new Promise<string>((resolve) => {
        n++;
        release = () => resolve(`exposition ${n}`);
      }),
  };
  const c = coalesceCollect(source, clock);
  const a = c.collect();
  const b = c.collect();
  assert.equal(n, 1, 'the second scrape waits for the first collection');
  release!();
  assert.deepEqual(await Promise.all([a, b]), ['exposition 1', 'exposition 1']);
  clock.step(999);
  assert.equal(await c.collect(), 'exposition 1');
  clock.step(1);
  const d = c.collect();
  assert.equal(n, 2);
  release!();
  assert.equal(await d, 'exposition 2');
});

test('a failed collection is not cached', async () => {
  const clock = new FakeClock();
  let fail = true;
  const c = coalesceCollect({ collect: async () => (fail ? Promise.reject(new Error('boom')) : 'ok') }, clock);
  await assert.rejects(c.collect(), /boom/);
  fail = false;
  assert.equal(await c.collect(), 'ok');
});
