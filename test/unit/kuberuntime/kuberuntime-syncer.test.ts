/**
 * Scenario tests of KubeRuntimeSyncer over the fake CRI runtime and a fake clock: for each
 * behaviour, the CRI calls issued and the statuses a user would see, over several syncs.
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
  assert.equal(summary(out.apiStatus), 'Pending init:init-a=waiting:ContainerCreating init:init-b=waiting:ContainerCreating app=waiting:PodInitializing');
  assert.equal(condition(out.apiStatus, 'Initialized'), 'False:ContainersNotInitialized');

  out = await h.sync(pod); // init-a still running: nothing to do
  assert.deepEqual(h.take(), []);
  assert.equal(summary(out.apiStatus), 'Pending init:init-a=running init:init-b=waiting:ContainerCreating app=waiting:PodInitializing');

  h.rt.exitContainer('init-a', 0);
  out = await h.sync(pod);
  assert.deepEqual(h.take(), ['ImageStatus busybox:1', 'CreateContainer init-b', 'StartContainer init-b']);

  h.rt.exitContainer('init-b', 0);
  out = await h.sync(pod);
  assert.deepEqual(h.take(), ['ImageStatus busybox:1', 'CreateContainer app', 'StartContainer app']);
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
  assert.deepEqual(h.take(), ['ImageStatus busybox:1', 'CreateContainer init', 'StartContainer init']);
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
  assert.deepEqual(h.take(), ['ImageStatus busybox:1', 'CreateContainer app', 'StartContainer app'], 'first restart is immediate');
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
  assert.deepEqual(h.take(), ['ImageStatus nothere:2', 'PullImage nothere:2', 'CreateContainer app', 'StartContainer app']);
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
    'ImageStatus busybox:latest', 'PullImage busybox:latest', 'CreateContainer b', 'StartContainer b',
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
  assert.deepEqual(h.take(), ['ImageStatus busybox:1', 'CreateContainer b', 'StartContainer b']);
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
  assert.deepEqual(h.take(), ['StopContainer app 30', 'ImageStatus busybox:1', 'CreateContainer app', 'StartContainer app']);
});

test('a dead sandbox is replaced (attempt + 1) and init containers run again', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ initContainers: [container('init')], containers: [container('app')] });
  await h.sync(pod);
  h.rt.exitContainer('init', 0);
  await h.sync(pod);
  h.rt.killSandbox('web');
  h.take();
  const out = await h.sync(pod);
  // The app container outlives its sandbox's pause process: it is stopped first, like the kubelet.
  assert.deepEqual(h.take(), [
    'StopContainer app 30',
    'StopPodSandbox web',
    'RemoveContainer init',
    'RunPodSandbox web attempt=1',
    'PodSandboxStatus web',
    'ImageStatus busybox:1',
    'CreateContainer init',
    'StartContainer init',
  ]);
  assert.equal(condition(out.apiStatus, 'PodReadyToStartContainers'), 'False');
});

test('start failures become waiting reasons: CreateContainerError, RunContainerError, PostStartHookError', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app', { lifecycle: { postStart: { exec: { command: ['/bin/sh', '-c', 'setup'] } } } })] });
  h.rt.failNext('CreateContainer', 'ERR_CRI_UNKNOWN', 'CreateContainer: no space left');
  let out = await h.sync(pod);
  assert.equal(summary(out.apiStatus), 'Pending app=waiting:CreateContainerError');
  assert.equal(out.apiStatus.containerStatuses![0]!.state!.waiting!.message, 'CreateContainer: no space left');
  assert.equal(out.error?.code, 'ERR_CREATE_CONTAINER');

  h.rt.failNext('StartContainer', 'ERR_CRI_UNKNOWN', 'StartContainer: exec format error');
  out = await h.sync(pod);
  assert.equal(summary(out.apiStatus), 'Pending app=waiting:RunContainerError');

  // The container created by the failed start is CREATED; the next sync creates a new one.
  h.rt.exec = async () => ({ stdout: Buffer.from(''), stderr: Buffer.from('boom'), exitCode: 1 });
  h.take();
  out = await h.sync(pod);
  assert.deepEqual(h.take(), ['ImageStatus busybox:1', 'CreateContainer app', 'StartContainer app', 'ExecSync app /bin/sh -c setup', 'StopContainer app 30']);
  assert.equal(summary(out.apiStatus), 'Pending app=waiting:PostStartHookError');
  assert.match(out.apiStatus.containerStatuses![0]!.state!.waiting!.message!, /^Exec lifecycle hook \(\[\/bin\/sh -c setup\]\) for Container "app" in Pod "web_default\(uid-web\)" failed - error: command '\/bin\/sh -c setup' exited with 1: boom/);
});

test('terminatePod runs preStop within the grace period, stops with the rest, then the sandbox', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const preStop = { exec: { command: ['/bin/sh', '-c', 'drain'] } };
  const pod = makePod({ containers: [container('slow', { lifecycle: { preStop } }), container('fast')] });
  await h.sync(pod);
  h.take();
  // The preStop hook takes 7.5 s of (fake) time.
  h.rt.exec = async (_req, signal) => {
    await h.clock.sleep(7_500, signal);
    return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 };
  };
  const done = h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus('uid-web'), gracePeriodSeconds: 20, signal: new AbortController().signal });
  assert.equal(await h.clock.runUntil(() => h.rt.calls.includes('StopPodSandbox web'), { stepMs: 500, maxMs: 60_000 }), true);
  const out = await done;
  const calls = h.take();
  assert.deepEqual(calls.filter((c) => !c.startsWith('ContainerStatus') && !c.startsWith('PodSandboxStatus')), [
    'StopContainer fast 20',
    'ExecSync slow /bin/sh -c drain',
    'StopContainer slow 13',
    'StopPodSandbox web',
  ]);
  assert.equal(out.error, undefined);
  assert.equal(out.apiStatus.phase, 'Failed', 'containers killed with 143 → Failed (terminal pod)');
  assert.equal(summary(out.apiStatus), 'Failed fast=terminated:Error:143 slow=terminated:Error:143');
});

test('a preStop hook longer than the grace period is cut off; StopContainer still gets 2 s', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app', { lifecycle: { preStop: { exec: { command: ['hang'] } } } })] });
  await h.sync(pod);
  h.take();
  let hookSignal: AbortSignal | undefined;
  h.rt.exec = (_req, signal) => {
    hookSignal = signal;
    return new Promise(() => {});
  };
  const done = h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus('uid-web'), gracePeriodSeconds: 5, signal: new AbortController().signal });
  assert.equal(await h.clock.runUntil(() => h.rt.calls.includes('StopPodSandbox web'), { stepMs: 1_000, maxMs: 60_000 }), true);
  await done;
  assert.deepEqual(h.take().filter((c) => !c.startsWith('ContainerStatus') && !c.startsWith('PodSandboxStatus')), ['ExecSync app hang', 'StopContainer app 2', 'StopPodSandbox web']);
  assert.equal(hookSignal?.aborted, true, 'the abandoned hook call is cancelled');
});

test('an aborted sync stops issuing CRI calls and records no failure', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.registry.add('busybox:1');
  const pod = makePod({ containers: [container('a'), container('b')] });
  const release = h.rt.block('PullImage');
  const ac = new AbortController();
  const p = h.sync(pod, ac.signal);
  await h.rt.waitForCall('PullImage');
  assert.deepEqual(h.take(), ['RunPodSandbox web attempt=0', 'PodSandboxStatus web', 'ImageStatus busybox:1', 'PullImage busybox:1']);
  ac.abort(new Error('killed'));
  await assert.rejects(p, /killed/);
  release();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(h.take(), [], 'no call after the abort');
  // A later sync carries on, with no stale ErrImagePull from the aborted one.
  const out = await h.sync(pod);
  assert.equal(out.error, undefined);
  assert.ok(!summary(out.apiStatus).includes('ErrImagePull'));
});

test('cleanupPod removes containers, sandboxes and the log directory, and forgets the pod', async (t) => {
  const { default: fs } = await import('node:fs');
  const { default: path } = await import('node:path');
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app')] });
  await h.sync(pod);
  const podLogs = path.join(h.logDir, 'default_web_uid-web');
  assert.ok(fs.existsSync(podLogs), 'the pod log directory is created with the sandbox');
  fs.mkdirSync(path.join(podLogs, 'app'));
  fs.writeFileSync(path.join(podLogs, 'app', '0.log'), 'x\n');
  await h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus('uid-web'), gracePeriodSeconds: 1, signal: new AbortController().signal });
  h.take();
  const res = await h.syncer.cleanupPod({ pod, runtimeStatus: h.rt.podStatus('uid-web'), signal: new AbortController().signal });
  assert.deepEqual(res, {});
  assert.deepEqual(h.take(), ['ListContainers', 'ListPodSandbox', 'RemoveContainer app', 'RemovePodSandbox web']);
  assert.equal(h.rt.containerCount, 0);
  assert.equal(h.rt.sandboxCount, 0);
  assert.equal(fs.existsSync(podLogs), false);
  assert.equal(h.syncer.trackedPods, 0);
});

test('conditions keep lastTransitionTime while their status does not change', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app')] });
  const first = await h.sync(pod);
  const t0 = first.apiStatus.conditions!.find((c) => c.type === 'PodScheduled')!.lastTransitionTime;
  h.clock.step(5_000);
  const second = await h.sync(pod);
  const sched = second.apiStatus.conditions!.find((c) => c.type === 'PodScheduled')!;
  const ready = second.apiStatus.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(sched.lastTransitionTime?.getTime(), t0?.getTime());
  assert.equal(ready.status, 'True');
  assert.equal(ready.lastTransitionTime?.getTime(), 1_700_000_005_000, 'Ready flipped at the second sync');
});
