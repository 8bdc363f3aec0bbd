/** Pure decision logic: computePodActions, ShouldContainerBeRestarted, getPhase, conditions, QoS, backoff. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ContainerStatus } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { emptyPodStatus, type RuntimeContainerStatus, type RuntimePodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { Backoff, formatGoDuration } from '../../../workers/kuberuntime/backoff.js';
import { computePodActions, findNextInitContainerToRun, podSandboxChanged } from '../../../workers/kuberuntime/compute-pod-actions.js';
import { hashContainer } from '../../../workers/kuberuntime/container-hash.js';
import { containersReadyCondition, initializedCondition } from '../../../workers/kuberuntime/conditions.js';
import { getPhase } from '../../../workers/kuberuntime/pod-phase.js';
import { podQOSClass } from '../../../src/shared/resources/pod-qos.js';
import { assemblePodStatus } from '../../../workers/runtime-status/cri-status-convert.js';
import { applyDefaultImageTag, pullPolicyOf } from '../../../workers/kuberuntime/image-puller.js';
import { container, FakeProbeResults, makePod } from './kuberuntime-harness.js';

function sandbox(id: string, ready: boolean, attempt = 0, ip = '10.0.0.1'): RuntimePodStatus['sandboxes'][number] {
  return { id, state: ready ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY', createdAtNs: '1', attempt, ip, ips: [ip], hostNetwork: false };
}
function ctr(name: string, state: RuntimeContainerStatus['state'], extra: Partial<RuntimeContainerStatus> = {}): RuntimeContainerStatus {
  return { id: `id-${name}-${extra.restartCount ?? 0}`, podSandboxId: 'sb', name, state, createdAtNs: '1', startedAtNs: '1', finishedAtNs: '2', exitCode: 0, reason: '', message: '', image: 'i', imageRef: 'r', hash: '', restartCount: 0, attempt: 0, ...extra };
}
function status(sbs: RuntimePodStatus['sandboxes'], cs: RuntimeContainerStatus[]): RuntimePodStatus {
  return { ...emptyPodStatus('uid-web', 'web', 'default'), ips: ['10.0.0.1'], sandboxes: sbs, containers: cs };
}

test('podSandboxChanged: none, not ready, two ready, network mode change, lost IP', () => {
  const pod = makePod({ containers: [container('a')] });
  assert.deepEqual(podSandboxChanged(pod, emptyPodStatus('u')), { changed: true, attempt: 0, sandboxId: '' });
  assert.deepEqual(podSandboxChanged(pod, status([sandbox('s1', false, 2)], [])), { changed: true, attempt: 3, sandboxId: 's1' });
  assert.equal(podSandboxChanged(pod, status([sandbox('s2', true, 1), sandbox('s1', true, 0)], [])).changed, true);
  assert.deepEqual(podSandboxChanged(pod, status([sandbox('s1', true, 0, '')], [])), { changed: true, attempt: 1, sandboxId: 's1' });
  const host = makePod({ hostNetwork: true, containers: [container('a')] });
  assert.deepEqual(podSandboxChanged(host, status([sandbox('s1', true)], [])), { changed: true, attempt: 1, sandboxId: '' });
  assert.deepEqual(podSandboxChanged(pod, status([sandbox('s1', true, 4)], [])), { changed: false, attempt: 4, sandboxId: 's1' });
});

test('computePodActions: restart policies for exited app containers', () => {
  const a = container('a');
  const running = ctr('b', 'CONTAINER_RUNNING', { hash: hashContainer(container('b')) });
  const cases: [string, number, number[]][] = [['Always', 0, [0]], ['Always', 1, [0]], ['OnFailure', 0, []], ['OnFailure', 1, [0]], ['Never', 1, []]];
  for (const [policy, code, want] of cases) {
    const pod = makePod({ restartPolicy: policy, containers: [a, container('b')] });
    const acts = computePodActions(pod, status([sandbox('s', true)], [ctr('a', 'CONTAINER_EXITED', { exitCode: code }), running]));
    assert.deepEqual(acts.containersToStart, want, `${policy} exit ${code}`);
    assert.equal(acts.killPod, false);
  }
  // Deleted pods restart nothing; with nothing running the pod is killed.
  const deleted = makePod({ containers: [a] });
  deleted.metadata!.deletionTimestamp = new Date();
  const acts = computePodActions(deleted, status([sandbox('s', true)], [ctr('a', 'CONTAINER_EXITED', { exitCode: 1 })]));
  assert.deepEqual(acts.containersToStart, []);
  assert.equal(acts.killPod, true);
});

test('computePodActions: a new sandbox for a Never pod whose containers ran is not created', () => {
  const pod = makePod({ restartPolicy: 'Never', containers: [container('a')] });
  const acts = computePodActions(pod, status([sandbox('s', false)], [ctr('a', 'CONTAINER_EXITED')]));
  assert.equal(acts.killPod, true);
  assert.equal(acts.createSandbox, false);
  assert.deepEqual(acts.containersToStart, []);
});

test('computePodActions: hash change, liveness and startup failures', () => {
  const probes = new FakeProbeResults();
  const pod = makePod({ restartPolicy: 'Never', containers: [container('a'), container('b'), container('c')] });
  const hashes = pod.spec!.containers.map((c) => hashContainer(c));
  const st = status([sandbox('s', true)], [
    ctr('a', 'CONTAINER_RUNNING', { id: 'ida', hash: 'stale' }),
    ctr('b', 'CONTAINER_RUNNING', { id: 'idb', hash: hashes[1]! }),
    ctr('c', 'CONTAINER_RUNNING', { id: 'idc', hash: hashes[2]! }),
  ]);
  probes.set('idb', 'liveness', 'failure');
  probes.set('idc', 'startup', 'failure');
  const acts = computePodActions(pod, st, probes);
  assert.deepEqual(acts.containersToStart, [0], 'a spec change restarts even under Never; probe kills do not');
  assert.deepEqual([...acts.containersToKill].map(([id, k]) => `${id}:${k.reason}:${k.message}`), [
    'ida:SpecChanged:Container a definition changed, will be restarted',
    'idb:LivenessProbe:Container b failed liveness probe',
    'idc:StartupProbe:Container c failed startup probe',
  ]);
});

test('findNextInitContainerToRun: order, running, failed, done', () => {
  const pod = makePod({ initContainers: [container('i1'), container('i2')], containers: [container('a')] });
  const s = (cs: RuntimeContainerStatus[]): RuntimePodStatus => status([sandbox('s', true)], cs);
  assert.deepEqual(findNextInitContainerToRun(pod, s([])), { next: 0, done: false });
  assert.deepEqual(findNextInitContainerToRun(pod, s([ctr('i1', 'CONTAINER_RUNNING')])), { done: false });
  assert.deepEqual(findNextInitContainerToRun(pod, s([ctr('i1', 'CONTAINER_EXITED')])), { next: 1, done: false });
  const failed = ctr('i2', 'CONTAINER_EXITED', { exitCode: 1 });
  assert.deepEqual(findNextInitContainerToRun(pod, s([failed, ctr('i1', 'CONTAINER_EXITED')])), { lastStatus: failed, next: 1, done: false });
  assert.deepEqual(findNextInitContainerToRun(pod, s([ctr('i2', 'CONTAINER_EXITED'), ctr('i1', 'CONTAINER_EXITED')])), { done: true });
  assert.deepEqual(findNextInitContainerToRun(pod, s([ctr('a', 'CONTAINER_RUNNING')])), { done: true }, 'an app container running means initialized');
});

function api(name: string, state: NonNullable<V1ContainerStatus['state']>, last?: V1ContainerStatus['lastState']): V1ContainerStatus {
  return { name, image: 'i', imageID: '', ready: state?.running !== undefined, restartCount: 0, state, ...(last ? { lastState: last } : {}) };
}

test('getPhase follows the kubelet table', () => {
  const run = { running: {} };
  const ok = { terminated: { exitCode: 0 } };
  const bad = { terminated: { exitCode: 1 } };
  const wait = { waiting: { reason: 'ContainerCreating' } };
  const always = makePod({ containers: [container('a'), container('b')] });
  const never = makePod({ restartPolicy: 'Never', containers: [container('a'), container('b')] });
  const onFail = makePod({ restartPolicy: 'OnFailure', containers: [container('a'), container('b')] });
  assert.equal(getPhase(always, [api('a', run), api('b', wait)], false), 'Pending');
  assert.equal(getPhase(always, [api('a', run), api('b', run)], false), 'Running');
  assert.equal(getPhase(always, [api('a', run)], false), 'Pending', 'a container with no status is unknown');
  assert.equal(getPhase(always, [api('a', ok), api('b', bad)], false), 'Running', 'Always: restarting');
  assert.equal(getPhase(always, [api('a', ok), api('b', bad)], true), 'Failed', 'terminal pod');
  assert.equal(getPhase(always, [api('a', ok), api('b', ok)], true), 'Succeeded');
  assert.equal(getPhase(never, [api('a', ok), api('b', bad)], false), 'Failed');
  assert.equal(getPhase(never, [api('a', ok), api('b', ok)], false), 'Succeeded');
  assert.equal(getPhase(onFail, [api('a', ok), api('b', bad)], false), 'Running');
  assert.equal(getPhase(onFail, [api('a', ok), api('b', { waiting: { reason: 'CrashLoopBackOff' } }, bad)], false), 'Running', 'waiting with a last termination counts as stopped');
  const init = makePod({ restartPolicy: 'Never', initContainers: [container('i')], containers: [container('a')] });
  assert.equal(getPhase(init, [api('i', run), api('a', wait)], false), 'Pending');
  assert.equal(getPhase(init, [api('i', bad), api('a', wait)], false), 'Failed');
  const staticPod = makePod({ containers: [container('a')] });
  staticPod.metadata!.annotations!['kubernetes.io/config.source'] = 'file';
  assert.equal(getPhase(staticPod, [api('a', bad)], true), 'Running', 'static pods get no terminal phase');
});

test('conditions: Initialized and ContainersReady reasons and messages', () => {
  const pod = makePod({ initContainers: [container('i1'), container('i2')], containers: [container('a'), container('b')] });
  const c = initializedCondition(pod, [api('i1', { terminated: { exitCode: 0 } }), api('i2', { running: {} })], 'Pending');
  assert.deepEqual(c, { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [i2]' });
  const r = containersReadyCondition(pod, [api('a', { running: {} })], 'Running');
  assert.equal(r.message, 'containers with unknown status: [b]');
  assert.deepEqual(containersReadyCondition(pod, [api('a', { terminated: { exitCode: 0 } }), api('b', { terminated: { exitCode: 0 } })], 'Succeeded'), { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' });
});

test('QoS class', () => {
  assert.equal(podQOSClass(makePod({ containers: [container('a')] })), 'BestEffort');
  assert.equal(podQOSClass(makePod({ containers: [container('a', { resources: { requests: { cpu: '100m' } } })] })), 'Burstable');
  assert.equal(podQOSClass(makePod({ containers: [container('a', { resources: { limits: { cpu: '1', memory: '1Gi' } } })] })), 'Guaranteed');
  assert.equal(podQOSClass(makePod({ containers: [container('a', { resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } } })] })), 'Burstable');
  assert.equal(podQOSClass(makePod({ containers: [container('a', { resources: { limits: { cpu: '1', memory: '1Gi' } } }), container('b')] })), 'Burstable');
});

test('image pull policy defaults and default tag', () => {
  assert.equal(pullPolicyOf(container('a', { image: 'busybox' })), 'Always');
  assert.equal(pullPolicyOf(container('a', { image: 'busybox:latest' })), 'Always');
  assert.equal(pullPolicyOf(container('a', { image: 'localhost:5000/busybox' })), 'Always');
  assert.equal(pullPolicyOf(container('a', { image: 'localhost:5000/busybox:1' })), 'IfNotPresent');
  assert.equal(pullPolicyOf(container('a', { image: 'busybox@sha256:abc' })), 'IfNotPresent');
  assert.equal(pullPolicyOf(container('a', { image: 'busybox', imagePullPolicy: 'Never' })), 'Never');
  assert.equal(applyDefaultImageTag('localhost:5000/busybox'), 'localhost:5000/busybox:latest');
  assert.equal(applyDefaultImageTag('busybox:1'), 'busybox:1');
});

test('Backoff: a wall-clock step back of an hour does not freeze a crash-loop or pull backoff', () => {
  const clock = new FakeClock(1_700_000_000_000);
  const b = new Backoff({ initialMs: 10_000, maxMs: 300_000, clock });
  const finishedAt = clock.now(); // the container's exit, on the runtime's wall clock
  b.next('crash', finishedAt);
  b.nextNow('pull');
  clock.stepWall(-3_600_000);
  // Wall-clock now − finishedAt is now about −1 h; the delay still runs out 10 s after the exit.
  assert.equal(b.isInBackOffSince('crash', finishedAt), true);
  assert.equal(b.isInBackOffSinceUpdate('pull'), true);
  clock.step(9_999);
  assert.equal(b.remainingSince('crash', finishedAt), 1);
  assert.equal(b.remainingSinceUpdate('pull'), 1);
  clock.step(1);
  assert.equal(b.isInBackOffSince('crash', finishedAt), false, 'crash-loop backoff over after 10 s, not 1 h');
  assert.equal(b.isInBackOffSinceUpdate('pull'), false, 'pull backoff over after 10 s, not 1 h');
  // The next exit, stamped by the runtime's stepped wall clock, backs off 20 s from then.
  const second = clock.now();
  b.next('crash', second);
  assert.equal(b.get('crash'), 20_000);
  clock.step(19_999);
  assert.equal(b.isInBackOffSince('crash', second), true);
  clock.step(1);
  assert.equal(b.isInBackOffSince('crash', second), false);
});

test('Backoff: doubling, cap, expiry after 2 x max, Go duration strings', () => {
  const clock = new FakeClock(0);
  const b = new Backoff({ initialMs: 10_000, maxMs: 300_000, clock });
  const seen: number[] = [];
  for (let i = 0; i < 7; i++) {
    b.next('k', clock.now());
    seen.push(b.get('k'));
  }
  assert.deepEqual(seen, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  assert.equal(b.isInBackOffSince('k', clock.now()), true);
  clock.step(300_000);
  assert.equal(b.isInBackOffSince('k', 0), false);
  clock.step(300_001);
  b.next('k', clock.now());
  assert.equal(b.get('k'), 10_000, 'reset after more than 10 minutes');
  b.gc();
  assert.equal(b.size, 1);
  clock.step(600_001);
  b.gc();
  assert.equal(b.size, 0);
  assert.throws(() => new Backoff({ initialMs: 0, maxMs: 1, clock }), /initialMs/);
  assert.deepEqual([10_000, 80_000, 160_000, 300_000, 1_500, 500, 3_600_000].map(formatGoDuration), ['10s', '1m20s', '2m40s', '5m0s', '1.5s', '500ms', '1h0m0s']);
});

test('assemblePodStatus orders instances by attempt, then creation: a clock step back does not make a new instance the oldest', () => {
  // attempt 2 was created after the wall clock stepped back an hour: its createdAt is older.
  const cs = [
    ctr('app', 'CONTAINER_EXITED', { id: 'a1', attempt: 1, createdAtNs: '1700000000000000000' }),
    ctr('app', 'CONTAINER_RUNNING', { id: 'a2', attempt: 2, createdAtNs: '1699996400000000000' }),
    ctr('side', 'CONTAINER_RUNNING', { id: 's0', attempt: 0, createdAtNs: '1700000000500000000' }),
    ctr('app', 'CONTAINER_EXITED', { id: 'a0', attempt: 0, createdAtNs: '1699999990000000000' }),
  ];
  const sbs = [sandbox('old', false, 0), { ...sandbox('new', true, 1), createdAtNs: '5' }, { ...sandbox('mid', false, 0), createdAtNs: '9' }];
  const st = assemblePodStatus({ uid: 'u', name: 'n', namespace: 'd' }, sbs, cs);
  assert.deepEqual(st.containers.filter((c) => c.name === 'app').map((c) => c.id), ['a2', 'a1', 'a0']);
  assert.deepEqual(st.sandboxes.map((s) => s.id), ['new', 'mid', 'old'], 'attempt first; equal attempts by creation');
});
