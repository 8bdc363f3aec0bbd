/**
 * Scenario tests on the lifecycle harness: CrashLoopBackOff timing (immediate first restart,
 * then 10 s doubling to a 5 min cap; reset once 10 min pass without a backoff), image pull
 * errors and their backoff, pull policies (observed through the simulated registry: a pod
 * annotated sim.shardlet.io/pull-fail fails exactly when a pull is attempted), start errors,
 * and a spec change that restarts only the changed container.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LifecycleHarness, container, pod } from './lifecycle-harness.js';

const T0 = 1_700_000_000_000;
const PULL_FAIL = { 'sim.shardlet.io/pull-fail': 'true' };

test('CrashLoopBackOff: immediate first restart, then 10 s doubling to a 5 min cap', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('crash', { containers: [container('app', { command: ['sh', '-c', 'exit 1'] })] }));
  await h.advance(20 * 60_000);
  assert.deepEqual(h.timedTimeline('uid-crash', T0), [
    '0.0s Pending app=waiting:ContainerCreating',
    '1.0s Running app=terminated:Error:1',
    '2.0s Running app=waiting:CrashLoopBackOff/r1',
    '11.0s Running app=terminated:Error:1/r1', // restarted 10 s after the crash at 1 s
    '12.0s Running app=waiting:CrashLoopBackOff/r2',
    '31.0s Running app=terminated:Error:1/r2', // +20 s
    '32.0s Running app=waiting:CrashLoopBackOff/r3',
    '71.0s Running app=terminated:Error:1/r3', // +40 s
    '72.0s Running app=waiting:CrashLoopBackOff/r4',
    '151.0s Running app=terminated:Error:1/r4', // +80 s
    '152.0s Running app=waiting:CrashLoopBackOff/r5',
    '311.0s Running app=terminated:Error:1/r5', // +160 s
    '312.0s Running app=waiting:CrashLoopBackOff/r6',
    '611.0s Running app=terminated:Error:1/r6', // +300 s: the cap
    '612.0s Running app=waiting:CrashLoopBackOff/r7',
    '911.0s Running app=terminated:Error:1/r7', // +300 s
    '912.0s Running app=waiting:CrashLoopBackOff/r8',
  ]);
  const waiting = h.status('uid-crash')!.containerStatuses![0]!;
  assert.match(waiting.state?.waiting?.message ?? '', /back-off 5m0s restarting failed container=app/);
  assert.equal(waiting.lastState?.terminated?.exitCode, 1);
});

test('the backoff resets when a container ran for more than 10 min: it restarts at once, never CrashLoopBackOff', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('slow', { containers: [container('app', { command: ['sh', '-c', 'sleep 620; exit 1'] })] }));
  h.apply(pod('fast', { containers: [container('app', { command: ['sh', '-c', 'sleep 1; exit 1'] })] }));
  await h.advance(3 * 620_000 + 5_000);
  assert.deepEqual(h.timedTimeline('uid-slow', T0), [
    '0.0s Pending app=waiting:ContainerCreating',
    '1.0s Running app=running+ready',
    '620.0s Running app=terminated:Error:1',
    '621.0s Running app=running/r1+ready',
    '1240.0s Running app=terminated:Error:1/r1',
    '1241.0s Running app=running/r2+ready',
    '1860.0s Running app=terminated:Error:1/r2',
    '1861.0s Running app=running/r3+ready',
  ]);
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
  const firstReason = cases.map(([name]) => `${name}=${h.timeline(`uid-${name}`)[0]!.split('=waiting:')[1] ?? '?'}`);
  assert.deepEqual(seen.map((s) => s.replace('ImagePullBackOff', 'ErrImagePull')), cases.map(([n, , , want]) => `${n}=${want}`));
  assert.deepEqual(firstReason, cases.map(([n, , , want]) => `${n}=${want === 'running' ? 'ContainerCreating' : want}`));
  assert.equal(h.status('uid-never-missing')!.containerStatuses![0]!.state!.waiting!.message, 'Container image "busybox:1.99" is not present with pull policy of Never');
});

test('start errors: CreateContainerError until the runtime recovers; RunContainerError then CrashLoopBackOff', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.sim.setFaults({ unavailableRate: 1, methods: ['CreateContainer'] });
  h.apply(pod('nocreate', { containers: [container('app', { command: ['sleep', '3600'] })] }));
  await h.advance(5_000);
  h.sim.setFaults({});
  const t1 = h.clock.now();
  h.apply(pod('nostart', { containers: [container('app', { command: ['/nonexistent'] })] }));
  await h.advance(25_000);
  assert.deepEqual(h.timedTimeline('uid-nocreate', T0), [
    '0.0s Pending app=waiting:CreateContainerError',
    // Failed again at 1 s (the PLEG saw the new sandbox and resynced); retried 10 s after that.
    '11.0s Pending app=waiting:ContainerCreating',
    '12.0s Running app=running+ready',
  ]);
  assert.deepEqual(h.timedTimeline('uid-nostart', t1), [
    '0.0s Pending app=waiting:RunContainerError',
    // The failed instance exists (exited 128, StartError) and becomes lastState: the pod is Running.
    '1.0s Running app=waiting:RunContainerError',
    '2.0s Running app=waiting:CrashLoopBackOff/r1',
    '11.0s Running app=waiting:RunContainerError/r1',
    '12.0s Running app=waiting:CrashLoopBackOff/r2',
  ]);
  const cs = h.status('uid-nostart')!.containerStatuses![0]!;
  assert.equal(cs.lastState?.terminated?.reason, 'StartError');
  assert.equal(cs.lastState?.terminated?.exitCode, 128);
});

test('a changed container spec restarts only that container', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  const p = pod('two', { containers: [container('a', { command: ['sleep', '3600'] }), container('b', { command: ['sleep', '3600'] })] });
  h.apply(p);
  await h.advance(3_000);
  const before = h.status('uid-two')!.containerStatuses!.map((c) => c.containerID);
  const changedAt = h.clock.now();
  h.apply({ ...p, spec: { ...p.spec!, containers: [p.spec!.containers[0]!, container('b', { command: ['sleep', '7200'] })] } });
  await h.advance(5_000);
  const after = h.status('uid-two')!.containerStatuses!;
  assert.equal(after[0]!.containerID, before[0], 'a kept its instance');
  assert.notEqual(after[1]!.containerID, before[1], 'b got a new instance');
  assert.deepEqual(h.timedTimeline('uid-two', changedAt), [
    '0.0s Running a=running+ready b=running+ready',
    '1.0s Running a=running+ready b=running/r1+ready',
  ]);
  assert.equal(after[1]!.lastState?.terminated?.exitCode, 143, 'b was stopped with SIGTERM');
});
