/**
 * Scenario tests on the lifecycle harness: graceful termination (grace period, a shorter
 * deletion grace overriding it), preStop and postStart exec hooks, and activeDeadlineSeconds.
 * Timings are read back from the runtime (container finishedAt) and from the status sequence.
 *
 * Pods here share their PID namespace (shareProcessNamespace): a busybox `sleep` is then not
 * PID 1, so SIGTERM ends it at once (143), as on containerd; a container that must outlive
 * SIGTERM says so with `trap "" TERM`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { LifecycleHarness, assertInOrder, container, containerView, phaseView, pod, summary } from './lifecycle-harness.js';

const T0 = 1_700_000_000_000;

/** Seconds from `sinceMs` to each container's finishedAt in the runtime, by name. */
async function finishedAfter(h: LifecycleHarness, uid: string, sinceMs: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const c of await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': uid } })) {
    const st = (await h.cri.containerStatus(c.id)).status!;
    if (st.state === 'CONTAINER_EXITED') out[c.metadata!.name] = (Number(BigInt(st.finishedAt) / 1_000_000n) - sinceMs) / 1000;
  }
  return out;
}

function twoContainers(name: string, grace: number, extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return pod(name, {
    terminationGracePeriodSeconds: grace,
    shareProcessNamespace: true,
    containers: [
      container('polite', { command: ['sleep', '3600'] }), // busybox sleep exits on SIGTERM (143)
      container('stubborn', { command: ['sh', '-c', 'trap "" TERM; sleep 3600'] }), // ignores SIGTERM
    ],
    ...extra,
  });
}

test('graceful deletion: SIGTERM at once, SIGKILL after the grace period; a shorter deletion grace wins', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(twoContainers('spec-grace', 10));
  h.apply(twoContainers('short-grace', 30));
  await h.advance(3_000);
  const deletedAt = h.clock.now();
  h.delete('uid-spec-grace'); // grace from the spec: 10 s
  h.delete('uid-short-grace', 4); // kubectl delete --grace-period=4 overrides 30 s
  await h.advance(40_000);
  assert.deepEqual(await finishedAfter(h, 'uid-spec-grace', deletedAt), { polite: 0, stubborn: 10 });
  assert.deepEqual(await finishedAfter(h, 'uid-short-grace', deletedAt), { polite: 0, stubborn: 4 });
  // The user sees the pod Running (as before the deletion) until every container is stopped,
  // then its final state; nothing is restarted, and the stopped containers stay in the runtime
  // (for logs and status) until the pod is removed.
  for (const [uid, stoppedAfter] of [['uid-spec-grace', 10], ['uid-short-grace', 4]] as const) {
    assert.deepEqual(h.timeline(uid, phaseView).filter((p) => p !== 'Pending'), ['Running', 'Failed'], uid);
    assert.equal(h.firstSeen(uid, deletedAt, (st) => st.phase === 'Failed'), stoppedAfter, `${uid}: Failed once every container stopped`);
    assert.equal(summary(h.status(uid)!), 'Failed polite=terminated:Error:143 stubborn=terminated:Error:137');
    assert.ok(!h.timeline(uid).some((l) => l.includes('/r1')), `${uid}: nothing restarted while terminating`);
  }
  const sandbox = await h.cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-spec-grace' } });
  assert.deepEqual(sandbox.map((s) => s.state), ['SANDBOX_NOTREADY']);
  // Removed from the source: its runtime objects go away.
  h.remove('uid-spec-grace');
  await h.advance(3_000);
  assert.equal((await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-spec-grace' } })).length, 0);
  assert.equal((await h.cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-spec-grace' } })).length, 0);
});

test('preStop exec hook runs before SIGTERM, within the grace period', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  const withPreStop = (name: string, grace: number, hookSeconds: number): V1Pod => pod(name, {
    terminationGracePeriodSeconds: grace,
    shareProcessNamespace: true,
    containers: [container('app', { command: ['sleep', '3600'], lifecycle: { preStop: { exec: { command: ['sh', '-c', `sleep ${hookSeconds}`] } } } })],
  });
  h.apply(withPreStop('hook-fits', 30, 3));
  h.apply(withPreStop('hook-too-long', 5, 100));
  await h.advance(3_000);
  const deletedAt = h.clock.now();
  h.delete('uid-hook-fits');
  h.delete('uid-hook-too-long');
  await h.advance(20_000);
  // SIGTERM after the 3 s hook; sleep exits on it at once.
  assert.deepEqual(await finishedAfter(h, 'uid-hook-fits', deletedAt), { app: 3 });
  // The hook is cut off at the 5 s grace period; the kubelet still gives StopContainer 2 s, and sleep exits on SIGTERM.
  assert.deepEqual(await finishedAfter(h, 'uid-hook-too-long', deletedAt), { app: 5 });
  assert.equal(h.firstSeen('uid-hook-fits', deletedAt, (st) => st.phase === 'Failed'), 3);
  assert.equal(h.firstSeen('uid-hook-too-long', deletedAt, (st) => st.phase === 'Failed'), 5);
});

test('postStart exec hook: success keeps the container; failure kills it (PostStartHookError) and it backs off', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('ok', { shareProcessNamespace: true, containers: [container('app', { command: ['sleep', '3600'], lifecycle: { postStart: { exec: { command: ['sh', '-c', 'sleep 2'] } } } })] }));
  h.apply(pod('bad', { shareProcessNamespace: true, containers: [container('app', { command: ['sleep', '3600'], lifecycle: { postStart: { exec: { command: ['sh', '-c', 'exit 7'] } } } })] }));
  await h.advance(30_000);
  // The sync that starts the container waits for its hook, so the first status comes after 2 s
  // (the kubelet would have reported ContainerCreating at 0 s).
  assert.equal(h.firstSeen('uid-ok', T0, () => true), 2);
  assert.deepEqual(h.timeline('uid-ok', containerView('app')).slice(-1), ['running+ready']);
  const ok = h.status('uid-ok')!.containerStatuses![0]!;
  assert.equal(new Date(ok.state!.running!.startedAt!).getTime(), T0, 'started before its hook ran');
  assert.equal(ok.restartCount, 0);
  assertInOrder(h.timeline('uid-bad', containerView('app')), [
    'waiting:PostStartHookError', 'waiting:CrashLoopBackOff/r1', 'waiting:CrashLoopBackOff/r2',
  ]);
  assert.ok(!h.timeline('uid-bad', containerView('app')).some((l) => l.startsWith('running')), 'never reported running');
  const bad = h.status('uid-bad')!.containerStatuses![0]!;
  assert.equal(bad.lastState?.terminated?.exitCode, 143, 'killed after its hook failed');
});

test('activeDeadlineSeconds: the pod is killed at the deadline and Fails with DeadlineExceeded', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('deadline', { activeDeadlineSeconds: 5, shareProcessNamespace: true, containers: [container('app', { command: ['sleep', '3600'] })] }));
  await h.advance(15_000);
  assert.deepEqual(h.timeline('uid-deadline', phaseView).filter((p) => p !== 'Pending'), ['Running', 'Failed']);
  assert.equal(h.firstSeen('uid-deadline', T0, (st) => st.phase === 'Failed'), 5);
  assert.equal(containerView('app')(h.status('uid-deadline')!), 'terminated:Error:143');
  const s = h.status('uid-deadline')!;
  assert.equal(s.reason, 'DeadlineExceeded');
  assert.equal(s.message, 'Pod was active on the node longer than the specified deadline');
  assert.deepEqual(await finishedAfter(h, 'uid-deadline', T0), { app: 5 });
  // Not restarted: no new instance after the deadline.
  assert.equal((await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-deadline' } })).length, 1);
});
