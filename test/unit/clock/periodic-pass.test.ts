import assert from 'node:assert/strict';
import test from 'node:test';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { PeriodicPass } from '../../../src/shared/clock/periodic-pass.js';

/** A pass the test finishes by hand: how many started, and the resolver of the one in flight. */
function manualPasses(): { run: () => Promise<number>; started: () => number; finish: () => void } {
  let n = 0;
  let finish: (() => void) | undefined;
  return {
    run: () => {
      n++;
      const id = n;
      return new Promise<number>((resolve) => {
        finish = () => resolve(id);
      });
    },
    started: () => n,
    finish: () => finish?.(),
  };
}

test('PeriodicPass runs at start, then one period after the previous pass ENDED, never two at once', async () => {
  const clock = new FakeClock();
  const m = manualPasses();
  const pass = new PeriodicPass(clock, 10_000, m.run);
  pass.start();
  pass.start();
  assert.equal(m.started(), 1, 'start is idempotent');
  clock.step(30_000);
  assert.equal(m.started(), 1, 'a slow pass delays the next one instead of piling up');
  const first = pass.running;
  m.finish();
  assert.equal(await first, 1);
  assert.equal(pass.running, undefined);
  clock.step(9_999);
  assert.equal(m.started(), 1);
  clock.step(1);
  assert.equal(m.started(), 2, 'the next pass starts one period after the previous ended');
  m.finish();
  await pass.running;
});

test('PeriodicPass.close waits for the pass in flight and arms no timer after it; idle reflects the state', async () => {
  const clock = new FakeClock();
  const m = manualPasses();
  const pass = new PeriodicPass(clock, 1_000, m.run);
  assert.equal(pass.idle, true);
  pass.start();
  assert.equal(pass.idle, false);
  let closed = false;
  const closing = pass.close().then(() => {
    closed = true;
  });
  assert.equal(pass.closed, true);
  await Promise.resolve();
  assert.equal(closed, false, 'close waits for the pass in flight');
  m.finish();
  await closing;
  assert.equal(clock.nextTimerAt(), undefined, 'no timer after close');
  pass.start();
  assert.equal(m.started(), 1, 'a closed pass never starts again');
  assert.throws(() => new PeriodicPass(clock, 0, m.run), RangeError);
});
