/**
 * The cluster-mode core scenario on real containerd (private instance; needs root, nothing is
 * skipped) against a real kube-apiserver with the node identity: pods created through the client
 * library (host network and pod network) → Running in the API with containerd's container IDs and
 * the pod-network pod's IP from the CNI bridge → `kubectl delete pod` returns only after their
 * containers are gone from containerd, and the objects are gone.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { startControlPlane, type ControlPlane } from '../harness/apiserver-harness.js';
import { pollUntil, runtimeView, type AgentProcess } from './agent-harness.js';
import { apiPod, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';

const NS = 'ctrd';
const NODE = 'node-ctrd';
let cp: ControlPlane | undefined;
let ctrd: ContainerdInstance | undefined;
let agent: AgentProcess | undefined;
let rec: PodWatchRecorder | undefined;

before(async () => {
  cp = await startControlPlane();
  await cp.ensureNamespace(NS);
  ctrd = await startContainerd();
}, { timeout: 30 * 60_000 });

after(async () => {
  rec?.close();
  await agent?.kill();
  await ctrd?.stop();
  await cp?.stop();
}, { timeout: 120_000 });

test('cluster mode on containerd: create → Running in the API → kubectl delete returns after the containers are gone', { timeout: 300_000 }, async (t) => {
  assert.ok(cp && ctrd);
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: ctrd.endpoint });
  const pods = [
    ...['a', 'b', 'c'].map((n) => apiPod(n, NS, NODE, { imagePullPolicy: 'Never', graceSeconds: 5 })),
    apiPod('net', NS, NODE, { imagePullPolicy: 'Never', graceSeconds: 5, podNetwork: true }),
  ];
  const t0 = performance.now();
  const created = await createPods(core, pods);
  const uids = created.map((p) => p.metadata!.uid!);
  await r.waitFor(() => (uids.every((u) => { const p = r.pods.get(u); return p !== undefined && isApiRunning(p); }) ? true : undefined), 'pods Running in the API on containerd', 120_000);
  t.diagnostic(`${uids.length} pods Running in the API on containerd after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const view = await runtimeView(ctrd.endpoint);
  for (const u of uids) {
    const p = r.pods.get(u)!;
    const id = p.status?.containerStatuses?.[0]?.containerID ?? '';
    assert.ok(id.startsWith('containerd://'), `${p.metadata?.name}: containerID ${id}`);
    assert.deepEqual(view.get(u)?.containers.map((c) => `containerd://${c.id}`), [id], `${p.metadata?.name}: the API shows containerd's container`);
  }
  const net = r.pods.get(uids[3]!)!;
  const prefix = ctrd.network.subnet.replace(/\.0\/24$/, '.');
  assert.ok((net.status?.podIP ?? '').startsWith(prefix), `pod-network pod IP ${net.status?.podIP} from ${ctrd.network.subnet}`);

  const tDel = performance.now();
  const del = await cp.kubectl(['delete', 'pod', '-n', NS, '--timeout=120s', ...created.map((p) => p.metadata!.name!)], { timeoutMs: 180_000 });
  assert.equal(del.code, 0, del.stderr);
  t.diagnostic(`kubectl delete returned after ${((performance.now() - tDel) / 1000).toFixed(1)} s`);
  const afterDelete = await runtimeView(ctrd.endpoint);
  for (const u of uids) {
    const v = afterDelete.get(u);
    assert.ok(!v || v.containers.every((c) => c.state !== 'CONTAINER_RUNNING'), `${u}: no running container when kubectl delete returned: ${JSON.stringify(v)}`);
  }
  assert.equal((await core.listNamespacedPod({ namespace: NS })).items.length, 0, 'the objects are gone');
  for (const u of uids) {
    const h = r.history.get(u) ?? [];
    assert.ok(h.some((s) => s.phase === 'Succeeded' || s.phase === 'Failed'), `terminal status written before the DELETE: ${h.map((s) => s.phase).join(',')}`);
  }
  await pollUntil(async () => {
    const v = await runtimeView(ctrd!.endpoint);
    return uids.every((u) => !v.has(u)) ? true : undefined;
  }, { what: 'the deleted pods removed from containerd', timeoutMs: 60_000, intervalMs: 250 });
  assert.deepEqual(r.violations, []);
});
