/**
 * Node-pressure eviction against a real kube-apiserver on the simulated runtime (a separate
 * process). Memory pressure is created deterministically: each pod's working set is set with
 * the sim.shardlet.io/memory-working-set-bytes annotation, and on the simulated runtime the
 * node's working set is what its containers report (simulated-node-memory.ts), against the
 * machine's memory (os.totalmem(), the agent's capacity).
 *
 *   threshold memory.available<80% of capacity; pods: `over` (Burstable, request 64Mi, 30%),
 *   `be` (BestEffort, 20%), `within` (Guaranteed 1Gi, 256Mi: within its request): available
 *   ≈ 50% → `over` is evicted first (over its request, the most above it), then `be`
 *   (available ≈ 70% < 80%), then the pressure is gone (≈ 98%): `within` keeps running.
 *   The evicted pods end Failed/Evicted with the kubelet's message and an Evicted event; the
 *   Node shows MemoryPressure=True, a BestEffort pod created meanwhile is refused (Evicted, "The
 *   node had condition: [MemoryPressure]. ") while a Burstable one runs; after the transition
 *   period the condition is False again and a BestEffort pod runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import type { V1Pod } from '@kubernetes/client-node';
import { pollUntil } from './agent-harness.js';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';

const NS = 'evict';
const NODE = 'node-evict';
const f = clusterSimFixture({ namespace: NS });
const Mi = 1024 * 1024;
const TOTAL = os.totalmem();

function pod(name: string, workingSetBytes: number, resources?: { requests?: Record<string, string>; limits?: Record<string, string> }): V1Pod {
  const p = apiPod(name, NS, NODE, { graceSeconds: 1 });
  p.metadata!.annotations = { 'sim.shardlet.io/memory-working-set-bytes': String(Math.floor(workingSetBytes)) };
  if (resources) p.spec!.containers[0]!.resources = resources;
  return p;
}

test('memory pressure on the sim: pods evicted in the kubelet order, MemoryPressure flips and recovers, BestEffort refused meanwhile', { timeout: 300_000 }, async () => {
  const { core } = coreApi(f.cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(f.cp.adminKubeconfig, NS));
  await r.start();
  f.agent = await startClusterAgent({
    cp: f.cp, nodeName: NODE, endpoint: f.endpoint,
    extraArgs: ['--eviction-hard', 'memory.available<80%', '--eviction-pressure-transition-period', '20s', '--node-status-update-frequency', '1s'],
  });
  const memoryPressure = async (): Promise<string | undefined> => (await core.readNode({ name: NODE })).status?.conditions?.find((c) => c.type === 'MemoryPressure')?.status;
  await pollUntil(async () => ((await memoryPressure()) === 'False' ? true : undefined), { what: 'the Node registered without memory pressure', timeoutMs: 60_000, intervalMs: 500 });

  // `within` first, alone: no pressure (≈ 256Mi used).
  const [within] = await createPods(core, [pod('within', 256 * Mi, { requests: { memory: '1Gi', cpu: '100m' }, limits: { memory: '1Gi', cpu: '100m' } })]);
  await r.waitFor(() => (isApiRunning(r.pods.get(within!.metadata!.uid!) ?? {}) ? true : undefined), 'within running', 60_000);
  const [over, be] = await createPods(core, [pod('over', TOTAL * 0.3, { requests: { memory: '64Mi' } }), pod('be', TOTAL * 0.2)]);
  const overUid = over!.metadata!.uid!;
  const beUid = be!.metadata!.uid!;

  const evictedOver = await r.waitFor(() => {
    const p = r.pods.get(overUid);
    return p?.status?.phase === 'Failed' ? p : undefined;
  }, 'over evicted', 90_000);
  assert.equal(evictedOver.status?.reason, 'Evicted');
  assert.match(evictedOver.status?.message ?? '', /^The node was low on resource: memory\. Threshold quantity: \d+\w*, available: \d+\w*\. Container main was using \d+\w*, request is 64Mi, has larger consumption of memory\. $/);
  assert.notEqual(r.pods.get(beUid)?.status?.phase, 'Failed', 'one pod per pass: be is still there when over is evicted');

  // Under pressure: the Node says so, a BestEffort pod is refused, a Burstable one is admitted.
  await pollUntil(async () => ((await memoryPressure()) === 'True' ? true : undefined), { what: 'MemoryPressure=True on the Node', timeoutMs: 30_000, intervalMs: 200 });
  const [refused, admitted] = await createPods(core, [pod('refused-be', 1 * Mi), pod('admitted-burst', 1 * Mi, { requests: { memory: '16Mi' } })]);
  const rejected = await r.waitFor(() => {
    const p = r.pods.get(refused!.metadata!.uid!);
    return p?.status?.phase === 'Failed' ? p : undefined;
  }, 'the BestEffort pod refused', 30_000);
  assert.equal(rejected.status?.reason, 'Evicted');
  assert.equal(rejected.status?.message, 'Pod was rejected: The node had condition: [MemoryPressure]. ', 'the kubelet\'s rejectPod prefix');

  const evictedBe = await r.waitFor(() => {
    const p = r.pods.get(beUid);
    return p?.status?.phase === 'Failed' ? p : undefined;
  }, 'be evicted second', 90_000);
  assert.equal(evictedBe.status?.reason, 'Evicted');
  assert.match(evictedBe.status?.message ?? '', /^The node was low on resource: memory\. Threshold quantity: \d+\w*, available: \d+\w*\. Container main was using \d+\w*, request is 0, has larger consumption of memory\. $/);
  await r.waitFor(() => (isApiRunning(r.pods.get(admitted!.metadata!.uid!) ?? {}) ? true : undefined), 'the Burstable pod admitted and running', 60_000);

  // The pressure is gone: the condition goes back to False after the transition period.
  await pollUntil(async () => ((await memoryPressure()) === 'False' ? true : undefined), { what: 'MemoryPressure=False again', timeoutMs: 90_000, intervalMs: 500 });
  assert.ok(isApiRunning(r.pods.get(within!.metadata!.uid!) ?? {}), 'within (inside its request) was never evicted');
  const [late] = await createPods(core, [pod('late-be', 1 * Mi)]);
  await r.waitFor(() => (isApiRunning(r.pods.get(late!.metadata!.uid!) ?? {}) ? true : undefined), 'a BestEffort pod runs once the pressure is over', 60_000);

  const events = await pollUntil(async () => {
    const list = await core.listNamespacedEvent({ namespace: NS });
    const evicted = list.items.filter((e) => e.reason === 'Evicted' && e.type === 'Warning');
    return evicted.some((e) => e.involvedObject.uid === overUid) && evicted.some((e) => e.involvedObject.uid === beUid) ? evicted : undefined;
  }, { what: 'Evicted events on both pods', timeoutMs: 30_000, intervalMs: 500 });
  assert.match(events.find((e) => e.involvedObject.uid === overUid)?.message ?? '', /^The node was low on resource: memory\./);
  const metrics = (await f.agent.get('/metrics')).body;
  assert.match(metrics, /kubelet_evictions\{eviction_signal="memory.available"\} 2/);
  assert.deepEqual(r.violations, []);
});

test('ephemeral-storage limits on the sim: a pod whose writable layer passes its limit is evicted with the kubelet message; one within stays', { timeout: 300_000 }, async () => {
  const { core } = coreApi(f.cp.adminKubeconfig);
  f.rec?.close();
  const r = (f.rec = new PodWatchRecorder(f.cp.adminKubeconfig, NS));
  await r.start();
  await f.agent?.kill();
  // No thresholds: only the limits are checked (every pass, as the kubelet's localStorageEviction).
  f.agent = await startClusterAgent({ cp: f.cp, nodeName: NODE, endpoint: f.endpoint, extraArgs: ['--eviction-hard', 'memory.available<0%'] });
  const withLayer = (name: string, layerBytes: number, limits: Record<string, string>): V1Pod => {
    const p = pod(name, 1 * Mi, { limits });
    p.metadata!.annotations!['sim.shardlet.io/writable-layer-bytes'] = String(layerBytes);
    return p;
  };
  const pods = await createPods(core, [
    withLayer('eph-over', 200 * Mi, { 'ephemeral-storage': '100Mi' }),
    withLayer('eph-within', 50 * Mi, { 'ephemeral-storage': '100Mi' }),
  ]);
  const [overUid, withinUid] = pods.map((p) => p.metadata!.uid!) as [string, string];
  const evicted = await r.waitFor(() => {
    const p = r.pods.get(overUid);
    return p?.status?.phase === 'Failed' ? p : undefined;
  }, 'eph-over evicted', 90_000);
  assert.equal(evicted.status?.reason, 'Evicted');
  assert.equal(evicted.status?.message, 'Pod ephemeral local storage usage exceeds the total limit of containers 100Mi. ');
  await r.waitFor(() => (isApiRunning(r.pods.get(withinUid) ?? {}) ? true : undefined), 'eph-within running', 60_000);
  // A few more passes: the pod within its limit stays.
  const metricsAfter = await pollUntil(async () => {
    const m = (await f.agent!.get('/metrics')).body;
    return /kubelet_evictions\{eviction_signal="ephemeralpodfs.limit"\} 1/.test(m) ? m : undefined;
  }, { what: 'the eviction counted', timeoutMs: 30_000, intervalMs: 500 });
  assert.ok(metricsAfter.length > 0);
  assert.ok(isApiRunning(r.pods.get(withinUid) ?? {}));
});
