/**
 * Scenario tests on the lifecycle harness: CrashLoopBackOff timing (immediate first restart,
 * then 10 s doubling to a 5 min cap; reset once 10 min pass without a backoff), image pull
 * errors and their backoff, pull policies (observed through the simulated registry: a pod
 * annotated sim.shardlet.io/pull-fail fails exactly when a pull is attempted), start errors,
 * and a spec change that restarts only the changed container.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LifecycleHarness, assertInOrder, container, containerView, instancesOf, phaseView, pod, restartGapsSeconds } from './lifecycle-harness.js';

const T0 = 1_700_000_000_000;
const PULL_FAIL = { 'sim.shardlet.io/pull-fail': 'true' };

test('CrashLoopBackOff: immediate first restart, then 10 s doubling to a 5 min cap', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('crash', { containers: [container('app', { command: ['sh', '-c', 'exit 1'] })] }));
  await h.advance(20 * 60_000);
  const tries = instancesOf(h.history('uid-crash'), 'app');
  assert.ok(tries.every((i) => i.exitCode === 1 || i.exitCode === undefined));
  // Starts: 0 s, then the first restart as soon as the PLEG saw the exit (1 s), then each after
  // its backoff: 10, 20, 40, 80, 160 s, then the 5 min cap.
  assert.deepEqual(restartGapsSeconds(tries), [1, 10, 20, 40, 80, 160, 300, 300]);
  assertInOrder(h.timeline('uid-crash', containerView('app')), [
    'waiting:CrashLoopBackOff/r1', 'waiting:CrashLoopBackOff/r2', 'waiting:CrashLoopBackOff/r3', 'waiting:CrashLoopBackOff/r4',
    'waiting:CrashLoopBackOff/r5', 'waiting:CrashLoopBackOff/r6', 'waiting:CrashLoopBackOff/r7', 'waiting:CrashLoopBackOff/r8',
  ]);
  assert.deepEqual(h.timeline('uid-crash', phaseView).filter((p) => p !== 'Pending'), ['Running'], 'a crash-looping Always pod stays Running');
  const waiting = h.status('uid-crash')!.containerStatuses![0]!;
  assert.match(waiting.state?.waiting?.message ?? '', /back-off 5m0s restarting failed container=app/);
  assert.equal(waiting.lastState?.terminated?.exitCode, 1);
  assert.equal(waiting.ready, false);
});

test('the backoff resets when a container ran for more than 10 min: it restarts at once, never CrashLoopBackOff', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('slow', { containers: [container('app', { command: ['sh', '-c', 'sleep 620; exit 1'] })] }));
  h.apply(pod('fast', { containers: [container('app', { command: ['sh', '-c', 'sleep 1; exit 1'] })] }));
  await h.advance(3 * 620_000 + 5_000);
  // Each instance ran 620 s; each restart followed its exit within a relist.
  assert.deepEqual(restartGapsSeconds(instancesOf(h.history('uid-slow'), 'app')), [620, 620, 620]);
  assert.ok(!h.timeline('uid-slow').some((l) => l.includes('CrashLoopBackOff')), h.timeline('uid-slow').join('\n'));
  assert.equal(containerView('app')(h.status('uid-slow')!), 'running/r3+ready');
  assert.ok(h.timeline('uid-fast').some((l) => l.includes('CrashLoopBackOff')), 'the control pod does back off');
});

test('image pull failure: ErrImagePull, then ImagePullBackOff; retries after 10, 20, 40 s', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('bad', { containers: [container('app', { image: 'example.com/app:1', command: ['sleep', '10'] })] }, PULL_FAIL));
  await h.advance(80_000);
  assert.deepEqual(h.timedTimeline('uid-bad', T0), [
    '0.0s Pending app=waiting:ErrImagePull', // pull attempts at 0, 10, 30 and 70 s
    '1.0s Pending app=waiting:ImagePullBackOff',
    '10.0s Pending app=waiting:ErrImagePull',
    '20.0s Pending app=waiting:ImagePullBackOff',
    '30.0s Pending app=waiting:ErrImagePull',
    '40.0s Pending app=waiting:ImagePullBackOff',
    '70.0s Pending app=waiting:ErrImagePull',
    '80.0s Pending app=waiting:ImagePullBackOff',
  ]);
  const cs = h.status('uid-bad')!.containerStatuses![0]!;
  assert.match(cs.state?.waiting?.message ?? '', /Back-off pulling image "example.com\/app:1"/);
  assert.equal(cs.ready, false);
});

test('pull policies Always / IfNotPresent / Never and the default for tagged and :latest images', async (t) => {
  const h = await LifecycleHarness.start({ preloadImages: ['busybox:1.36', 'busybox:latest'] });
  t.after(() => h.close());
  const cases: Array<[string, string, 'Always' | 'IfNotPresent' | 'Never' | undefined, string]> = [
    ['always-present', 'busybox:1.36', 'Always', 'ErrImagePull'], // pulls although present
    ['ifnp-present', 'busybox:1.36', 'IfNotPresent', 'running'], // no pull
    ['ifnp-missing', 'busybox:1.37', 'IfNotPresent', 'ErrImagePull'],
    ['never-present', 'busybox:1.36', 'Never', 'running'],
    ['never-missing', 'busybox:1.99', 'Never', 'ErrImageNeverPull'],
    ['default-latest', 'busybox:latest', undefined, 'ErrImagePull'], // defaults to Always
    ['default-untagged', 'busybox', undefined, 'ErrImagePull'], // busybox:latest, Always
    ['default-tagged', 'busybox:1.36', undefined, 'running'], // defaults to IfNotPresent
  ];
  for (const [name, image, policy] of cases) {
    h.apply(pod(name, { containers: [container('app', { image, command: ['sleep', '3600'], ...(policy ? { imagePullPolicy: policy } : {}) })] }, PULL_FAIL));
  }
  await h.advance(3_000);
  const seen = cases.map(([name]) => {
    const st = h.status(`uid-${name}`)!.containerStatuses![0]!.state!;
    return `${name}=${st.running ? 'running' : (st.waiting?.reason ?? '?')}`;
  });
  assert.deepEqual(seen.map((s) => s.replace('ImagePullBackOff', 'ErrImagePull')), cases.map(([n, , , want]) => `${n}=${want}`));
  // A pod whose image was not pulled never showed a pull error; the others showed it first.
  for (const [name, , , want] of cases) {
    const app = h.timeline(`uid-${name}`, containerView('app'));
    if (want === 'running') assert.ok(!app.some((l) => /Pull/.test(l)), `${name}: ${app.join(', ')}`);
    else assert.equal(app[0], `waiting:${want}`, name);
  }
  assert.equal(h.status('uid-never-missing')!.containerStatuses![0]!.state!.waiting!.message, 'Container image "busybox:1.99" is not present with pull policy of Never');
});

test('start errors: CreateContainerError until the runtime recovers; RunContainerError then CrashLoopBackOff', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.sim.setFaults({ unavailableRate: 1, methods: ['CreateContainer'] });
  h.apply(pod('nocreate', { containers: [container('app', { command: ['sleep', '3600'] })] }));
  await h.advance(5_000);
  h.sim.setFaults({});
  h.apply(pod('nostart', { containers: [container('app', { command: ['/nonexistent'] })] }));
  await h.advance(25_000);
  assertInOrder(h.timeline('uid-nocreate', containerView('app')), ['waiting:CreateContainerError', 'running+ready'], 'nocreate');
  // Failed again at 1 s (the PLEG saw the new sandbox and resynced); retried 10 s after that.
  assert.deepEqual(instancesOf(h.history('uid-nocreate'), 'app').map((i) => (i.startedAtMs! - T0) / 1000), [11]);
  assertInOrder(h.timeline('uid-nostart', containerView('app')), [
    'waiting:RunContainerError', 'waiting:RunContainerError/r1', 'waiting:CrashLoopBackOff/r1', 'waiting:RunContainerError/r2', 'waiting:CrashLoopBackOff/r2',
  ], 'nostart');
  // The failed instance exists (exited 128, StartError) and becomes lastState: the pod is Running.
  assert.equal(h.status('uid-nostart')!.phase, 'Running');
  const cs = h.status('uid-nostart')!.containerStatuses![0]!;
  assert.equal(cs.lastState?.terminated?.reason, 'StartError');
  assert.equal(cs.lastState?.terminated?.exitCode, 128);
});

test('a changed container spec restarts only that container', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  // A shared PID namespace: `sleep` is not PID 1 there, so SIGTERM ends it at once (143).
  const p = pod('two', { shareProcessNamespace: true, containers: [container('a', { command: ['sleep', '3600'] }), container('b', { command: ['sleep', '3600'] })] });
  h.apply(p);
  await h.advance(3_000);
  const before = h.status('uid-two')!.containerStatuses!.map((c) => c.containerID);
  const changedAt = h.clock.now();
  h.apply({ ...p, spec: { ...p.spec!, containers: [p.spec!.containers[0]!, container('b', { command: ['sleep', '7200'] })] } });
  await h.advance(5_000);
  const after = h.status('uid-two')!.containerStatuses!;
  assert.equal(after[0]!.containerID, before[0], 'a kept its instance');
  assert.notEqual(after[1]!.containerID, before[1], `b got a new instance: ${h.timedTimeline('uid-two', T0).join(' | ')}`);
  assert.deepEqual(h.timeline('uid-two', containerView('a')), ['running+ready'], 'a never changed');
  assertInOrder(h.timeline('uid-two', containerView('b')), ['running+ready', 'running/r1+ready']);
  const [, b2] = instancesOf(h.history('uid-two'), 'b');
  assert.ok(b2!.startedAtMs! - changedAt <= 1000, 'b restarted within a second of the update');
  assert.equal(after[1]!.lastState?.terminated?.exitCode, 143, 'b was stopped with SIGTERM');
});
