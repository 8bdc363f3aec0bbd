import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CONTAINERD_PROFILE, LatencyModel, parseProfile, ProfileError } from '../../../src/simruntime/sim-latency.js';
import { sandboxConfig, startHarness, track } from './sim-harness.js';

test('CPU model: 2 cores serve 4 concurrent pod starts in two waves; more concurrency only queues', async () => {
  const clock = new FakeClock(0);
  const model = new LatencyModel(clock, parseProfile({ cores: 2, calls: { RunPodSandbox: { baseMs: 66, cpuMs: 50 } } }));
  const doneAt: number[] = [];
  const calls = [0, 1, 2, 3].map(() => model.apply('RunPodSandbox').then(() => doneAt.push(clock.now())));
  await clock.runUntil(() => doneAt.length === 4, { stepMs: 1, maxMs: 1000 });
  await Promise.all(calls);
  assert.deepEqual(doneAt, [66, 66, 116, 116]);
});

test('containerd profile: ~20 pods/s ceiling on 2 cores at concurrency 16 (fake time)', async () => {
  const clock = new FakeClock(0);
  const model = new LatencyModel(clock, CONTAINERD_PROFILE);
  let done = 0;
  const pods = 100;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pods) {
      next++;
      await model.apply('RunPodSandbox');
      await model.apply('CreateContainer');
      await model.apply('StartContainer');
      done++;
    }
  };
  const workers = Array.from({ length: 16 }, worker);
  await clock.runUntil(() => done === pods, { stepMs: 5, maxMs: 60_000 });
  await Promise.all(workers);
  const podsPerSec = pods / (clock.now() / 1000);
  assert.ok(podsPerSec > 15 && podsPerSec <= 20.5, `pods/s ${podsPerSec}`);
});

test('profile JSON is validated with the bad field named', () => {
  assert.throws(() => parseProfile({ cores: 0 }), (e: unknown) => e instanceof ProfileError && /cores/.test(e.message));
  assert.throws(() => parseProfile({ calls: { X: { baseMs: 1, cpuMs: 2 } } }), /calls.X.cpuMs/);
  assert.equal(parseProfile({ calls: { X: { baseMs: 3 } } }).calls['X']?.baseMs, 3);
});

test('latency is applied on the injected clock through gRPC (containerd profile)', async () => {
  const h = await startHarness({ profile: CONTAINERD_PROFILE });
  try {
    const t0 = h.clock.now();
    const call = track(h.client.runPodSandbox({ config: sandboxConfig() }));
    await h.clock.whenPendingTimers(1);
    // Step 1 ms at a time so each latency stage's continuation registers its timer on time.
    await h.clock.runUntil(() => h.clock.now() >= t0 + 65, { stepMs: 1, maxMs: 100 });
    assert.equal(call.done(), false);
    assert.ok(await h.clock.runUntil(call.done, { stepMs: 1, maxMs: 50 }));
    const took = h.clock.now() - t0;
    assert.ok(took >= 66 && took < 80, `took ${took} ms of fake time`);
    assert.match(await call.promise, /^[0-9a-f]{64}$/);
  } finally {
    await h.close();
  }
});
