/**
 * Cluster mode across restarts, against a real kube-apiserver on the simulated runtime (one
 * control plane, one sim-runtime, one agent root dir for the file), scenarios in order:
 *  1. the API server SIGKILLed mid-burst (150 pods created, some Running) and restarted → every
 *     pod converges to Running in the API, none restarted, one sandbox each;
 *  2. the agent SIGKILLed; while it is down one pod is deleted (graceful, kubectl --wait=false) and
 *     one pod already Succeeded in the API is created; a new agent on the same root dir adopts
 *     every running pod (same sandboxes and containers, no restart), the test's watch never sees
 *     a status go backwards (no Running → Pending, no terminal → anything), the deleted pod is
 *     cleaned up (containers stopped, object gone) and the Succeeded pod is never run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { pollUntil, runtimeView } from './agent-harness.js';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';

const NS = 'restart';
const NODE = 'node-restart';
const N = 150;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-cluster-root-'));
const f = clusterSimFixture({ namespace: NS, teardown: () => fs.rmSync(root, { recursive: true, force: true }) });

type RuntimeView = Awaited<ReturnType<typeof runtimeView>>;

function restartsIn(view: RuntimeView, uids: Iterable<string>): string[] {
  const bad: string[] = [];
  for (const uid of uids) {
    const v = view.get(uid);
    if (!v || v.sandboxes.length !== 1 || v.containers.length !== 1 || v.containers.some((c) => c.attempt !== 0)) bad.push(`${uid}: ${JSON.stringify(v)}`);
  }
  return bad;
}

test('cluster mode on the sim: apiserver killed mid-burst; agent SIGKILLed and restarted (adoption, deletion while down, terminal pod)', { timeout: 600_000 }, async (t) => {
  const { cp, sim } = f;
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  let agent = (f.agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: sim.endpoint, rootDir: root }));
  const allRunning = (uids: readonly string[]): true | undefined => (uids.every((u) => { const p = r.pods.get(u); return p !== undefined && isApiRunning(p); }) ? true : undefined);

  // 1. Kill the API server while the agent is starting pods.
  const created = await createPods(core, Array.from({ length: N }, (_, i) => apiPod(`r-${String(i).padStart(3, '0')}`, NS, NODE)));
  const uids = created.map((p) => p.metadata!.uid!);
  await r.waitFor(() => (r.running().length >= 20 ? true : undefined), 'the burst under way (20 Running)', 120_000);
  const runningAtKill = r.running().length;
  await cp.killApiserver();
  // The agent notices (its watch or a status write fails) before the server comes back.
  const failuresBefore = agent.logs.filter((l) => /watch failed|status write failed|list failed/.test(l)).length;
  await pollUntil(() => (agent.logs.filter((l) => /watch failed|status write failed|list failed/.test(l)).length > failuresBefore ? true : undefined), { what: 'the agent to see the API server gone', timeoutMs: 60_000, intervalMs: 100 });
  await cp.restartApiserver();
  await r.waitFor(() => allRunning(uids), `all ${N} pods Running in the API after the API server restart`, 180_000);
  t.diagnostic(`apiserver killed with ${runningAtKill}/${N} Running in the API; all converged`);
  assert.deepEqual(restartsIn(await runtimeView(sim.endpoint), uids), [], 'no restart, no duplicate sandbox');
  assert.deepEqual(r.violations, []);

  // 2. Agent SIGKILL; changes while it is down; restart on the same root dir.
  const before = await runtimeView(sim.endpoint);
  await agent.kill();
  const gone = created[0]!;
  const del = await cp.kubectl(['delete', 'pod', '-n', NS, gone.metadata!.name!, '--wait=false']);
  assert.equal(del.code, 0, del.stderr);
  const [done] = await createPods(core, [apiPod('finished', NS, NODE, { restartPolicy: 'Never' })]);
  const doneUid = done!.metadata!.uid!;
  await core.patchNamespacedPodStatus(
    { name: 'finished', namespace: NS, body: { metadata: { uid: doneUid }, status: { phase: 'Succeeded', reason: 'Completed' } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
  const kept = uids.slice(1);

  agent = f.agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: sim.endpoint, rootDir: root });
  // The deleted pod: terminated by the new agent, then DELETEd by it (the object disappears).
  await pollUntil(async () => {
    try {
      await core.readNamespacedPod({ name: gone.metadata!.name!, namespace: NS });
      return undefined;
    } catch {
      return true;
    }
  }, { what: 'the pod deleted while the agent was down to be finished by the restarted agent', timeoutMs: 90_000, intervalMs: 250 });
  const goneView = (await runtimeView(sim.endpoint)).get(gone.metadata!.uid!);
  assert.ok(!goneView || goneView.containers.every((c) => c.state !== 'CONTAINER_RUNNING'), `deleted pod's containers stopped: ${JSON.stringify(goneView)}`);
  // A few relists for a wrong decision to show: wait until the agent reported PLEG relists past its start.
  const relists = async (): Promise<number> => Number(/kubelet_pleg_relist_duration_seconds_count (\d+)/.exec((await agent.get('/metrics')).body)?.[1] ?? 0);
  const r0 = await relists();
  await pollUntil(async () => ((await relists()) >= r0 + 3 ? true : undefined), { what: '3 PLEG relists after adoption', timeoutMs: 30_000, intervalMs: 200 });
  await r.waitFor(() => allRunning(kept), 'every adopted pod Running in the API', 60_000);
  const afterView = await runtimeView(sim.endpoint);
  for (const u of kept) {
    assert.deepEqual(afterView.get(u)?.sandboxes.map((s) => s.id), before.get(u)?.sandboxes.map((s) => s.id), `${u}: same sandbox`);
    assert.deepEqual(afterView.get(u)?.containers.map((c) => [c.id, c.attempt]), before.get(u)?.containers.map((c) => [c.id, c.attempt]), `${u}: same container, not restarted`);
    assert.equal(r.pods.get(u)?.status?.containerStatuses?.[0]?.restartCount, 0);
  }
  assert.equal(afterView.has(doneUid), false, 'the pod already Succeeded in the API was never run');
  const doneNow = await core.readNamespacedPod({ name: 'finished', namespace: NS });
  assert.equal(doneNow.status?.phase, 'Succeeded', 'its terminal phase was not overwritten');
  assert.deepEqual(r.violations, [], 'no status went backwards across the agent restart');
  const patches = /shardlet_pod_status_patches_total\{result="sent"\} (\d+)/.exec((await agent.get('/metrics')).body)?.[1] ?? '0';
  t.diagnostic(`status PATCHes by the restarted agent: ${patches}`);
});
