/**
 * A wall-clock step backwards of one hour (NTP, `date -s`), injected with FakeClock.stepWall on
 * the lifecycle harness (the agent's real per-pod stack, PLEG and pod cache against the
 * simulated runtime, which reads the same clock, so the runtime's timestamps step back too).
 * Three things must not depend on the wall clock, and this fails without any one of them: the
 * pod cache's time base (monotonic: the PLEG's writes are not 'stale' against entries stamped
 * before the step), the order of instances (by attempt: a container created after the step is
 * not the "oldest"), and the crash-loop backoff (it runs out on monotonic time too). Pods keep
 * converging — a crashing pod keeps being restarted (PLEG events; its CrashLoopBackOff delay
 * runs out on time, not an hour late), a new pod starts, a running pod is left alone, a deleted
 * pod is torn down.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LifecycleHarness, container, pod } from './lifecycle-harness.js';

const HOUR_MS = 3_600_000;

test('pods keep converging after the wall clock steps back one hour', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('steady', { containers: [container('app', { command: ['sleep', '100000'] })] }));
  h.apply(pod('crasher', { containers: [container('app', { command: ['sh', '-c', 'sleep 2; exit 1'] })] }));
  await h.until('steady running, crasher restarted once', () =>
    h.status('uid-steady')?.phase === 'Running' && (h.status('uid-crasher')?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 60_000);
  const steadyId = h.status('uid-steady')?.containerStatuses?.[0]?.containerID;
  const restartsBefore = h.status('uid-crasher')?.containerStatuses?.[0]?.restartCount ?? 0;
  const monoAtStep = h.clock.monotonic();

  h.clock.stepWall(-HOUR_MS);
  assert.equal(h.clock.now(), monoAtStep - HOUR_MS, 'the wall clock is an hour behind');

  h.apply(pod('late', { containers: [container('app', { command: ['sleep', '100000'] })] }));
  h.delete('uid-steady', 1);
  await h.until('late running, steady gone, crasher restarted again', () =>
    h.status('uid-late')?.phase === 'Running' &&
    (h.status('uid-crasher')?.containerStatuses?.[0]?.restartCount ?? 0) >= restartsBefore + 1 &&
    ['Succeeded', 'Failed'].includes(h.status('uid-steady')?.phase ?? ''), 120_000);
  const convergedS = (h.clock.monotonic() - monoAtStep) / 1000;
  t.diagnostic(`after the step: late Running, crasher restarted, steady terminated within ${convergedS} s of fake time`);

  // The steady pod was never restarted or duplicated before its deletion.
  const steadyIds = new Set(h.history('uid-steady').map((r) => r.status.containerStatuses?.[0]?.containerID).filter((x) => x !== undefined));
  assert.deepEqual([...steadyIds], [steadyId]);
  // The runtime holds exactly one sandbox for the late pod (no duplicate from a stale read).
  const late = await h.cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-late' } });
  assert.equal(late.length, 1);
  // The crashing pod's restart count kept growing on the kubelet's backoff, not frozen.
  await h.advance(60_000);
  assert.ok((h.status('uid-crasher')?.containerStatuses?.[0]?.restartCount ?? 0) >= restartsBefore + 2, 'restarts continue after the step');
  // The cache's global timestamp is monotonic cache time: it kept moving forward.
  assert.ok(convergedS < 60, `converged in ${convergedS} s of fake time`);
});
