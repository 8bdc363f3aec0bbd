/**
 * NodeStatusManager against a scripted NodeRegistry and a fake clock: registration (create; 409 →
 * GET + label PATCH; transient failure → backoff retry; 403 → refused, no retry), status change
 * detection (unchanged → nothing sent; changed → PATCH; heartbeat only → PATCH after the report
 * period), the Ready flip reported at once by run(), and the conditions' reasons.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../../src/main/apiserver/api-errors.js';
import type { NodeRef, NodeRegistry } from '../../../src/main/apiserver/object-roles.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { aggregateMessage, nodeConditions } from '../../../src/main/node-status/node-conditions.js';
import { computeNodeResources } from '../../../src/main/node-status/node-resources.js';
import { NodeRegistrationError, NodeStatusManager } from '../../../src/main/node-status/node-status-manager.js';
import type { NodeStatus } from '../../../src/main/node-status/node-status.js';
import { SignalClock } from './signal-clock.js';

class FakeRegistry implements NodeRegistry {
  readonly ops: { op: string; body?: Record<string, unknown> }[] = [];
  readonly failNext: ApiError[] = [];
  existing: NodeRef | undefined;
  #fail(): void {
    const e = this.failNext.shift();
    if (e) throw e;
  }
  async createNode(node: Record<string, unknown>): Promise<NodeRef> {
    this.ops.push({ op: 'create', body: node });
    this.#fail();
    if (this.existing) throw new ApiError('ERR_API_CONFLICT', 'exists', 409);
    const m = node['metadata'] as { name: string; labels: Record<string, string> };
    return (this.existing = { name: m.name, uid: 'uid-1', labels: m.labels });
  }
  async getNode(): Promise<NodeRef> {
    this.ops.push({ op: 'get' });
    this.#fail();
    return this.existing!;
  }
  async patchNode(_name: string, patch: Record<string, unknown>): Promise<NodeRef> {
    this.ops.push({ op: 'patchNode', body: patch });
    this.#fail();
    const labels = (patch['metadata'] as { labels: Record<string, string> }).labels;
    return (this.existing = { ...this.existing!, labels: { ...this.existing!.labels, ...labels } });
  }
  async patchNodeStatus(_name: string, status: Record<string, unknown>): Promise<void> {
    this.ops.push({ op: 'patchStatus', body: status });
    this.#fail();
  }
}

const resources = computeNodeResources({ cpus: 2, memoryBytes: 4 * 1024 ** 3, ephemeralStorageBytes: 10 * 1024 ** 3 }, { maxPods: 110, systemReserved: { cpu: '500m' }, kubeReserved: { memory: '1Gi' }, allocatableOverride: {} });

function setup() {
  const clock = new SignalClock();
  const registry = new FakeRegistry();
  const readiness = { runtimeErrors: [] as string[], networkErrors: [] as string[] };
  let images = [{ names: ['img:1'], sizeBytes: 10 }];
  const readyChanges: boolean[] = [];
  const m = new NodeStatusManager({
    registry, clock, logger: silentLogger, nodeName: 'n1', labels: { 'kubernetes.io/hostname': 'n1', team: 'a' }, taints: [{ key: 'k', effect: 'NoSchedule' }],
    static: { resources, addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], kubeletPort: 10255, nodeInfo: {} as never },
    readiness: () => readiness, images: async () => images,
    updateFrequencyMs: 10_000, reportFrequencyMs: 300_000,
    onReadyChange: (r) => readyChanges.push(r),
  });
  return { clock, registry, readiness, m, readyChanges, setImages: (i: typeof images) => (images = i) };
}

test('capacity and allocatable: reserved subtracted; admission reads the same allocatable', () => {
  assert.deepEqual(resources.capacity, { cpu: '2', memory: '4194304Ki', 'ephemeral-storage': '10485760Ki', pods: '110' });
  assert.deepEqual(resources.allocatable, { cpu: '1500m', memory: '3145728Ki', 'ephemeral-storage': '10485760Ki', pods: '110' });
  assert.deepEqual(resources.admission, { cpuMillis: 1500, memoryBytes: 3 * 1024 ** 3 });
  assert.throws(() => computeNodeResources({ cpus: 1, memoryBytes: 1, ephemeralStorageBytes: undefined }, { maxPods: 1, systemReserved: { gpu: '1' }, kubeReserved: {}, allocatableOverride: {} }), /--system-reserved: unsupported resource "gpu"/);
  assert.throws(() => computeNodeResources({ cpus: 1, memoryBytes: 1, ephemeralStorageBytes: undefined }, { maxPods: 1, systemReserved: {}, kubeReserved: { memory: 'lots' }, allocatableOverride: {} }), /invalid quantity/);
});

test('conditions: the kubelet reasons; NotReady aggregates errors; transition time kept while the status holds', () => {
  const t0 = 1_700_000_000_000;
  const ready = nodeConditions(undefined, { runtimeErrors: [], networkErrors: [] }, t0);
  assert.deepEqual(ready.map((c) => [c.type, c.status, c.reason]), [
    ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'], ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
    ['PIDPressure', 'False', 'KubeletHasSufficientPID'], ['Ready', 'True', 'KubeletReady'],
  ]);
  const later = nodeConditions(ready, { runtimeErrors: [], networkErrors: [] }, t0 + 10_000);
  assert.equal(later[3]!.lastTransitionTime, ready[3]!.lastTransitionTime);
  assert.notEqual(later[3]!.lastHeartbeatTime, ready[3]!.lastHeartbeatTime);
  const down = nodeConditions(later, { runtimeErrors: ['container runtime is down', 'PLEG is not healthy: x'], networkErrors: [] }, t0 + 20_000);
  assert.deepEqual([down[3]!.status, down[3]!.reason, down[3]!.message], ['False', 'KubeletNotReady', '[container runtime is down, PLEG is not healthy: x]']);
  assert.equal(down[3]!.lastTransitionTime, '2023-11-14T22:13:40Z');
  assert.equal(down[0]!.lastTransitionTime, ready[0]!.lastTransitionTime);
  assert.equal(aggregateMessage(['a', 'a']), 'a');
});

test('register: POST the Node with labels, taints and status', async () => {
  const { registry, m } = setup();
  const node = await m.register(new AbortController().signal);
  assert.equal(node.uid, 'uid-1');
  assert.equal(m.state, 'registered');
  const body = registry.ops[0]!.body!;
  assert.deepEqual((body['metadata'] as { labels: unknown }).labels, { 'kubernetes.io/hostname': 'n1', team: 'a' });
  assert.deepEqual((body['spec'] as { taints: unknown }).taints, [{ key: 'k', effect: 'NoSchedule' }]);
  assert.equal(((body['status'] as NodeStatus).conditions.find((c) => c.type === 'Ready'))!.status, 'True');
  // The status POSTed is the reported one: the first sync sends nothing.
  assert.equal(await m.syncStatus(), 'unchanged');
  assert.deepEqual(registry.ops.map((o) => o.op), ['create']);
});

test('register: an existing Node is read, its labels patched, and the status sent at once', async () => {
  const { registry, m } = setup();
  registry.existing = { name: 'n1', uid: 'old-uid', labels: { 'kubernetes.io/hostname': 'n1' } };
  const node = await m.register(new AbortController().signal);
  assert.equal(node.uid, 'old-uid');
  assert.deepEqual(registry.ops.map((o) => o.op), ['create', 'get', 'patchNode']);
  assert.deepEqual(registry.ops[2]!.body, { metadata: { labels: { team: 'a' } } });
  assert.equal(await m.syncStatus(), 'patched');
});

test('register: a transient failure is retried with backoff; 403 is refused without retry', async () => {
  const { registry, m, clock } = setup();
  registry.failNext.push(new ApiError('ERR_API_UNREACHABLE', 'connection refused'));
  const p = m.register(new AbortController().signal);
  assert.equal(await clock.nextSleep(), 100);
  clock.step(100);
  assert.equal((await p).uid, 'uid-1');

  const s2 = setup();
  s2.registry.failNext.push(new ApiError('ERR_API_FORBIDDEN', 'nodes "n1" is forbidden: node "n2" is not allowed to modify node "n1"', 403));
  await assert.rejects(s2.m.register(new AbortController().signal), (err: unknown) => err instanceof NodeRegistrationError && /registration refused.*forbidden/.test(err.message));
  assert.equal(s2.m.state, 'refused');
  assert.equal(s2.registry.ops.length, 1);
});

test('status: unchanged → nothing; a change → PATCH; heartbeat only → PATCH after the report period', async () => {
  const { registry, m, clock, setImages } = setup();
  await m.register(new AbortController().signal);
  clock.step(10_000);
  assert.equal(await m.syncStatus(), 'unchanged');
  setImages([{ names: ['img:2'], sizeBytes: 20 }]);
  assert.equal(await m.syncStatus(), 'patched');
  assert.deepEqual((registry.ops.at(-1)!.body as unknown as NodeStatus).images, [{ names: ['img:2'], sizeBytes: 20 }]);
  clock.step(290_000);
  assert.equal(await m.syncStatus(), 'unchanged', 'within 5 min of the last report');
  clock.step(10_000);
  assert.equal(await m.syncStatus(), 'patched', '5 min since the last report');
  // A failed PATCH keeps the change pending: the next sync sends it.
  setImages([]);
  registry.failNext.push(new ApiError('ERR_API_SERVER', '500', 500));
  assert.equal(await m.syncStatus(), 'failed');
  assert.equal(await m.syncStatus(), 'patched');
});

test('run: a Ready flip is reported within one readiness check, not at the next 10 s update', async () => {
  const { registry, m, clock, readiness, readyChanges } = setup();
  const stop = new AbortController();
  let registered: NodeRef | undefined;
  const done = m.run(stop.signal, (n) => (registered = n));
  assert.equal(await clock.nextSleep(), 1_000);
  assert.equal(registered?.uid, 'uid-1');
  assert.deepEqual(readyChanges, [true]);
  const patches = (): number => registry.ops.filter((o) => o.op === 'patchStatus').length;
  assert.equal(patches(), 0);
  readiness.runtimeErrors = ['container runtime is down'];
  clock.step(1_000);
  assert.equal(await clock.nextSleep(), 1_000);
  assert.equal(patches(), 1);
  const sent = registry.ops.at(-1)!.body as unknown as NodeStatus;
  assert.deepEqual(sent.conditions.find((c) => c.type === 'Ready'), { ...sent.conditions.find((c) => c.type === 'Ready'), status: 'False', reason: 'KubeletNotReady', message: 'container runtime is down' });
  assert.deepEqual(readyChanges, [true, false]);
  stop.abort();
  await done;
});

test('pause: no status written even when it changed; resume: the whole status is written again at the next update', async () => {
  const { registry, m, clock, setImages } = setup();
  await m.register(new AbortController().signal);
  const ops = registry.ops.length;
  m.pause();
  setImages([{ names: ['img:3'], sizeBytes: 30 }]);
  clock.step(400_000);
  assert.equal(await m.syncStatus(), 'unchanged');
  assert.equal(registry.ops.length, ops, 'nothing sent while paused');
  m.resume();
  assert.equal(await m.syncStatus(), 'patched', 'resumed: sent although the last report is forgotten, not compared');
  assert.equal(await m.syncStatus(), 'unchanged');
});
