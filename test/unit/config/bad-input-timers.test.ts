/**
 * Out-of-range durations (issue 10, item 18). Admission rejects what the API server rejects
 * (bad-input-decode.test.ts); what remains valid can still be far beyond what Node's timers take
 * (2^31 - 1 ms): `terminationGracePeriodSeconds: 400000000000` is a valid int64. Node does not
 * throw on such a delay, it fires after 1 ms, and a CRI deadline built from it is an invalid
 * Date. Every timer and CRI deadline goes through clampTimerMs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clampTimerMs, MAX_TIMER_MS, realClock } from '../../../src/shared/clock/clock.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CriClient } from '../../../src/shared/cri/cri-client.js';
import { runPod, startHarness } from '../simruntime/sim-harness.js';

test('18: clampTimerMs maps any delay into what Node schedules', () => {
  assert.equal(clampTimerMs(400_000_000_000 * 1000), MAX_TIMER_MS);
  assert.equal(clampTimerMs(Number.POSITIVE_INFINITY), MAX_TIMER_MS);
  assert.equal(clampTimerMs(Number.NaN), 0);
  assert.equal(clampTimerMs(-5), 0);
  assert.equal(clampTimerMs(1500), 1500);
});

test('18: a timer past the limit does not fire early (Node would fire it after 1 ms)', async () => {
  let fired = false;
  const huge = realClock.setTimer(400_000_000_000 * 1000, () => (fired = true), { unref: true });
  try {
    // Node fires an out-of-range delay after 1 ms; timers fire in due order, so once a 2 ms
    // sentinel has fired, an unclamped huge timer would have fired before it.
    await new Promise<void>((resolve) => realClock.setTimer(2, resolve));
    assert.equal(fired, false);
  } finally {
    huge.cancel();
  }
  const fake = new FakeClock();
  let f = false;
  fake.setTimer(Number.POSITIVE_INFINITY, () => (f = true));
  fake.step(MAX_TIMER_MS - 1);
  assert.equal(f, false);
  fake.step(1);
  assert.equal(f, true, 'the fake clock clamps the same way');
});

test('18: CRI calls with a huge grace period or probe timeout run (no invalid deadline, no int64 overflow)', async () => {
  const h = await startHarness();
  const client = new CriClient({ endpoint: h.rt.endpoint, timeoutMs: 10_000 });
  try {
    const { containerId } = await runPod(h, ['sleep', '100000']);
    const r = await client.execSync({ containerId, cmd: ['true'], timeout: '9223372036854775808' });
    assert.equal(r.exitCode, 0);
    await client.stopContainer(containerId, 400_000_000_000); // sleep ends on SIGTERM
    const st = await client.containerStatus(containerId);
    assert.equal(st.status?.state, 'CONTAINER_EXITED');
  } finally {
    client.close();
    await h.close();
  }
});
