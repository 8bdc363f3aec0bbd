import { test } from 'node:test';
import assert from 'node:assert/strict';
import { auditAgentGone, auditAgentPods, auditRuntimeGone, auditRuntimeRunning, buildInventory, capFailures, teardownState } from '../../../bench/pod-audit.js';
import { parseRunningLine, RunningLog, summarizePodList, type AgentPodView } from '../../../bench/agent-observer.js';
import type { Container, ContainerState, PodSandbox, PodSandboxState } from '../../../src/shared/cri/cri-types.js';

function sb(id: string, uid: string, state: PodSandboxState = 'SANDBOX_READY'): PodSandbox {
  return { id, metadata: { name: `n-${uid}`, uid, namespace: 'bench', attempt: 0 }, state, createdAt: '0', labels: { 'io.kubernetes.pod.uid': uid }, annotations: {}, runtimeHandler: '' };
}
function ct(id: string, sandboxId: string, state: ContainerState = 'CONTAINER_RUNNING', uid?: string): Container {
  return { id, podSandboxId: sandboxId, metadata: null, image: null, imageRef: '', state, createdAt: '0', labels: uid ? { 'io.kubernetes.pod.uid': uid } : {}, annotations: {}, imageId: '' };
}
const A = { uid: 'a', name: 'pa' };
const B = { uid: 'b', name: 'pb' };

test('a clean runtime passes', () => {
  const inv = buildInventory([sb('s1', 'a'), sb('s2', 'b')], [ct('c1', 's1'), ct('c2', 's2', 'CONTAINER_RUNNING', 'b')]);
  assert.deepEqual(auditRuntimeRunning(inv, [A, B]), []);
});

test('missing, duplicated, not-ready and unexpected pods each fail with the pod named', () => {
  const inv = buildInventory(
    [sb('s1', 'a'), sb('s1b', 'a', 'SANDBOX_NOTREADY'), sb('s9', 'zzz')],
    [ct('c1', 's1'), ct('c9', 's9')],
  );
  const f = auditRuntimeRunning(inv, [A, B]);
  assert.equal(f.length, 3, f.join('\n'));
  assert.match(f[0] ?? '', /pod pa \(a\) is duplicated in the runtime: 2 sandboxes/);
  assert.match(f[1] ?? '', /pod pb \(b\) is missing from the runtime/);
  assert.match(f[2] ?? '', /nobody asked for: uid "zzz"/);
  assert.deepEqual(auditRuntimeRunning(inv, [A, B], new Set(['zzz'])).length, 2, 'tolerated UIDs are not unexpected');
});

test('two containers for one pod, or an exited one, fail', () => {
  const two = buildInventory([sb('s1', 'a')], [ct('c1', 's1'), ct('c2', 's1')]);
  assert.match(auditRuntimeRunning(two, [A])[0] ?? '', /2 containers/);
  const exited = buildInventory([sb('s1', 'a')], [ct('c1', 's1', 'CONTAINER_EXITED')]);
  assert.match(auditRuntimeRunning(exited, [A])[0] ?? '', /CONTAINER_EXITED, not CONTAINER_RUNNING/);
});

test('a pod of several containers: all running passes; a missing, an extra or an exited one fails', () => {
  const M = { uid: 'a', name: 'pa', containers: 3 };
  const ok = buildInventory([sb('s1', 'a')], [ct('c1', 's1'), ct('c2', 's1'), ct('c3', 's1')]);
  assert.deepEqual(auditRuntimeRunning(ok, [M]), []);
  const short = buildInventory([sb('s1', 'a')], [ct('c1', 's1'), ct('c2', 's1')]);
  assert.match(auditRuntimeRunning(short, [M])[0] ?? '', /has 2 of its 3 containers/);
  const extra = buildInventory([sb('s1', 'a')], [ct('c1', 's1'), ct('c2', 's1'), ct('c3', 's1'), ct('c4', 's1')]);
  assert.match(auditRuntimeRunning(extra, [M])[0] ?? '', /duplicated in the runtime: 4 containers for 3/);
  const exited = buildInventory([sb('s1', 'a')], [ct('c1', 's1'), ct('c2', 's1', 'CONTAINER_EXITED'), ct('c3', 's1')]);
  assert.match(auditRuntimeRunning(exited, [M])[0] ?? '', /CONTAINER_EXITED, not CONTAINER_RUNNING/);
});

test('teardown states and the gone audit', () => {
  const inv = buildInventory([sb('s1', 'a', 'SANDBOX_NOTREADY'), sb('s2', 'b')], [ct('c1', 's1', 'CONTAINER_EXITED')]);
  assert.equal(teardownState(inv, 'a'), 'stopped');
  assert.equal(teardownState(inv, 'b'), 'running');
  assert.equal(teardownState(inv, 'c'), 'removed');
  assert.deepEqual(auditRuntimeGone(inv, [A], 'stopped'), []);
  assert.match(auditRuntimeGone(inv, [A], 'removed')[0] ?? '', /deleted pod pa \(a\) is still in the runtime \(stopped/);
  assert.match(auditRuntimeGone(inv, [B], 'stopped')[0] ?? '', /\(running/);
});

test('agent /pods audit', () => {
  const v = (uid: string, phase = 'Running', allRunning = true): AgentPodView => ({ uid, name: `x-${uid}`, namespace: 'bench', phase, allRunning, containers: 1 });
  assert.deepEqual(auditAgentPods([v('a'), v('b')], [A, B]), []);
  const f = auditAgentPods([v('a'), v('a'), v('b', 'Pending', false), v('q')], [A, B]);
  assert.equal(f.length, 3);
  assert.match(f[0] ?? '', /appears 2 times/);
  assert.match(f[1] ?? '', /not running in \/pods \(phase "Pending"/);
  assert.match(f[2] ?? '', /nobody asked for: bench\/x-q/);
  assert.deepEqual(auditAgentGone([v('a')], [A, B]), ['deleted pod pa (a) is still listed in the agent\'s /pods']);
});

test('capFailures keeps the report readable', () => {
  assert.deepEqual(capFailures(['1', '2', '3'], 2), ['1', '2', '… and 1 more']);
});

test('parseRunningLine reads only the agent\'s "pod running" JSON lines', () => {
  assert.deepEqual(parseRunningLine('{"level":"info","msg":"pod running","pod":"bench/p-node","podUID":"u1","seenToRunningMs":12.5}'), { podUID: 'u1', pod: 'bench/p-node', seenToRunningMs: 12.5 });
  assert.equal(parseRunningLine('{"msg":"pod running in a sentence"}'), null);
  assert.equal(parseRunningLine('pod running but not json'), null);
  assert.deepEqual(parseRunningLine('{"msg":"pod running","podUID":"u2"}'), { podUID: 'u2', pod: '', seenToRunningMs: null });
});

test('RunningLog keeps the first event per UID and counts repeats', () => {
  let t = 100;
  const log = new RunningLog(() => t);
  log.onLine('{"msg":"pod running","podUID":"u1","seenToRunningMs":5}');
  t = 200;
  log.onLine('{"msg":"pod running","podUID":"u1","seenToRunningMs":9}');
  log.onLine('{"msg":"something else","podUID":"u2"}');
  assert.equal(log.size, 1);
  assert.equal(log.repeats, 1);
  assert.deepEqual(log.get('u1'), { podUID: 'u1', pod: '', seenToRunningMs: 5, atMs: 100 });
});

test('summarizePodList reads phase and running containers; rejects a non-PodList', () => {
  const views = summarizePodList({
    kind: 'PodList',
    items: [
      { metadata: { uid: 'a', name: 'p', namespace: 'bench' }, status: { phase: 'Running', containerStatuses: [{ state: { running: { startedAt: 'x' } } }] } },
      { metadata: { uid: 'b', name: 'q', namespace: 'bench' }, status: { phase: 'Pending', containerStatuses: [{ state: { waiting: {} } }] } },
      { metadata: { uid: 'c' } },
    ],
  });
  assert.deepEqual(views.map((v) => [v.uid, v.phase, v.allRunning, v.containers]), [['a', 'Running', true, 1], ['b', 'Pending', false, 1], ['c', '', false, 0]]);
  assert.throws(() => summarizePodList({ kind: 'Status' }), TypeError);
});
