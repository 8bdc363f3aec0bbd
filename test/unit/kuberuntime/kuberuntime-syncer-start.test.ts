/**
 * Scenario tests of KubeRuntimeSyncer.syncPod over the fake CRI runtime and a fake clock: the CRI
 * calls issued and the statuses a user would see over several syncs, for starting pods: init
 * containers, crash loops, image pulls, spec changes, restart policies, deadlines, probes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { condition, container, makeHarness, makePod, summary } from './kuberuntime-harness.js';

test('first sync creates the sandbox, pulls and starts; the next sync reports Running', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.registry.add('busybox:1');
  const pod = makePod({ containers: [container('app', { command: ['sleep'], args: ['1000'] })] });

  const first = await h.sync(pod);
  assert.deepEqual(h.take(), [
    'RunPodSandbox web attempt=0',
    'PodSandboxStatus web',
    'ImageStatus busybox:1',
    'PullImage busybox:1',
    'ImageStatus busybox:1', // the image's user (the kubelet's getImageUser), unknown after a pull
    'CreateContainer app',
    'StartContainer app',
  ]);
  assert.equal(first.isTerminal, false);
  assert.equal(first.error, undefined);
  assert.equal(summary(first.apiStatus), 'Pending app=waiting:ContainerCreating');
  assert.equal(condition(first.apiStatus, 'PodScheduled'), 'True');

  const second = await h.sync(pod);
  assert.deepEqual(h.take(), []);
  assert.equal(summary(second.apiStatus), 'Running app=running');
  const cs = second.apiStatus.containerStatuses![0]!;
  assert.match(cs.containerID!, /^containerd:\/\/c-\d+$/);
  assert.equal(cs.ready, true);
  assert.equal(cs.started, true);
  assert.equal(cs.image, 'busybox:1');
  assert.match(cs.imageID, /^sha256:/);
  assert.equal(second.apiStatus.podIP, '10.88.0.2');
  assert.deepEqual(second.apiStatus.podIPs, [{ ip: '10.88.0.2' }]);
  assert.equal(second.apiStatus.hostIP, '192.168.1.10');
  assert.equal(second.apiStatus.qosClass, 'BestEffort');
  assert.equal(second.apiStatus.startTime?.getTime(), 1_700_000_000_000);
  for (const type of ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady']) assert.equal(condition(second.apiStatus, type), 'True', type);

  // The same status without a sync, from the runtime status alone.
  assert.equal(summary(h.syncer.generateAPIStatus(pod, h.rt.podStatus('uid-web'))), 'Running app=running');
  assert.deepEqual(h.take(), []);

  const cfg = h.rt.lastConfigOf('app');
  assert.deepEqual(cfg.command, ['sleep']);
  assert.deepEqual(cfg.args, ['1000']);
  assert.equal(cfg.logPath, 'app/0.log');
});

test('init containers run one at a time, in order, before any app container', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ initContainers: [container('init-a'), container('init-b')], containers: [container('app')] });

  let out = await h.sync(pod);
  assert.deepEqual(h.take(), ['RunPodSandbox web attempt=0', 'PodSandboxStatus web', 'ImageStatus busybox:1', 'CreateContainer init-a', 'StartContainer init-a']);
  assert.equal(summary(out.apiStatus), 'Pending init:init-a=waiting:PodInitializing init:init-b=waiting:PodInitializing app=waiting:PodInitializing');
  assert.equal(condition(out.apiStatus, 'Initialized'), 'False:ContainersNotInitialized');

  out = await h.sync(pod); // init-a still running: nothing to do
  assert.deepEqual(h.take(), []);
  assert.equal(summary(out.apiStatus), 'Pending init:init-a=running init:init-b=waiting:PodInitializing app=waiting:PodInitializing');

  h.rt.exitContainer('init-a', 0);
  out = await h.sync(pod);
  assert.deepEqual(h.take(), ['CreateContainer init-b', 'StartContainer init-b']);

  h.rt.exitContainer('init-b', 0);
  out = await h.sync(pod);
  assert.deepEqual(h.take(), ['CreateContainer app', 'StartContainer app']);
  assert.equal(condition(out.apiStatus, 'Initialized'), 'True');

  out = await h.sync(pod);
  assert.equal(summary(out.apiStatus), 'Running init:init-a=terminated:Completed:0 init:init-b=terminated:Completed:0 app=running');
  assert.equal(out.apiStatus.initContainerStatuses![0]!.ready, true);
});

test('a failing init container is retried with backoff (Always) and fails the pod (Never)', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ initContainers: [container('init')], containers: [container('app')] });
  await h.sync(pod);
  h.rt.exitContainer('init', 1);
  h.take();
  let out = await h.sync(pod);
  assert.deepEqual(h.take(), ['CreateContainer init', 'StartContainer init']);
  h.rt.exitContainer('init', 1);
  out = await h.sync(pod);
  assert.deepEqual(h.take(), []);
  assert.equal(summary(out.apiStatus), 'Pending init:init=waiting:CrashLoopBackOff/r1 app=waiting:PodInitializing');
  assert.equal(out.requeueAfterMs, 10_000);

  const h2 = makeHarness();
  t.after(h2.cleanup);
  h2.rt.addImage('busybox:1');
  const never = makePod({ restartPolicy: 'Never', initContainers: [container('init')], containers: [container('app')] }, { name: 'job' });
  await h2.sync(never);
  h2.rt.exitContainer('init', 3);
  h2.take();
  const failed = await h2.sync(never);
  assert.deepEqual(h2.take(), []);
  assert.equal(failed.isTerminal, true);
  assert.equal(summary(failed.apiStatus), 'Failed init:init=terminated:Error:3 app=waiting:PodInitializing');
});

test('CrashLoopBackOff: immediate first restart, then 10s, 20s, 40s with restartCount', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app')] });
  await h.sync(pod);
  h.take();

  h.rt.exitContainer('app', 1);
  let out = await h.sync(pod);
  assert.deepEqual(h.take(), ['CreateContainer app', 'StartContainer app'], 'first restart is immediate');
  assert.equal(h.rt.lastConfigOf('app').metadata.attempt, 1);

  const seen: string[] = [];
  for (const delay of [10_000, 20_000, 40_000]) {
    h.rt.exitContainer('app', 1);
    out = await h.sync(pod);
    assert.deepEqual(h.take(), [], 'no start while backing off');
    assert.equal(out.requeueAfterMs, delay);
    const st = out.apiStatus.containerStatuses![0]!;
    seen.push(`${summary(out.apiStatus)} | ${st.state?.waiting?.message} | last=${st.lastState?.terminated?.exitCode}`);
    assert.equal(out.error?.code, 'ERR_CRASH_LOOP_BACKOFF');

    h.clock.step(delay - 1);
    await h.sync(pod);
    assert.deepEqual(h.take(), [], 'still backing off 1 ms before expiry');
    h.clock.step(1);
    await h.sync(pod);
    const calls = h.take();
    assert.ok(calls.includes('StartContainer app'), `restart at expiry: ${calls.join(', ')}`);
  }
  assert.deepEqual(seen, [
    'Running app=waiting:CrashLoopBackOff/r1 | back-off 10s restarting failed container=app pod=web_default(uid-web) | last=1',
    'Running app=waiting:CrashLoopBackOff/r2 | back-off 20s restarting failed container=app pod=web_default(uid-web) | last=1',
    'Running app=waiting:CrashLoopBackOff/r3 | back-off 40s restarting failed container=app pod=web_default(uid-web) | last=1',
  ]);
  assert.equal(h.rt.lastConfigOf('app').metadata.attempt, 4);
  assert.equal(h.rt.lastConfigOf('app').logPath, 'app/4.log');
  // Dead instances are pruned to one per container before each restart.
  assert.equal(h.rt.podStatus('uid-web').containers.filter((c) => c.state === 'CONTAINER_EXITED').length, 1);

  out = await h.sync(pod);
  assert.equal(summary(out.apiStatus), 'Running app=running/r4');
  assert.equal(out.apiStatus.containerStatuses![0]!.lastState?.terminated?.reason, 'Error');
});

test('the crash backoff caps at 5m and resets after 10 minutes without a failure', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app')] });
  await h.sync(pod);
  const delays: number[] = [];
  for (let i = 0; i < 8; i++) {
    h.rt.exitContainer('app', 1);
    const out = await h.sync(pod);
    if (out.requeueAfterMs !== undefined) {
      delays.push(out.requeueAfterMs);
      h.clock.step(out.requeueAfterMs);
      await h.sync(pod);
    }
  }
  assert.deepEqual(delays, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  h.clock.step(10 * 60_000 + 1); // runs fine for over 10 minutes
  h.rt.exitContainer('app', 1);
  h.take();
  await h.sync(pod);
  assert.ok(h.take().includes('StartContainer app'), 'restarted at once after a quiet period');
  h.rt.exitContainer('app', 1);
  const out = await h.sync(pod);
  assert.equal(out.requeueAfterMs, 10_000, 'backoff starts over');
});

test('image pull failure: ErrImagePull, then ImagePullBackOff until the backoff expires', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  const pod = makePod({ containers: [container('app', { image: 'nothere:2' })] });
  let out = await h.sync(pod);
  assert.deepEqual(h.take(), ['RunPodSandbox web attempt=0', 'PodSandboxStatus web', 'ImageStatus nothere:2', 'PullImage nothere:2']);
  assert.equal(summary(out.apiStatus), 'Pending app=waiting:ErrImagePull');
  assert.match(out.apiStatus.containerStatuses![0]!.state!.waiting!.message!, /not found/);
  assert.equal(out.error?.code, 'ERR_IMAGE_PULL');
  assert.equal(out.requeueAfterMs, 10_000);

  h.clock.step(5_000);
  out = await h.sync(pod);
  assert.deepEqual(h.take(), ['ImageStatus nothere:2']);
  assert.equal(summary(out.apiStatus), 'Pending app=waiting:ImagePullBackOff');
  assert.equal(out.apiStatus.containerStatuses![0]!.state!.waiting!.message, 'Back-off pulling image "nothere:2"');
  assert.equal(out.requeueAfterMs, 5_000);

  h.clock.step(5_000);
  out = await h.sync(pod);
  assert.deepEqual(h.take(), ['ImageStatus nothere:2', 'PullImage nothere:2']);
  assert.equal(summary(out.apiStatus), 'Pending app=waiting:ErrImagePull');
  assert.equal(out.requeueAfterMs, 20_000, 'pull backoff doubles');

  h.rt.registry.add('nothere:2'); // the image appears in the registry
  h.clock.step(20_000);
  out = await h.sync(pod);
  assert.deepEqual(h.take(), ['ImageStatus nothere:2', 'PullImage nothere:2', 'ImageStatus nothere:2', 'CreateContainer app', 'StartContainer app']);
  assert.equal(summary(out.apiStatus), 'Pending app=waiting:ContainerCreating', 'the failure reason is cleared by the start');
});

test('pull policies: Never without the image is ErrImageNeverPull; IfNotPresent skips the pull; :latest pulls', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  h.rt.addImage('busybox:latest');
  h.rt.registry.add('busybox:latest');
  const pod = makePod({
    containers: [
      container('a', { image: 'busybox:1' }),
      container('b', { image: 'busybox' }),
      container('c', { image: 'local:1', imagePullPolicy: 'Never' }),
    ],
  });
  const out = await h.sync(pod);
  assert.deepEqual(h.take().slice(2), [
    'ImageStatus busybox:1', 'CreateContainer a', 'StartContainer a',
    'ImageStatus busybox:latest', 'PullImage busybox:latest', 'ImageStatus busybox:latest', 'CreateContainer b', 'StartContainer b',
    'ImageStatus local:1',
  ]);
  const c = out.apiStatus.containerStatuses!.find((s) => s.name === 'c')!;
  assert.equal(c.state?.waiting?.reason, 'ErrImageNeverPull');
  assert.equal(c.state?.waiting?.message, 'Container image "local:1" is not present with pull policy of Never');
  assert.equal(out.error?.code, 'ERR_IMAGE_NEVER_PULL');
});

test('a changed container spec restarts only that container', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  h.rt.addImage('busybox:2');
  const pod = makePod({ containers: [container('a'), container('b')] });
  await h.sync(pod);
  const bId = h.rt.containerIdOf('b');
  h.take();
  const changed = structuredClone(pod);
  changed.spec!.containers[0]!.image = 'busybox:2';
  const out = await h.sync(changed);
  assert.deepEqual(h.take(), ['StopContainer a 30', 'ImageStatus busybox:2', 'CreateContainer a', 'StartContainer a']);
  assert.equal(h.rt.containerIdOf('b'), bId, 'b untouched');
  assert.equal(h.rt.lastConfigOf('a').metadata.attempt, 1);
  await h.sync(changed);
  assert.deepEqual(h.take(), [], 'stable after the restart');
  assert.equal(out.error, undefined);
  // Resources are not part of the hash.
  const resized = structuredClone(changed);
  resized.spec!.containers[1]!.resources = { limits: { cpu: '1' } };
  await h.sync(resized);
  assert.deepEqual(h.take(), []);
});

test('restartPolicy Never / OnFailure: completed pods become Succeeded or Failed and stop syncing', async (t) => {
  const cases = [
    { policy: 'Never', codes: [0, 0], want: 'Succeeded' },
    { policy: 'Never', codes: [0, 2], want: 'Failed' },
    { policy: 'OnFailure', codes: [0, 0], want: 'Succeeded' },
  ] as const;
  for (const c of cases) {
    const h = makeHarness();
    t.after(h.cleanup);
    h.rt.addImage('busybox:1');
    const pod = makePod({ restartPolicy: c.policy, containers: [container('a'), container('b')] });
    await h.sync(pod);
    h.rt.exitContainer('a', c.codes[0]);
    let out = await h.sync(pod);
    assert.equal(out.isTerminal, false, `${c.policy} ${c.codes}: one still running`);
    h.rt.exitContainer('b', c.codes[1]);
    h.take();
    out = await h.sync(pod);
    assert.deepEqual(h.take(), [], 'a terminal pod issues no CRI calls');
    assert.equal(out.isTerminal, true);
    assert.equal(out.apiStatus.phase, c.want, `${c.policy} ${c.codes}`);
  }
  // OnFailure restarts the failed container only.
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ restartPolicy: 'OnFailure', containers: [container('a'), container('b')] });
  await h.sync(pod);
  h.rt.exitContainer('a', 0);
  h.rt.exitContainer('b', 1);
  h.take();
  const out = await h.sync(pod);
  assert.deepEqual(h.take(), ['CreateContainer b', 'StartContainer b']);
  assert.equal(out.apiStatus.phase, 'Running');
});

test('activeDeadlineSeconds: requeue at the deadline, then Failed/DeadlineExceeded', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ activeDeadlineSeconds: 60, containers: [container('app')] });
  let out = await h.sync(pod);
  assert.equal(out.requeueAfterMs, 60_000);
  h.clock.step(59_000);
  out = await h.sync(pod);
  assert.equal(out.apiStatus.phase, 'Running');
  assert.equal(out.requeueAfterMs, 1_000);
  h.clock.step(1_000);
  h.take();
  out = await h.sync(pod);
  assert.deepEqual(h.take(), []);
  assert.equal(out.isTerminal, true);
  assert.equal(out.apiStatus.phase, 'Failed');
  assert.equal(out.apiStatus.reason, 'DeadlineExceeded');
  assert.equal(out.apiStatus.message, 'Pod was active on the node longer than the specified deadline');
});

test('liveness probe failure kills and restarts the container; readiness gates Ready', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const probe = { exec: { command: ['true'] } };
  const pod = makePod({ containers: [container('app', { livenessProbe: probe, readinessProbe: probe })] });
  await h.sync(pod);
  const id = h.rt.containerIdOf('app');
  let out = await h.sync(pod);
  assert.equal(out.apiStatus.containerStatuses![0]!.ready, false, 'readiness unknown → not ready');
  assert.equal(condition(out.apiStatus, 'ContainersReady'), 'False:ContainersNotReady');
  assert.equal(out.apiStatus.conditions!.find((c) => c.type === 'Ready')!.message, 'containers with unready status: [app]');
  h.probes.set(id, 'readiness', 'success');
  out = await h.sync(pod);
  assert.equal(condition(out.apiStatus, 'Ready'), 'True');
  h.probes.set(id, 'liveness', 'failure');
  h.take();
  await h.sync(pod);
  assert.deepEqual(h.take(), ['StopContainer app 30', 'CreateContainer app', 'StartContainer app']);
});

test('publishProgress: the new sandbox before any container, then the pod after each container start, each as the runtime has it then', async (t) => {
  const published: Array<{ sandboxes: string[]; containers: string[]; calls: number }> = [];
  let h: ReturnType<typeof makeHarness> | undefined;
  h = makeHarness({
    publishProgress: (s) => published.push({
      sandboxes: s.sandboxes.map((x) => `${x.id}:${x.state}`),
      containers: s.containers.map((x) => `${x.name}:${x.state}`),
      calls: h!.rt.calls.length,
    }),
  });
  t.after(h.cleanup);
  // Present on the node: each start's answers (ImageStatus, Create, Start) then tell it all.
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('a', { command: ['sleep'] }), container('b', { command: ['sleep'] })] });
  await h.sync(pod);
  const calls = h.take();
  const sandboxId = h.rt.podStatus('uid-web').sandboxes[0]!.id;
  assert.deepEqual(published.map(({ sandboxes, containers }) => ({ sandboxes, containers })), [
    { sandboxes: [`${sandboxId}:SANDBOX_READY`], containers: [] },
    { sandboxes: [`${sandboxId}:SANDBOX_READY`], containers: ['a:CONTAINER_RUNNING'] },
    { sandboxes: [`${sandboxId}:SANDBOX_READY`], containers: ['a:CONTAINER_RUNNING', 'b:CONTAINER_RUNNING'] },
  ]);
  // Each is published right after the answer that made it true: before the next creation.
  assert.deepEqual(published.map((p) => calls[p.calls - 1]?.split(' ')[0]), ['PodSandboxStatus', 'StartContainer', 'StartContainer']);
  assert.ok(calls.indexOf('CreateContainer a') >= published[0]!.calls, 'the sandbox is published before CreateContainer');
  // What was published agrees with the runtime after the sync (the PLEG compares them).
  const rt = h.rt.podStatus('uid-web');
  assert.deepEqual(rt.containers.map((c) => `${c.name}:${c.state}`).sort(), ['a:CONTAINER_RUNNING', 'b:CONTAINER_RUNNING']);

  // A sync that creates nothing publishes nothing.
  published.length = 0;
  await h.sync(pod);
  assert.deepEqual(published, []);
});
