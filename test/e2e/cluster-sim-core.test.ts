/**
 * Cluster mode against a real kube-apiserver (Node,RBAC + NodeRestriction; the agent uses the node
 * identity system:node:<name>) on the simulated runtime, one control plane and one agent for the
 * whole file, scenarios in order:
 *  1. 300 pods created with the client library reach Running IN THE API (seen by the test's own
 *     watch), one sandbox each, no restart, and the API server counts ≤ 2 requests per pod start
 *     on pods + pods/status (GET, PATCH, PUT; the kubelet needs ≥ 4);
 *  2. `kubectl delete pod` of 50 returns only after their containers are gone from the runtime
 *     (checked through CRI) and the objects are gone; the other 250 untouched;
 *  3. etcd compaction, then the agent's watch broken (apiserver restart) → the watch resumes from
 *     a compacted resourceVersion → 410 → relist: no container restarted, no sandbox added, and
 *     pods created after it still arrive;
 *  4. a pod deleted (forcibly, no agent involvement) and recreated under the same name never shows
 *     the old pod's status (its container name differs, so a leaked status is recognisable), and
 *     the old pod's containers are removed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { pollUntil, runtimeView } from './agent-harness.js';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent, sumApiserverRequests } from './cluster-harness.js';

const NS = 'core';
const NODE = 'node-core';
const N = 300;
const f = clusterSimFixture({ namespace: NS });

/** Per pod UID: sandbox count and the highest container attempt in the runtime. */
async function runtimeRestarts(endpoint: string, uids: Iterable<string>): Promise<string[]> {
  const view = await runtimeView(endpoint);
  const bad: string[] = [];
  for (const uid of uids) {
    const v = view.get(uid);
    if (!v) bad.push(`${uid}: not in the runtime`);
    else if (v.sandboxes.length !== 1 || v.containers.length !== 1 || v.containers.some((c) => c.attempt !== 0)) {
      bad.push(`${uid}: ${v.sandboxes.length} sandboxes, containers ${JSON.stringify(v.containers)}`);
    }
  }
  return bad;
}

function podStartRequests(metrics: string): number {
  return (
    sumApiserverRequests(metrics, { verb: 'GET', resource: 'pods', subresource: '' }) +
    sumApiserverRequests(metrics, { verb: 'PATCH', resource: 'pods', subresource: 'status' }) +
    sumApiserverRequests(metrics, { verb: 'PUT', resource: 'pods', subresource: 'status' })
  );
}

test('cluster mode on the sim: 300 pods → Running in the API; kubectl delete of 50; 410 relist; same-name recreation', { timeout: 600_000 }, async (t) => {
  const { cp, sim } = f;
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  const agent = (f.agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: sim.endpoint }));

  // 1. 300 pods through the client library → Running in the API.
  const requestsBefore = podStartRequests(await cp.metricsText());
  const t0 = performance.now();
  const created = await createPods(core, Array.from({ length: N }, (_, i) => apiPod(`p-${String(i).padStart(3, '0')}`, NS, NODE)));
  const uids = created.map((p) => p.metadata!.uid!);
  assert.equal(new Set(uids).size, N);
  await r.waitFor(() => (uids.every((u) => { const p = r.pods.get(u); return p !== undefined && isApiRunning(p); }) ? true : undefined), `${N} pods Running in the API`, 180_000);
  const startRequests = podStartRequests(await cp.metricsText()) - requestsBefore;
  t.diagnostic(`${N} pods Running in the API ${((performance.now() - t0) / 1000).toFixed(1)} s after the first create; ${startRequests} requests on pods + pods/status (${(startRequests / N).toFixed(2)} per pod start)`);
  // Statuses the agent still had queued would land after this count; they are counted in scenario 2's window.
  assert.ok(startRequests / N <= 2, `requests per pod start on pods + pods/status: ${startRequests} for ${N} pods (${(startRequests / N).toFixed(2)})`);
  assert.deepEqual(await runtimeRestarts(sim.endpoint, uids), [], 'one sandbox and one container (attempt 0) per pod');
  for (const u of uids) {
    const p = r.pods.get(u)!;
    assert.equal(p.status?.containerStatuses?.[0]?.restartCount, 0);
    assert.match(p.status?.startTime ? new Date(p.status.startTime).toISOString() : '', /\.000Z$/, 'timestamps at second precision');
  }
  assert.deepEqual(r.violations, [], 'no status went backwards');

  // 2. kubectl delete of 50: returns after their containers are gone, and the objects are gone.
  const victims = created.slice(0, 50);
  const tDel = performance.now();
  const del = await cp.kubectl(['delete', 'pod', '-n', NS, '--timeout=120s', ...victims.map((p) => p.metadata!.name!)], { timeoutMs: 180_000 });
  assert.equal(del.code, 0, `kubectl delete: ${del.stderr}`);
  t.diagnostic(`kubectl delete of 50 pods returned after ${((performance.now() - tDel) / 1000).toFixed(1)} s`);
  const afterDelete = await runtimeView(sim.endpoint);
  for (const p of victims) {
    const v = afterDelete.get(p.metadata!.uid!);
    assert.ok(!v || v.containers.every((c) => c.state !== 'CONTAINER_RUNNING'), `${p.metadata!.name}: no running container once kubectl delete returned (${JSON.stringify(v?.containers)})`);
  }
  const left = await core.listNamespacedPod({ namespace: NS });
  const leftNames = new Set(left.items.map((p) => p.metadata?.name));
  for (const p of victims) assert.ok(!leftNames.has(p.metadata!.name!), `${p.metadata!.name} still in the API`);
  assert.equal(left.items.length, N - 50);
  for (const p of victims) {
    const h = r.history.get(p.metadata!.uid!) ?? [];
    assert.ok(h.some((s) => s.phase === 'Succeeded' || s.phase === 'Failed'), `${p.metadata!.name}: a terminal status was written before the DELETE (${h.map((s) => s.phase).join(',')})`);
  }
  const survivors = created.slice(50).map((p) => p.metadata!.uid!);
  assert.deepEqual(await runtimeRestarts(sim.endpoint, survivors), [], 'the other pods undisturbed');
  // The victims' runtime objects are removed once the API no longer lists them.
  await pollUntil(async () => {
    const v = await runtimeView(sim.endpoint);
    return victims.every((p) => !v.has(p.metadata!.uid!)) ? true : undefined;
  }, { what: 'deleted pods removed from the runtime', timeoutMs: 60_000, intervalMs: 250 });

  // 3. Compaction + a broken watch → 410 → relist, nothing restarted.
  const relistLog = (): number => agent.logs.filter((l) => l.includes('resourceVersion expired (410), relisting')).length;
  const listed = (): number => agent.logs.filter((l) => l.includes('api pod source: listed')).length;
  const relistsBefore = relistLog();
  const listsBefore = listed();
  await cp.compact();
  await cp.restartApiserver();
  await pollUntil(() => (relistLog() > relistsBefore && listed() > listsBefore ? true : undefined), { what: 'the agent to get 410 and relist', timeoutMs: 90_000, intervalMs: 200 });
  const late = await createPods(core, [apiPod('late-0', NS, NODE), apiPod('late-1', NS, NODE)]);
  await r.waitFor(() => (late.every((p) => { const x = r.pods.get(p.metadata!.uid!); return x !== undefined && isApiRunning(x); }) ? true : undefined), 'pods created after the relist Running', 60_000);
  assert.deepEqual(await runtimeRestarts(sim.endpoint, survivors), [], 'no container restarted and no sandbox added by the relist');
  for (const u of survivors) assert.equal(r.pods.get(u)?.status?.containerStatuses?.[0]?.restartCount, 0);

  // 4. Same name, new UID: the new pod never shows the old one's status.
  const [old] = await createPods(core, [apiPod('same', NS, NODE, { containerName: 'old' })]);
  const oldUid = old!.metadata!.uid!;
  await r.waitFor(() => { const p = r.pods.get(oldUid); return p && isApiRunning(p) ? true : undefined; }, 'the old "same" Running', 60_000);
  await core.deleteNamespacedPod({ name: 'same', namespace: NS, gracePeriodSeconds: 0 });
  const [fresh] = await createPods(core, [apiPod('same', NS, NODE, { containerName: 'new' })]);
  const newUid = fresh!.metadata!.uid!;
  assert.notEqual(newUid, oldUid);
  await r.waitFor(() => { const p = r.pods.get(newUid); return p && isApiRunning(p) ? true : undefined; }, 'the new "same" Running', 60_000);
  await pollUntil(async () => ((await runtimeView(sim.endpoint)).has(oldUid) ? undefined : true), { what: 'the old "same" removed from the runtime', timeoutMs: 60_000, intervalMs: 250 });
  const newHistory = r.history.get(newUid) ?? [];
  for (const s of newHistory) assert.ok(!s.containerNames.includes('old'), `the new pod showed the old pod's status: ${JSON.stringify(newHistory)}`);
  const now: V1Pod = await core.readNamespacedPod({ name: 'same', namespace: NS });
  assert.equal(now.metadata?.uid, newUid);
  assert.deepEqual(now.status?.containerStatuses?.map((c) => c.name), ['new']);
  assert.deepEqual(r.violations, [], 'no status went backwards');
});
