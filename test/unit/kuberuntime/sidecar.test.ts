/**
 * Sidecar containers (restartable init containers, KEP-753): the pure action computation
 * (sidecar-actions.ts through computePodActions), phase/conditions, termination ordering
 * (termination-order.ts), and whole syncs through the KubeRuntimeSyncer on the fake runtime:
 * start order gated by the startup probe, restart under restartPolicy Never, Job completion,
 * and the stop order and grace accounting of a pod kill.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ContainerStatus } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { emptyPodStatus, type RuntimeContainerStatus, type RuntimePodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { computePodActions } from '../../../workers/kuberuntime/compute-pod-actions.js';
import { hashContainer } from '../../../workers/kuberuntime/container-hash.js';
import { containersReadyCondition, initializedCondition } from '../../../workers/kuberuntime/conditions.js';
import { getPhase } from '../../../workers/kuberuntime/pod-phase.js';
import { TerminationOrdering } from '../../../workers/kuberuntime/termination-order.js';
import { applyTerminalDefaults } from '../../../workers/kuberuntime/terminal-status.js';
import { condition, container, FakeProbeResults, makeHarness, makePod, summary } from './kuberuntime-harness.js';

const side = (name: string, extra = {}) => container(name, { restartPolicy: 'Always', ...extra });
const sandbox = { id: 'sb', state: 'SANDBOX_READY' as const, createdAtNs: '1', attempt: 0, ip: '10.0.0.1', ips: ['10.0.0.1'], hostNetwork: false };

function ctr(name: string, state: RuntimeContainerStatus['state'], spec = container(name), extra: Partial<RuntimeContainerStatus> = {}): RuntimeContainerStatus {
  return { id: `id-${name}`, podSandboxId: 'sb', name, state, createdAtNs: '1', startedAtNs: '1', finishedAtNs: '2', exitCode: 0, reason: '', message: '', image: 'i', imageRef: 'r', hash: hashContainer(spec), restartCount: 0, attempt: 0, ...extra };
}
function status(cs: RuntimeContainerStatus[]): RuntimePodStatus {
  return { ...emptyPodStatus('uid-web', 'web', 'default'), ips: ['10.0.0.1'], sandboxes: [sandbox], containers: cs };
}

test('computePodActions, sidecars: each gates the next init container until started; then the regular containers', () => {
  const s1 = side('s1');
  const setup = container('setup');
  const s2 = side('s2', { startupProbe: { exec: { command: ['true'] } } });
  const pod = makePod({ restartPolicy: 'Never', initContainers: [s1, setup, s2], containers: [container('main')] });
  const probes = new FakeProbeResults();
  const act = (cs: RuntimeContainerStatus[]) => {
    const a = computePodActions(pod, status(cs), probes);
    return { init: a.initContainersToStart, apps: a.containersToStart, kill: [...a.containersToKill.values()].map((k) => k.message), killPod: a.killPod };
  };
  // A new sandbox: the first init container.
  assert.equal(computePodActions(pod, emptyPodStatus('uid-web'), probes).nextInitContainerToStart, 0);
  // s1 runs (no startup probe): started, the regular init container next.
  assert.deepEqual(act([ctr('s1', 'CONTAINER_RUNNING', s1)]), { init: [1], apps: [], kill: [], killPod: false });
  // setup still runs: wait.
  assert.deepEqual(act([ctr('setup', 'CONTAINER_RUNNING', setup), ctr('s1', 'CONTAINER_RUNNING', s1)]), { init: [], apps: [], kill: [], killPod: false });
  // setup done: s2 next.
  assert.deepEqual(act([ctr('setup', 'CONTAINER_EXITED', setup), ctr('s1', 'CONTAINER_RUNNING', s1)]), { init: [2], apps: [], kill: [], killPod: false });
  // s2 runs but its startup probe has not passed: nothing starts, the regular container waits.
  const s2Running = ctr('s2', 'CONTAINER_RUNNING', s2);
  const early = [s2Running, ctr('setup', 'CONTAINER_EXITED', setup), ctr('s1', 'CONTAINER_RUNNING', s1)];
  assert.deepEqual(act(early), { init: [], apps: [], kill: [], killPod: false });
  // The startup probe passed: initialized, the regular container starts.
  probes.set('id-s2', 'startup', 'success');
  assert.deepEqual(act(early), { init: [], apps: [0], kill: [], killPod: false });
  // A failed startup probe restarts the sidecar, even under restartPolicy Never.
  probes.set('id-s2', 'startup', 'failure');
  assert.deepEqual(act(early), { init: [2], apps: [], kill: ['Init container s2 failed startup probe'], killPod: false });
});

test('computePodActions, sidecars: restarted whatever the restartPolicy; regular init failure under Never kills; Job completion kills the sidecars', () => {
  const s1 = side('s1', { livenessProbe: { exec: { command: ['true'] } } });
  const main = container('main');
  const probes = new FakeProbeResults();
  for (const restartPolicy of ['Never', 'OnFailure', 'Always']) {
    const pod = makePod({ restartPolicy, initContainers: [s1], containers: [main] });
    // The sidecar crashed while main runs: restarted, main kept.
    const crashed = computePodActions(pod, status([ctr('main', 'CONTAINER_RUNNING', main), ctr('s1', 'CONTAINER_EXITED', s1, { exitCode: 1 })]), probes);
    assert.deepEqual([crashed.initContainersToStart, crashed.containersToStart, crashed.killPod], [[0], [], false], restartPolicy);
    // Its instances are all gone (garbage-collected) while main runs: started again.
    const gone = computePodActions(pod, status([ctr('main', 'CONTAINER_RUNNING', main)]), probes);
    assert.deepEqual(gone.initContainersToStart, [0], restartPolicy);
  }
  const never = makePod({ restartPolicy: 'Never', initContainers: [s1], containers: [main] });
  // Liveness failure and spec change restart the sidecar.
  probes.set('id-s1', 'liveness', 'failure');
  const live = computePodActions(never, status([ctr('main', 'CONTAINER_RUNNING', main), ctr('s1', 'CONTAINER_RUNNING', s1)]), probes);
  assert.deepEqual([live.initContainersToStart, [...live.containersToKill.values()].map((k) => `${k.reason}: ${k.message}`)], [[0], ['LivenessProbe: Init container s1 failed liveness probe']]);
  probes.set('id-s1', 'liveness', 'success');
  const changed = computePodActions(never, status([ctr('main', 'CONTAINER_RUNNING', main), ctr('s1', 'CONTAINER_RUNNING', s1, { hash: 'old' })]), probes);
  assert.deepEqual([...changed.containersToKill.values()].map((k) => k.message), ['Init container s1 definition changed']);
  // Job completion: main exited, the sidecar runs: the pod is killed, no sidecar restarted.
  const done = computePodActions(never, status([ctr('main', 'CONTAINER_EXITED', main), ctr('s1', 'CONTAINER_RUNNING', s1)]), probes);
  assert.deepEqual([done.killPod, done.initContainersToStart, done.containersToStart], [true, [], []]);
  // When the sidecar had exited too, the kubelet's computeInitContainerActions does not count the
  // exited regular container as initialization (a rebooted node looks the same) and restarts the
  // sidecar. (The syncer does not get there: such a pod's phase is already terminal.)
  const both = computePodActions(never, status([ctr('main', 'CONTAINER_EXITED', main), ctr('s1', 'CONTAINER_EXITED', s1, { exitCode: 1 })]), probes);
  assert.deepEqual([both.killPod, both.initContainersToStart], [false, [0]]);
  // A regular init container that failed under Never kills the pod.
  const setup = container('setup');
  const withSetup = makePod({ restartPolicy: 'Never', initContainers: [s1, setup], containers: [main] });
  const failed = computePodActions(withSetup, status([ctr('setup', 'CONTAINER_EXITED', setup, { exitCode: 2 }), ctr('s1', 'CONTAINER_RUNNING', s1)]), probes);
  assert.deepEqual([failed.killPod, failed.initContainersToStart], [true, []]);
  // Under OnFailure it is restarted.
  const onFailure = makePod({ restartPolicy: 'OnFailure', initContainers: [s1, setup], containers: [main] });
  const retried = computePodActions(onFailure, status([ctr('setup', 'CONTAINER_EXITED', setup, { exitCode: 2 }), ctr('s1', 'CONTAINER_RUNNING', s1)]), probes);
  assert.deepEqual([retried.killPod, retried.initContainersToStart], [false, [1]]);
});

function st(name: string, state: NonNullable<V1ContainerStatus['state']>, extra: Partial<V1ContainerStatus> = {}): V1ContainerStatus {
  return { name, image: 'i', imageID: '', ready: false, restartCount: 0, state, ...extra };
}

test('getPhase and conditions with sidecars', () => {
  const pod = makePod({ restartPolicy: 'Never', initContainers: [side('s1')], containers: [container('main')] });
  const running = { running: {} };
  const waitingMain = st('main', { waiting: { reason: 'PodInitializing' } });
  // The sidecar runs but has not started (startup probe): Pending, not initialized.
  const notStarted = [st('s1', running, { started: false }), waitingMain];
  assert.equal(getPhase(pod, notStarted, false), 'Pending');
  assert.deepEqual(initializedCondition(pod, notStarted, 'Pending'), { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [s1]' });
  // Both run; the sidecar is not ready: Running, ContainersReady False naming it.
  const unready = [st('s1', running, { started: true, ready: false }), st('main', running, { started: true, ready: true })];
  assert.equal(getPhase(pod, unready, false), 'Running');
  assert.deepEqual(containersReadyCondition(pod, unready, 'Running'), { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [s1]' });
  assert.deepEqual(initializedCondition(pod, unready, 'Running'), { type: 'Initialized', status: 'True' });
  const ready = [st('s1', running, { started: true, ready: true }), st('main', running, { started: true, ready: true })];
  assert.equal(containersReadyCondition(pod, ready, 'Running').status, 'True');
  // The sidecar restarting after the pod initialized: still Running.
  const restarting = [st('s1', { waiting: { reason: 'CrashLoopBackOff' } }, { lastState: { terminated: { exitCode: 1 } } }), st('main', running)];
  assert.equal(getPhase(pod, restarting, false, true), 'Running');
  // A sidecar waiting with no previous instance before initialization: Pending.
  assert.equal(getPhase(pod, [st('s1', { waiting: {} }), waitingMain], false, false), 'Pending');
  // Job completion: main exited 0; the sidecar still runs → Running; stopped → Succeeded (its exit code does not count).
  const mainDone = st('main', { terminated: { exitCode: 0 } });
  assert.equal(getPhase(pod, [st('s1', running, { started: true }), mainDone], false, true), 'Running');
  assert.equal(getPhase(pod, [st('s1', { terminated: { exitCode: 137 } }), mainDone], false, true), 'Succeeded');
  assert.equal(getPhase(pod, [st('s1', { terminated: { exitCode: 0 } }), st('main', { terminated: { exitCode: 3 } })], false, true), 'Failed');
});

test('TerminationOrdering: sidecars wait for every regular container, then for the later sidecar; bounded by the grace', async () => {
  const clock = new FakeClock();
  const pod = makePod({ initContainers: [side('s1'), container('setup'), side('s2')], containers: [container('a'), container('b')] });
  const signal = new AbortController().signal;
  const o = new TerminationOrdering(pod, ['s1', 's2', 'a', 'b'], clock);
  const order: string[] = [];
  const s1 = o.waitForTurn('s1', 30, signal).then((ms) => order.push(`s1@${ms}`));
  const s2 = o.waitForTurn('s2', 30, signal).then((ms) => order.push(`s2@${ms}`));
  assert.equal(await o.waitForTurn('a', 30, signal), 0, 'a regular container waits for nothing');
  clock.step(1000);
  o.containerTerminated('a');
  clock.step(1000);
  o.containerTerminated('b');
  await s2;
  assert.deepEqual(order, ['s2@2000']);
  clock.step(500);
  o.containerTerminated('s2');
  await s1;
  assert.deepEqual(order, ['s2@2000', 's1@2500']);

  // Nothing terminates: each wait ends with the grace period.
  const stuck = new TerminationOrdering(pod, ['s1', 's2', 'a'], clock);
  const waited = stuck.waitForTurn('s1', 5, signal);
  clock.step(5000);
  assert.equal(await waited, 5000);
  // Not running when the kill began: nothing waits for it; no grace: no wait.
  const none = new TerminationOrdering(pod, ['s1'], clock);
  assert.equal(await none.waitForTurn('s1', 5, signal), 0);
  assert.equal(await stuck.waitForTurn('s2', 0, signal), 0);
});

test('syncs on the fake runtime: start gated by the startup probe, sidecar restarted under Never, Job completion, statuses', async () => {
  const h = makeHarness();
  h.rt.addImage('busybox:1');
  try {
    const s1 = side('s1', { startupProbe: { exec: { command: ['true'] } }, readinessProbe: { exec: { command: ['true'] } } });
    const pod = makePod({ restartPolicy: 'Never', initContainers: [s1], containers: [container('main')] });
    await h.sync(pod);
    assert.deepEqual(h.take().filter((c) => c.startsWith('StartContainer')), ['StartContainer s1']);
    // Running, startup probe not passed: main does not start.
    let out = await h.sync(pod);
    assert.deepEqual(h.take().filter((c) => c.startsWith('StartContainer')), []);
    assert.equal(out.apiStatus.phase, 'Pending');
    assert.equal(condition(out.apiStatus, 'Initialized'), 'False:ContainersNotInitialized');
    assert.deepEqual(out.apiStatus.initContainerStatuses?.map((s) => [s.name, s.started, s.ready]), [['s1', false, false]]);
    // The startup probe passed: main starts.
    h.probes.set(h.rt.containerIdOf('s1'), 'startup', 'success');
    await h.sync(pod);
    assert.deepEqual(h.take().filter((c) => c.startsWith('StartContainer')), ['StartContainer main']);
    out = await h.sync(pod);
    assert.equal(summary(out.apiStatus), 'Running init:s1=running main=running');
    assert.equal(condition(out.apiStatus, 'Initialized'), 'True');
    // Readiness of the sidecar counts toward Ready.
    assert.equal(condition(out.apiStatus, 'Ready'), 'False:ContainersNotReady');
    h.probes.set(h.rt.containerIdOf('s1'), 'readiness', 'success');
    out = await h.sync(pod);
    assert.deepEqual(out.apiStatus.initContainerStatuses?.map((s) => [s.name, s.started, s.ready]), [['s1', true, true]]);
    assert.equal(condition(out.apiStatus, 'Ready'), 'True');
    // The sidecar crashes: restarted although the pod's restartPolicy is Never.
    h.rt.exitContainer('s1', 1);
    h.take();
    await h.sync(pod);
    assert.deepEqual(h.take().filter((c) => c.startsWith('StartContainer')), ['StartContainer s1']);
    h.probes.set(h.rt.containerIdOf('s1'), 'startup', 'success');
    out = await h.sync(pod);
    assert.equal(summary(out.apiStatus), 'Running init:s1=running/r1 main=running');
    // main completes: the sidecar is stopped, the pod succeeds.
    h.rt.exitContainer('main', 0);
    out = await h.sync(pod);
    const calls = h.take();
    assert.ok(calls.includes('StopContainer s1 30'), calls.join('\n'));
    assert.ok(calls.some((c) => c.startsWith('StopPodSandbox')), calls.join('\n'));
    out = await h.sync(pod);
    assert.equal(out.apiStatus.phase, 'Succeeded');
    assert.equal(out.isTerminal, true);
    assert.deepEqual(h.take().filter((c) => c.startsWith('StartContainer') || c.startsWith('RunPodSandbox')), []);
  } finally {
    h.cleanup();
  }
});

test('killing a pod with sidecars: regular containers first, then sidecars in reverse order, the time waited off their grace', async () => {
  const h = makeHarness();
  h.rt.addImage('busybox:1');
  try {
    const pod = makePod({ initContainers: [side('s1'), side('s2')], containers: [container('a'), container('b')] });
    for (let i = 0; i < 4; i++) await h.sync(pod);
    assert.equal(h.rt.podStatus('uid-web').containers.filter((c) => c.state === 'CONTAINER_RUNNING').length, 4);
    h.take();
    const release = h.rt.block('StopContainer');
    const done = h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus('uid-web'), gracePeriodSeconds: 30, signal: new AbortController().signal });
    await Promise.all([h.rt.waitForCall('StopContainer a'), h.rt.waitForCall('StopContainer b')]);
    // The regular containers take 10 s to stop; the sidecars wait for them.
    h.clock.step(10_000);
    release();
    const out = await done;
    const stops = h.take().filter((c) => c.startsWith('StopContainer'));
    assert.deepEqual(stops.slice(0, 2).sort(), ['StopContainer a 30', 'StopContainer b 30']);
    assert.deepEqual(stops.slice(2), ['StopContainer s2 20', 'StopContainer s1 20']);
    assert.equal(out.error, undefined);

    // A regular container that never stops: the sidecars go when the grace period is over (at least 2 s each).
    const pod2 = makePod({ initContainers: [side('t1')], containers: [container('c')] }, { name: 'two', uid: 'uid-two' });
    for (let i = 0; i < 3; i++) await h.sync(pod2);
    h.take();
    const release2 = h.rt.block('StopContainer');
    const done2 = h.syncer.terminatePod({ pod: pod2, runtimeStatus: h.rt.podStatus('uid-two'), gracePeriodSeconds: 5, signal: new AbortController().signal });
    await h.rt.waitForCall('StopContainer c');
    h.clock.step(5000);
    await h.rt.waitForCall('StopContainer t1');
    release2();
    await done2;
    assert.deepEqual(h.take().filter((c) => c.startsWith('StopContainer')), ['StopContainer c 5', 'StopContainer t1 2']);
  } finally {
    h.cleanup();
  }
});

test('terminal defaults: a pod whose last init container is a started sidecar counts as initialized', () => {
  const pod = makePod({ initContainers: [side('s1')], containers: [container('main')] });
  const waitingMain = st('main', { waiting: { reason: 'PodInitializing' } });
  const started = applyTerminalDefaults(pod, { phase: 'Running', initContainerStatuses: [st('s1', { running: {} }, { started: true })], containerStatuses: [waitingMain] });
  assert.equal(started.containerStatuses?.[0]?.state?.terminated?.reason, 'ContainerStatusUnknown');
  const notStarted = applyTerminalDefaults(pod, { phase: 'Pending', initContainerStatuses: [st('s1', { running: {} }, { started: false })], containerStatuses: [waitingMain] });
  assert.equal(notStarted.containerStatuses?.[0]?.state?.waiting?.reason, 'PodInitializing');
});

test('a sync that started a sidecar offers no derived post-sync status (the pod worker runs the sync its start triggers)', async () => {
  const h = makeHarness();
  h.rt.addImage('busybox:1');
  try {
    const plain = makePod({ initContainers: [container('setup')], containers: [container('main')] }, { name: 'plain', uid: 'uid-plain' });
    assert.ok((await h.sync(plain)).runtimeAfter, 'a classic init container start is derived');
    const withSidecar = makePod({ initContainers: [side('s1')], containers: [container('main')] });
    const first = await h.sync(withSidecar);
    assert.deepEqual(h.take().filter((c) => c.startsWith('StartContainer')), ['StartContainer setup', 'StartContainer s1']);
    assert.equal(first.runtimeAfter, undefined);
    assert.equal(first.runtimeChanged, true);
    // The next sync (the PLEG's echo of the start) starts the regular container.
    await h.sync(withSidecar);
    assert.deepEqual(h.take().filter((c) => c.startsWith('StartContainer')), ['StartContainer main']);
  } finally {
    h.cleanup();
  }
});
