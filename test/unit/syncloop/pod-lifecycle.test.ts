import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { PodDispatcher } from '../../../src/main/dispatch/pod-dispatcher.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import type { CacheEntry } from '../../../src/shared/pod-cache/pod-cache.js';
import { emptyPodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { PodManager } from '../../../src/main/pod-manager/pod-manager.js';
import { StatusManager } from '../../../src/main/status/status-manager.js';
import { PodLifecycle } from '../../../src/main/syncloop/pod-lifecycle.js';
import { WorkQueue } from '../../../src/main/syncloop/work-queue.js';
import type { PodUpdateMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';

function pod(uid: string, created = '2026-01-01T00:00:00Z'): V1Pod {
  return {
    metadata: { uid, name: `p-${uid}`, namespace: 'default', creationTimestamp: new Date(created), annotations: { 'kubernetes.io/config.source': 'file' } },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  };
}

function setup(opts: { maxActive?: number; sourcesReady?: boolean } = {}) {
  const clock = new FakeClock();
  const sent: PodUpdateMessage[] = [];
  const dispatcher: PodDispatcher = { threads: 2, send: (m) => sent.push(m), stats: async () => [], close: async () => {} };
  const podManager = new PodManager();
  const statusManager = new StatusManager({ clock, logger: silentLogger });
  const workQueue = new WorkQueue();
  const cache = new Map<string, CacheEntry>();
  let ready = opts.sourcesReady ?? true;
  const lc = new PodLifecycle({
    clock,
    logger: silentLogger,
    dispatcher,
    podManager,
    statusManager,
    workQueue,
    admitter: {
      admit: (_p, active) =>
        active.count >= (opts.maxActive ?? 100)
          ? { admit: false, reason: 'OutOfpods', message: `Node didn't have enough resource: pods, requested: 1, used: ${active.count}, capacity: ${opts.maxActive}` }
          : { admit: true },
    },
    sourcesReady: () => ready,
    cache: { get: (uid) => cache.get(uid) },
  });
  return { clock, sent, podManager, statusManager, workQueue, cache, lc, setReady: (v: boolean) => (ready = v) };
}

test('additions are admitted in creation order; a rejected pod is Failed with the kubelet reason and never dispatched', () => {
  const { lc, sent, statusManager } = setup({ maxActive: 2 });
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('c', '2026-01-03T00:00:00Z'), pod('a', '2026-01-01T00:00:00Z'), pod('b', '2026-01-02T00:00:00Z')] });
  assert.deepEqual(sent.map((m) => [m.uid, m.updateType]), [['a', 'create'], ['b', 'create']]);
  assert.equal(statusManager.get('c')?.phase, 'Failed');
  assert.equal(statusManager.get('c')?.reason, 'OutOfpods');
  assert.equal(statusManager.get('c')?.message, "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2", 'the kubelet\'s rejectPod message');
  lc.handleConfigUpdate({ op: 'UPDATE', source: 'file', pods: [pod('c')] });
  assert.equal(sent.length, 2, 'updates of a rejected pod are not dispatched');
});

test('remove sends a kill with removed=true; the worker forgetting the pod clears its status', () => {
  const { lc, sent, statusManager, podManager } = setup();
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a')] });
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'syncing', work: 'sync', durationMs: 1, apiStatus: { phase: 'Running' }, requeueAfterMs: 60_000 });
  assert.equal(statusManager.get('a')?.phase, 'Running');
  lc.handleConfigUpdate({ op: 'REMOVE', source: 'file', pods: [pod('a')] });
  assert.deepEqual(sent.map((m) => [m.updateType, m.kill?.removed]), [['create', undefined], ['kill', true]]);
  assert.equal(podManager.has('a'), false);
  assert.equal(lc.activePods().length, 0, 'a pod being killed does not count for admission');
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'terminated', work: 'cleanup', durationMs: 1, forgotten: true });
  assert.equal(statusManager.get('a'), undefined);
});

test('DELETE terminates with the deletion grace period but keeps the pod listed', () => {
  const { lc, sent, podManager } = setup();
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a')] });
  const deleting = { ...pod('a'), metadata: { ...pod('a').metadata, deletionTimestamp: new Date(), deletionGracePeriodSeconds: 5 } };
  lc.handleConfigUpdate({ op: 'DELETE', source: 'api', pods: [deleting] });
  assert.deepEqual(sent[1]?.kill, { removed: false, reason: 'deleted', gracePeriodSeconds: 5 });
  assert.equal(podManager.has('a'), true);
});

test('requeued pods are resynced when due; PLEG events resync known pods only', () => {
  const { lc, sent, clock } = setup();
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a'), pod('b')] });
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'syncing', work: 'sync', durationMs: 1, requeueAfterMs: 10_000 });
  sent.length = 0;
  clock.step(9_999);
  lc.syncDue();
  assert.equal(sent.length, 0);
  clock.step(1);
  lc.syncDue();
  assert.deepEqual(sent.map((m) => [m.uid, m.updateType, m.plegOnly]), [['a', 'sync', undefined]], 'due work is a full sync');
  sent.length = 0;
  lc.handlePlegEvents([{ id: 'b', type: 'ContainerDied', data: 'x' }, { id: 'b', type: 'ContainerStarted', data: 'y' }, { id: 'zzz', type: 'ContainerStarted', data: 'z' }]);
  assert.deepEqual(sent.map((m) => [m.uid, m.updateType, m.plegOnly]), [['b', 'sync', true]], 'one resync per pod, marked PLEG-only; unknown pods are left to housekeeping');
});

test('housekeeping kills runtime pods no source wants, but only once every source is ready', () => {
  const { lc, sent, cache, setReady } = setup({ sourcesReady: false });
  const status = { ...emptyPodStatus('orphan', 'old', 'default'), sandboxes: [{ id: 's', state: 'SANDBOX_READY' as const, createdAtNs: '1', attempt: 0, ip: '', ips: [], hostNetwork: true }] };
  cache.set('orphan', { status, error: null, timestampMs: 1 });
  lc.handlePlegEvents([{ id: 'orphan', type: 'ContainerStarted', data: 'c' }]);
  lc.housekeeping();
  assert.equal(sent.length, 0, 'no cleanup before sources are ready');
  setReady(true);
  lc.housekeeping();
  assert.deepEqual(sent.map((m) => [m.uid, m.updateType, m.kill?.reason, m.pod.metadata?.name]), [['orphan', 'kill', 'orphaned', 'old']]);
  // As the kubelet: a 1 s grace override, and the orphan's logs are left in place.
  assert.equal(sent[0]?.kill?.gracePeriodSeconds, 1);
  assert.equal(sent[0]?.kill?.keepLogs, true);
});

test('housekeeping kills an orphan whose cache entry holds an error (its objects are unknown, not absent)', () => {
  const { lc, sent, cache } = setup();
  const placeholder = emptyPodStatus('big', 'wide', 'default');
  cache.set('big', { status: placeholder, error: { code: 'ERR_CACHE_ENTRY_TOO_LARGE', message: 'too large' }, timestampMs: 1 });
  cache.set('empty', { status: emptyPodStatus('empty'), error: null, timestampMs: 1 });
  lc.handlePlegEvents([{ id: 'big', type: 'ContainerStarted', data: 'c' }, { id: 'empty', type: 'ContainerDied', data: 'c' }]);
  lc.housekeeping();
  assert.deepEqual(sent.map((m) => [m.uid, m.kill?.reason, m.pod.metadata?.name]), [['big', 'orphaned', 'wide']], 'the error entry is killed; the entry without objects is not');
});

test('housekeeping does not kill a just-removed pod again from a relist that began before its removal', () => {
  const { lc, sent, cache } = setup();
  const sandboxed = { ...emptyPodStatus('a', 'p-a', 'default'), sandboxes: [{ id: 's', state: 'SANDBOX_NOTREADY' as const, createdAtNs: '1', attempt: 0, ip: '', ips: [], hostNetwork: true }] };
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a')] });
  lc.handlePlegEvents([{ id: 'a', type: 'ContainerStarted', data: 'c' }]);
  lc.handleConfigUpdate({ op: 'REMOVE', source: 'file', pods: [pod('a')] });
  // The worker removes the pod's objects and forgets it at cache time 1000 (dropping its entry)...
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'terminated', work: 'cleanup', durationMs: 1, forgotten: true, forgottenAtMs: 1000 });
  // ...then a relist that listed the pod before the removal stores what it saw, stamped 990.
  cache.set('a', { status: sandboxed, error: null, timestampMs: 990 });
  lc.handlePlegEvents([{ id: 'a', type: 'ContainerDied', data: 'c' }]);
  sent.length = 0;
  lc.housekeeping();
  lc.housekeeping();
  assert.equal(sent.length, 0, 'no second kill of a removed pod');
  // A later relist still seeing the pod (stamped after the removal) is a real orphan.
  cache.set('a', { status: sandboxed, error: null, timestampMs: 1500 });
  lc.housekeeping();
  assert.deepEqual(sent.map((m) => [m.uid, m.kill?.reason]), [['a', 'orphaned']]);
});

test('housekeeping decodes no cache entry of a pod a source or worker knows; only unknown ones are read', () => {
  const { lc, sent, cache } = setup();
  const reads: string[] = [];
  const realGet = cache.get.bind(cache);
  cache.get = (uid: string) => (reads.push(uid), realGet(uid));
  const status = { ...emptyPodStatus('x', 'p-x', 'default'), sandboxes: [{ id: 's', state: 'SANDBOX_READY' as const, createdAtNs: '1', attempt: 0, ip: '', ips: [], hostNetwork: true }] };
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a'), pod('b')] });
  for (const uid of ['a', 'b', 'gone', 'orphan']) lc.handlePlegEvents([{ id: uid, type: 'ContainerStarted', data: 'c' }]);
  cache.set('a', { status, error: null, timestampMs: 1 });
  cache.set('orphan', { status, error: null, timestampMs: 1 });
  sent.length = 0;
  reads.length = 0;
  lc.housekeeping();
  assert.deepEqual(reads.sort(), ['gone', 'orphan'], 'known pods a and b are not read');
  assert.deepEqual(sent.map((m) => [m.uid, m.kill?.reason]), [['orphan', 'orphaned']]);
  reads.length = 0;
  lc.housekeeping();
  assert.deepEqual(reads, [], "'gone' (no runtime objects) left the set; the orphan now has a worker (its kill)");
});

test('a restarted shard gets every one of its pods again, kills included', () => {
  const { lc, sent, clock } = setup();
  const uids = Array.from({ length: 40 }, (_, i) => `u${i}`);
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: uids.map((u) => pod(u)) });
  lc.handleConfigUpdate({ op: 'REMOVE', source: 'file', pods: [pod('u0')] });
  sent.length = 0;
  lc.handleShardRestarted(0, 2);
  const resent = new Set(sent.map((m) => m.uid));
  assert.ok(resent.size > 5 && resent.size < 35, 'about half the pods');
  for (const m of sent) assert.equal(m.updateType, m.uid === 'u0' ? 'kill' : 'create');
  // Their first sync must not act on a status the dead thread may have outdated.
  for (const m of sent) assert.equal(m.statusNotBeforeMs, clock.now(), `${m.uid}: statusNotBeforeMs`);
});

test('a re-dispatch carries the last reported status, so startTime survives a thread restart', () => {
  const { lc, sent } = setup();
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a')] });
  const startTime = new Date('2026-01-01T00:00:05Z');
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'syncing', work: 'sync', durationMs: 1, apiStatus: { phase: 'Running', startTime } });
  sent.length = 0;
  lc.handleShardRestarted(0, 1);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]?.previousStatus?.startTime?.getTime(), startTime.getTime());
});

test('admission usage is kept incrementally: requests count while active and are released by a kill or a finished pod', async () => {
  const { admitWithUsage } = await import('../../../src/main/admission/admit-pod.js');
  const clock = new FakeClock();
  const sent: PodUpdateMessage[] = [];
  const statusManager = new StatusManager({ clock, logger: silentLogger });
  const node = { cpuMillis: 1000, memoryBytes: 1 << 30, pods: 110 };
  const lc = new PodLifecycle({
    clock,
    logger: silentLogger,
    dispatcher: { threads: 1, send: (m) => sent.push(m), stats: async () => [], close: async () => {} },
    podManager: new PodManager(),
    statusManager,
    workQueue: new WorkQueue(),
    admitter: { admit: (p, active) => admitWithUsage(p, active.count, active.used, node, 110) },
    sourcesReady: () => true,
    cache: { get: () => undefined },
  });
  const cpuPod = (uid: string): V1Pod => ({ ...pod(uid), spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '400m' } } }] } });
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [cpuPod('a'), cpuPod('b'), cpuPod('c')] });
  assert.equal(statusManager.get('c')?.reason, 'OutOfcpu');
  assert.match(statusManager.get('c')?.message ?? '', /requested: 400, used: 800, capacity: 1000/);
  lc.handleConfigUpdate({ op: 'REMOVE', source: 'file', pods: [cpuPod('a')] });
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [cpuPod('d')] });
  assert.deepEqual(sent.filter((m) => m.updateType === 'create').map((m) => m.uid), ['a', 'b', 'd'], 'the kill released a’s 400m');
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'b', state: 'terminating', work: 'sync', durationMs: 1 });
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [cpuPod('e')] });
  assert.ok(sent.some((m) => m.uid === 'e'), 'a finished pod no longer counts');
  assert.deepEqual(lc.activePods().map((p) => p.metadata?.uid).sort(), ['d', 'e']);
});

test('the runtime listed again after failed relists: pods whose last sync failed are retried now, once; healthy ones are not', () => {
  const { lc, sent, workQueue, clock } = setup();
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a'), pod('b'), pod('c')] });
  sent.length = 0;
  const err = { code: 'ERR_IMAGE_INSPECT', message: 'ImageStatus: read ECONNRESET' };
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'syncing', work: 'sync', durationMs: 1, error: err, requeueAfterMs: 12_000 });
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'b', state: 'syncing', work: 'sync', durationMs: 1, apiStatus: { phase: 'Running' }, requeueAfterMs: 60_000 });
  lc.handlePodResult({ kind: 'podResult', threadId: 2, uid: 'c', state: 'syncing', work: 'sync', durationMs: 1, error: err, requeueAfterMs: 11_000 });
  assert.equal(lc.handleRuntimeReturned(), 2);
  assert.deepEqual(sent.map((m) => [m.uid, m.updateType]).sort(), [['a', 'sync'], ['c', 'sync']]);
  // Their backoff entries are gone (no second sync when it would have expired); b keeps its resync.
  clock.step(12_000);
  assert.deepEqual(workQueue.takeDue(clock.monotonic()), []);
  assert.equal(workQueue.size, 1);
  // Once per failure: a second call retries nothing until a pod fails again.
  assert.equal(lc.handleRuntimeReturned(), 0);
});

test('a retry right after the runtime returned that fails again (a worker channel not reconnected yet) is retried after 1 s, not its backoff; later failures keep the backoff', () => {
  const { lc, sent, workQueue, clock } = setup();
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a'), pod('b')] });
  const unreachable = { code: 'ERR_CREATE_POD_SANDBOX', message: 'Failed to create pod sandbox: RunPodSandbox: No connection established' };
  const fail = (uid: string, requeueAfterMs: number): void =>
    lc.handlePodResult({ kind: 'podResult', threadId: 1, uid, state: 'syncing', work: 'sync', durationMs: 1, error: unreachable, requeueAfterMs });
  fail('a', 12_000);
  assert.equal(lc.handleRuntimeReturned(), 1);
  sent.length = 0;
  // The retry fails on a thread whose channel is still in its reconnect backoff.
  clock.step(100);
  fail('a', 12_000);
  clock.step(999);
  assert.deepEqual(workQueue.takeDue(clock.monotonic()), []);
  clock.step(1);
  assert.deepEqual(workQueue.takeDue(clock.monotonic()), ['a'], 'retried one relist period later');
  // Outside the window (5 s after the return) a failure keeps the backoff the worker asked for.
  clock.step(5_000);
  fail('b', 11_000);
  clock.step(10_999);
  assert.deepEqual(workQueue.takeDue(clock.monotonic()), []);
  clock.step(1);
  assert.deepEqual(workQueue.takeDue(clock.monotonic()), ['b']);
});

test('a pod already Succeeded or Failed in its source when first seen is never admitted or started, only terminated', () => {
  const { lc, sent, statusManager } = setup({ maxActive: 1 });
  const done = (uid: string, phase: 'Succeeded' | 'Failed'): V1Pod => ({ ...pod(uid), metadata: { ...pod(uid).metadata, annotations: { 'kubernetes.io/config.source': 'api' } }, status: { phase } });
  lc.handleConfigUpdate({ op: 'ADD', source: 'api', pods: [done('s', 'Succeeded'), done('f', 'Failed'), pod('live')] });
  assert.deepEqual(
    sent.map((m) => [m.uid, m.updateType, m.kill?.reason, m.kill?.terminateUnknown]),
    [['s', 'kill', 'terminal', true], ['f', 'kill', 'terminal', true], ['live', 'create', undefined, undefined]],
  );
  assert.equal(lc.activePods().length, 1, 'terminal pods take no admission room: the live pod fits under max 1');
  assert.equal(statusManager.get('s'), undefined, 'no status generated for it on the main thread');
  lc.handleConfigUpdate({ op: 'UPDATE', source: 'api', pods: [done('s', 'Succeeded')] });
  assert.deepEqual(sent.slice(3).map((m) => [m.uid, m.updateType]), [['s', 'kill']], 'an update of it is a kill again, never a sync');
});
