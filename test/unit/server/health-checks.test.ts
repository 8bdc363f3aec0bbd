import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { formatGoDuration } from '../../../src/shared/clock/go-duration.js';
import { plegCheck, syncLoopCheck } from '../../../src/main/server/health-checks.js';

test('formatGoDuration prints like Go time.Duration.String()', () => {
  assert.equal(formatGoDuration(0), '0s');
  assert.equal(formatGoDuration(180_000), '3m0s');
  assert.equal(formatGoDuration(185_000), '3m5s');
  assert.equal(formatGoDuration(185_250), '3m5.25s');
  assert.equal(formatGoDuration(3_723_000), '1h2m3s');
  assert.equal(formatGoDuration(1500), '1.5s');
  assert.equal(formatGoDuration(250), '250ms');
  assert.equal(formatGoDuration(1.5), '1.5ms');
  assert.equal(formatGoDuration(0.002), '2µs');
});

test('/healthz/pleg (the agent\'s wired check): fails before the first relist and past the threshold with the kubelet message', () => {
  const clock = new FakeClock();
  let last: number | undefined;
  const check = () => plegCheck({ clock, lastRelistMs: () => last, thresholdMs: 180_000 });
  assert.deepEqual(check(), { name: 'pleg', ok: false, reason: 'pleg has yet to be successful' });
  last = clock.monotonic();
  clock.step(180_000);
  assert.equal(check().ok, true, 'exactly at the threshold is still healthy');
  clock.step(5_000);
  assert.deepEqual(check(), { name: 'pleg', ok: false, reason: 'pleg was last seen active 3m5s ago; threshold is 3m0s' });
});

test('syncloop check uses max(2 x resync, 5m)', () => {
  const clock = new FakeClock();
  const entered = clock.monotonic();
  const check = (resyncIntervalMs: number) => syncLoopCheck({ clock, latestLoopEntry: () => entered, resyncIntervalMs });
  clock.step(5 * 60_000 + 1);
  assert.deepEqual(check(60_000), { name: 'syncloop', ok: false, reason: 'sync Loop took longer than expected' });
  assert.equal(check(4 * 60_000).ok, true, '2 x 4m = 8m threshold');
  assert.equal(syncLoopCheck({ clock, latestLoopEntry: () => undefined, resyncIntervalMs: 60_000 }).ok, true);
});
