/**
 * Scenario tests on the lifecycle harness (the agent's real main-thread and worker stack on one
 * FakeClock over the simulated runtime): init containers and restart policies.
 *
 * Each test asserts the states a user watching the pod must see, in order (`assertInOrder`:
 * how soon a status is reported may change, what is shown and its order may not), and the
 * timing from the runtime's own timestamps (container startedAt/finishedAt).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LifecycleHarness, assertInOrder, container, containerView, instancesOf, phaseView, pod } from './lifecycle-harness.js';

const T0 = 1_700_000_000_000;
const sec = (ms: number | undefined): number => ((ms ?? NaN) - T0) / 1000;

test('init containers run in order, each to completion, before the app container', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('web', {
    initContainers: [
      container('init-a', { command: ['sh', '-c', 'sleep 2'] }),
      container('init-b', { command: ['sh', '-c', 'sleep 3'] }),
    ],
    containers: [container('app', { command: ['sleep', '3600'] })],
  }));
  await h.until('Running', () => h.status('uid-web')?.phase === 'Running');
  assert.deepEqual(h.timeline('uid-web', phaseView), ['Pending', 'Running']);
  assertInOrder(h.timeline('uid-web', containerView('init-a')), ['running', 'terminated:Completed:0+ready'], 'init-a');
  assertInOrder(h.timeline('uid-web', containerView('init-b')), ['waiting:PodInitializing', 'running', 'terminated:Completed:0+ready'], 'init-b');
  assertInOrder(h.timeline('uid-web', containerView('app')), ['waiting:PodInitializing', 'running+ready'], 'app');
  // While init-a runs, init-b and app wait; app never runs before both init containers completed.
  for (const line of h.timeline('uid-web')) {
    if (line.includes('app=running')) assert.match(line, /init-a=terminated:Completed:0\+ready init:init-b=terminated:Completed:0\+ready/);
    if (line.includes('init-b=running')) assert.match(line, /init-a=terminated:Completed:0/);
  }
  const [a] = instancesOf(h.history('uid-web'), 'init-a');
  const [b] = instancesOf(h.history('uid-web'), 'init-b');
  const [app] = instancesOf(h.history('uid-web'), 'app');
  assert.deepEqual([sec(a!.startedAtMs), sec(a!.finishedAtMs)], [0, 2]);
  assert.ok(b!.startedAtMs! >= a!.finishedAtMs! && b!.finishedAtMs! - b!.startedAtMs! === 3000, 'init-b ran 3 s after init-a');
  assert.ok(app!.startedAtMs! >= b!.finishedAtMs!, 'app after init-b');
  assert.ok(sec(app!.startedAtMs) <= 7, `the app started within a relist of init-b's exit (${sec(app!.startedAtMs)} s)`);
});

test('a failing init container: retried with CrashLoopBackOff under Always; the pod Fails under Never', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  const spec = {
    initContainers: [container('init', { command: ['sh', '-c', 'sleep 1; exit 3'] })],
    containers: [container('app', { command: ['sleep', '3600'] })],
  };
  h.apply(pod('always', spec));
  h.apply(pod('never', { ...spec, restartPolicy: 'Never' }));
  await h.advance(40_000);
  assert.deepEqual(h.timeline('uid-always', phaseView), ['Pending']);
  assertInOrder(h.timeline('uid-always', containerView('init')), [
    'running', 'waiting:CrashLoopBackOff/r1', 'running/r2', 'waiting:CrashLoopBackOff/r2',
  ], 'init under Always');
  assert.deepEqual(h.timeline('uid-always', containerView('app')), ['waiting:PodInitializing'], 'app never starts');
  const tries = instancesOf(h.history('uid-always'), 'init');
  assert.ok(tries.every((i) => i.exitCode === 3 || i.exitCode === undefined));
  assert.deepEqual(tries.slice(0, 3).map((i) => sec(i.startedAtMs)), [0, 1, 12], 'retried at once, then after 10 s of backoff');

  // Never: the first failure is final; the app container never started, so it stays waiting.
  assert.deepEqual(h.timeline('uid-never', phaseView), ['Pending', 'Failed']);
  const last = h.status('uid-never')!;
  assert.equal(containerView('init')(last), 'terminated:Error:3');
  assert.equal(containerView('app')(last), 'waiting:PodInitializing');
  const names = (await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-never' } })).map((c) => c.metadata?.name);
  assert.deepEqual(names, ['init'], 'the app container of the failed pod was never created');
});

test('a new sandbox (the old one died) re-runs the init containers before restarting the app', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('web', {
    initContainers: [container('init', { command: ['sh', '-c', 'sleep 1'] })],
    containers: [container('app', { command: ['sleep', '3600'] })],
  }));
  await h.until('Running', () => h.status('uid-web')?.phase === 'Running');
  const sel = { labelSelector: { 'io.kubernetes.pod.uid': 'uid-web' } };
  const [old] = await h.cri.listPodSandbox(sel);
  const killedAt = h.clock.now();
  await h.cri.stopPodSandbox(old!.id); // the sandbox dies under the agent, its containers with it
  await h.advance(10_000);
  assertInOrder(h.timeline('uid-web', containerView('init')).slice(-3), ['terminated:Completed:0/r1+ready']);
  assert.equal(containerView('app')(h.status('uid-web')!), 'running/r1+ready');
  const sandboxes = (await h.cri.listPodSandbox(sel)).map((s) => `${s.metadata?.attempt}:${s.state}`).sort();
  assert.deepEqual(sandboxes, ['0:SANDBOX_NOTREADY', '1:SANDBOX_READY']);
  const [init2] = instancesOf(h.history('uid-web'), 'init').filter((i) => i.startedAtMs! > killedAt);
  const [app2] = instancesOf(h.history('uid-web'), 'app').filter((i) => i.startedAtMs! > killedAt);
  assert.ok(init2 && app2 && app2.startedAtMs! >= init2.finishedAtMs!, 'in the new sandbox, init ran to completion before the app restarted');
});

test('restart policies: which exits restart, and when the pod is finished', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  for (const policy of ['Always', 'OnFailure', 'Never'] as const) {
    for (const code of [0, 1]) {
      h.apply(pod(`${policy.toLowerCase()}-${code}`, { restartPolicy: policy, containers: [container('app', { command: ['sh', '-c', `sleep 2; exit ${code}`] })] }));
    }
  }
  h.apply(pod('never-two', { restartPolicy: 'Never', containers: [
    container('short', { command: ['sh', '-c', 'sleep 2; exit 0'] }),
    container('long', { command: ['sh', '-c', 'sleep 8; exit 0'] }),
  ] }));
  await h.advance(20_000);
  const app = containerView('app');
  for (const uid of ['uid-always-0', 'uid-always-1', 'uid-onfailure-1']) {
    assert.deepEqual(h.timeline(uid, phaseView).filter((p) => p !== 'Pending'), ['Running'], uid);
    assertInOrder(h.timeline(uid, app), ['running+ready', 'running/r1+ready', 'waiting:CrashLoopBackOff/r1', 'running/r2+ready'], uid);
    // Restarts: at once after the first exit (2 s), then 10 s of backoff after the second.
    assert.deepEqual(instancesOf(h.history(uid), 'app').slice(0, 3).map((i) => sec(i.startedAtMs)), [0, 2, 14], uid);
  }
  const finished = (uid: string, phase: string, last: string): void => {
    assert.deepEqual(h.timeline(uid, phaseView).filter((p) => p !== 'Pending'), ['Running', phase], uid);
    assert.deepEqual(h.timeline(uid, app).slice(-2), ['running+ready', last], uid);
    assert.equal(instancesOf(h.history(uid), 'app').length, 1, `${uid}: never restarted`);
  };
  finished('uid-onfailure-0', 'Succeeded', 'terminated:Completed:0');
  finished('uid-never-0', 'Succeeded', 'terminated:Completed:0');
  finished('uid-never-1', 'Failed', 'terminated:Error:1');
  // A Never pod is finished only when its last container is.
  assert.equal(h.firstSeen('uid-never-two', T0, (s) => s.phase === 'Succeeded'), h.firstSeen('uid-never-two', T0, (s) => containerView('long')(s) === 'terminated:Completed:0'));
  assert.ok(h.timeline('uid-never-two').some((l) => l.startsWith('Running') && l.includes('short=terminated:Completed:0')));
  // Finished pods stay finished: no new container instance later.
  const before = (await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-never-1' } })).length;
  await h.advance(30_000);
  assert.equal((await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-never-1' } })).length, before);
  assert.equal(h.status('uid-never-1')?.phase, 'Failed');
});
