/**
 * Scenario tests of KubeRuntimeSyncer over the fake CRI runtime and a fake clock, for the rest of
 * a pod's life: sandbox loss, start failures, termination with preStop and grace, aborts,
 * cleanup, and condition transition times.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { condition, container, makeHarness, makePod, summary } from './kuberuntime-harness.js';

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

  // The container created by the failed start is still CREATED (this fake fails the call before
  // it takes effect, like a start whose reply was lost): the next sync starts that one.
  h.rt.exec = async () => ({ stdout: Buffer.from(''), stderr: Buffer.from('boom'), exitCode: 1 });
  h.take();
  out = await h.sync(pod);
  assert.deepEqual(h.take(), ['StartContainer app', 'ExecSync app /bin/sh -c setup', 'StopContainer app 30']);
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

test('host-network pods: no PodSandboxStatus call, NODE network, pod IP = host IP', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ hostNetwork: true, containers: [container('app')] });
  await h.sync(pod);
  assert.deepEqual(h.take(), ['RunPodSandbox web attempt=0', 'ImageStatus busybox:1', 'CreateContainer app', 'StartContainer app']);
  const out = await h.sync(pod);
  assert.deepEqual(h.take(), [], 'a host-network sandbox without an IP is not "changed"');
  assert.equal(out.apiStatus.podIP, '192.168.1.10');
  assert.equal(summary(out.apiStatus), 'Running app=running');
});

test('a failed RunPodSandbox is an error with containers still ContainerCreating; the next sync retries', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app')] });
  h.rt.failNext('RunPodSandbox', 'ERR_CRI_UNKNOWN', 'RunPodSandbox: failed to setup network');
  let out = await h.sync(pod);
  assert.deepEqual(h.take(), ['RunPodSandbox web attempt=0']);
  assert.deepEqual(out.error, { code: 'ERR_CREATE_POD_SANDBOX', message: 'Failed to create pod sandbox: RunPodSandbox: failed to setup network' });
  assert.equal(summary(out.apiStatus), 'Pending app=waiting:ContainerCreating');
  assert.equal(condition(out.apiStatus, 'PodReadyToStartContainers'), 'False');
  out = await h.sync(pod);
  assert.deepEqual(h.take(), ['RunPodSandbox web attempt=0', 'PodSandboxStatus web', 'ImageStatus busybox:1', 'CreateContainer app', 'StartContainer app']);
  assert.equal(out.error, undefined);
});

test('the constructor rejects bad deps up front, naming the field', async () => {
  const { KubeRuntimeSyncer } = await import('../../../workers/kuberuntime/kuberuntime-syncer.js');
  const h = makeHarness();
  try {
    const base = { runtime: h.rt, images: h.rt, clock: h.clock, random: () => 0, logger: (await import('../../../src/shared/logging/logger.js')).silentLogger, nodeName: 'n', hostIP: '' };
    assert.throws(() => new KubeRuntimeSyncer({ ...base, images: {} as never }), /deps\.images/);
    assert.throws(() => new KubeRuntimeSyncer({ ...base, nodeName: undefined as never }), /deps\.nodeName/);
    assert.throws(() => new KubeRuntimeSyncer({ ...base, backoffInitialMs: 0 }), /deps\.backoffInitialMs/);
    assert.throws(() => new KubeRuntimeSyncer({ ...base, backoffMaxMs: 5, backoffInitialMs: 10 }), /deps\.backoffMaxMs/);
    assert.ok(new KubeRuntimeSyncer(base));
  } finally {
    h.cleanup();
  }
});

test('terminatePod of an evicted pod (KillOptions.terminalStatus) reports Failed with the eviction reason and message, kept by later statuses', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app')] });
  await h.sync(pod);
  const running = await h.sync(pod);
  assert.equal(running.apiStatus.phase, 'Running');
  const message = 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ';
  const out = await h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus('uid-web'), gracePeriodSeconds: 0, signal: new AbortController().signal, terminalStatus: { reason: 'Evicted', message } });
  assert.deepEqual([out.apiStatus.phase, out.apiStatus.reason, out.apiStatus.message], ['Failed', 'Evicted', message]);
  assert.ok(out.apiStatus.containerStatuses?.every((c) => c.state?.terminated), 'the containers were stopped');
  const later = h.syncer.generateAPIStatus(pod, h.rt.podStatus('uid-web'));
  assert.deepEqual([later.phase, later.reason, later.message], ['Failed', 'Evicted', message], 'a later status keeps them');
  h.syncer.forgetPod('uid-web');
  const plain = await h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus('uid-web'), gracePeriodSeconds: 0, signal: new AbortController().signal, previousStatus: running.apiStatus });
  assert.notEqual(plain.apiStatus.reason, 'Evicted', 'without a terminalStatus the pod is not reported evicted');
});
