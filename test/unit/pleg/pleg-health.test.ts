import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { GenericPleg } from '../../../workers/pleg/generic-pleg.js';
import { formatGoDuration } from '../../../src/shared/clock/go-duration.js';
import { plegHealth } from '../../../src/shared/pleg/pleg-health.js';
import { FakeRuntime } from './fake-runtime.js';

test('durations print like Go\'s time.Duration', () => {
  assert.deepEqual(
    [0, 250, 1000, 1500, 59_999, 60_000, 180_000, 180_001, 3_723_500].map(formatGoDuration),
    ['0s', '250ms', '1s', '1.5s', '59.999s', '1m0s', '3m0s', '3m0.001s', '1h2m3.5s'],
  );
});

test('health: not yet successful, healthy within the threshold, unhealthy past it', () => {
  assert.deepEqual(plegHealth(undefined, 0, 180_000), { healthy: false, reason: 'pleg has yet to be successful' });
  assert.deepEqual(plegHealth(1000, 181_000, 180_000), { healthy: true, reason: '' });
  assert.deepEqual(plegHealth(1000, 181_001, 180_000), {
    healthy: false, reason: 'pleg was last seen active 3m0.001s ago; threshold is 3m0s',
  });
});

test('the PLEG turns unhealthy on the fake clock when relists keep failing past the threshold', async () => {
  const clock = new FakeClock();
  const runtime = new FakeRuntime();
  const { writer } = createPodCache({ capacity: 8 });
  const pleg = new GenericPleg({ runtime, clock, cache: writer, sink: () => {}, relistThresholdMs: 180_000 });
  assert.equal(pleg.healthy().reason, 'pleg has yet to be successful');
  await pleg.relist();
  assert.equal(pleg.healthy().healthy, true);
  const down = (): CriError => new CriError('ERR_CRI_UNAVAILABLE', 'ListPodSandbox', 'down');
  for (let k = 0; k < 180; k++) {
    clock.step(1000);
    runtime.failNext.listPodSandbox = [down()];
    await pleg.relist();
  }
  assert.deepEqual(pleg.healthy(), { healthy: true, reason: '' }, 'exactly at the threshold: still healthy');
  clock.step(1);
  assert.deepEqual(pleg.healthy(), { healthy: false, reason: 'pleg was last seen active 3m0.001s ago; threshold is 3m0s' });
  assert.equal(pleg.counters().relistErrorsTotal, 180);
  await pleg.relist();
  assert.equal(pleg.healthy().healthy, true, 'one good relist heals it');
});
