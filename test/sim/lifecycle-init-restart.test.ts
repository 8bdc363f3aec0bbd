/**
 * Scenario tests on the lifecycle harness (the agent's real main-thread and worker stack on one
 * FakeClock over the simulated runtime): init containers and restart policies, asserted as the
 * sequence of statuses a user watching the pod sees, stamped with fake seconds since the pod
 * was added. The PLEG relists every second, so what the runtime did shows up to 1 s later.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LifecycleHarness, container, pod } from './lifecycle-harness.js';

const T0 = 1_700_000_000_000;

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
  assert.deepEqual(h.timedTimeline('uid-web', T0), [
    '0.0s Pending init:init-a=waiting:PodInitializing init:init-b=waiting:PodInitializing app=waiting:PodInitializing',
    '1.0s Pending init:init-a=running init:init-b=waiting:PodInitializing app=waiting:PodInitializing',
    '2.0s Pending init:init-a=terminated:Completed:0+ready init:init-b=waiting:PodInitializing app=waiting:PodInitializing',
    '3.0s Pending init:init-a=terminated:Completed:0+ready init:init-b=running app=waiting:PodInitializing',
    '5.0s Pending init:init-a=terminated:Completed:0+ready init:init-b=terminated:Completed:0+ready app=waiting:PodInitializing',
    '6.0s Running init:init-a=terminated:Completed:0+ready init:init-b=terminated:Completed:0+ready app=running+ready',
  ]);
  // The runtime agrees: init-b started only after init-a exited, app only after init-b exited.
  const cs = await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-web' } });
  const times = new Map<string, { started: bigint; finished: bigint }>();
  for (const c of cs) {
    const st = (await h.cri.containerStatus(c.id)).status!;
    times.set(c.metadata!.name, { started: BigInt(st.startedAt), finished: BigInt(st.finishedAt) });
  }
  assert.ok(times.get('init-b')!.started >= times.get('init-a')!.finished);
  assert.ok(times.get('app')!.started >= times.get('init-b')!.finished);
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
  assert.deepEqual(h.timedTimeline('uid-always', T0), [
    '0.0s Pending init:init=waiting:PodInitializing app=waiting:PodInitializing',
    '1.0s Pending init:init=terminated:Error:3 app=waiting:PodInitializing',
    '2.0s Pending init:init=waiting:CrashLoopBackOff/r1 app=waiting:PodInitializing',
    '12.0s Pending init:init=terminated:Error:3/r1 app=waiting:PodInitializing',
    '13.0s Pending init:init=waiting:CrashLoopBackOff/r2 app=waiting:PodInitializing',
    '33.0s Pending init:init=terminated:Error:3/r2 app=waiting:PodInitializing',
    '34.0s Pending init:init=waiting:CrashLoopBackOff/r3 app=waiting:PodInitializing',
  ]);
  // Never: the first failure is final; the app container never started, so it stays waiting.
  assert.deepEqual(h.timedTimeline('uid-never', T0), [
    '0.0s Pending init:init=waiting:PodInitializing app=waiting:PodInitializing',
    '1.0s Failed init:init=terminated:Error:3 app=waiting:PodInitializing',
  ]);
  const apps = (await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-never' } })).map((c) => c.metadata?.name);
  assert.deepEqual(apps, ['init'], 'the app container of the failed pod was never created');
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
  await h.cri.stopPodSandbox(old!.id); // the sandbox dies under the agent: its containers with it
  await h.advance(10_000);
  assert.deepEqual(h.timedTimeline('uid-web', killedAt), [
    '0.0s Running init:init=terminated:Completed:0+ready app=running+ready',
    '1.0s Running init:init=terminated:Completed:0+ready app=terminated:Error:137',
    '2.0s Running init:init=terminated:Completed:0/r1+ready app=terminated:Error:137',
    '3.0s Running init:init=terminated:Completed:0/r1+ready app=running/r1+ready',
  ]);
  const sandboxes = (await h.cri.listPodSandbox(sel)).map((s) => `${s.metadata?.attempt}:${s.state}`).sort();
  assert.deepEqual(sandboxes, ['0:SANDBOX_NOTREADY', '1:SANDBOX_READY']);
  const inits = (await h.cri.listContainers(sel)).filter((c) => c.metadata?.name === 'init');
  assert.ok(inits.some((c) => c.podSandboxId !== old!.id && c.state === 'CONTAINER_EXITED'), 'init ran again in the new sandbox');
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
  const restarting = (reason: string): string[] => [
    '0.0s Pending app=waiting:ContainerCreating',
    '1.0s Running app=running+ready',
    `2.0s Running app=terminated:${reason}`,
    '3.0s Running app=running/r1+ready', // the first restart is immediate
    '4.0s Running app=waiting:CrashLoopBackOff/r1', // then 10 s of backoff
    `14.0s Running app=terminated:${reason}/r1`,
    '15.0s Running app=running/r2+ready',
    '16.0s Running app=waiting:CrashLoopBackOff/r2',
  ];
  const finished = (phase: string, reason: string): string[] => [
    '0.0s Pending app=waiting:ContainerCreating',
    '1.0s Running app=running+ready',
    `2.0s ${phase} app=terminated:${reason}`,
  ];
  assert.deepEqual(h.timedTimeline('uid-always-0', T0), restarting('Completed:0'));
  assert.deepEqual(h.timedTimeline('uid-always-1', T0), restarting('Error:1'));
  assert.deepEqual(h.timedTimeline('uid-onfailure-0', T0), finished('Succeeded', 'Completed:0'));
  assert.deepEqual(h.timedTimeline('uid-onfailure-1', T0), restarting('Error:1'));
  assert.deepEqual(h.timedTimeline('uid-never-0', T0), finished('Succeeded', 'Completed:0'));
  assert.deepEqual(h.timedTimeline('uid-never-1', T0), finished('Failed', 'Error:1'));
  // A Never pod is finished only when its last container is.
  assert.deepEqual(h.timedTimeline('uid-never-two', T0), [
    '0.0s Pending long=waiting:ContainerCreating short=waiting:ContainerCreating',
    '1.0s Running long=running+ready short=running+ready',
    '2.0s Running long=running+ready short=terminated:Completed:0',
    '8.0s Succeeded long=terminated:Completed:0 short=terminated:Completed:0',
  ]);
  // Finished pods are not restarted: no new container instance appears later.
  const before = (await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-never-1' } })).length;
  await h.advance(30_000);
  assert.equal((await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-never-1' } })).length, before);
  assert.equal(h.status('uid-never-1')?.phase, 'Failed');
});
