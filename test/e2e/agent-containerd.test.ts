/**
 * The core scenario on real containerd (private instance from the harness; needs root — as
 * non-root the before hook fails loudly, nothing is skipped): manifests → running (host- and
 * pod-network pods, the latter with an IP in /pods) → edit one → only it restarts → remove one
 * → it is torn down and removed → SIGKILL the agent and restart it → every pod adopted, no
 * duplicate sandbox and no container restart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { isRunning, pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

let ctrd: ContainerdInstance | undefined;
let agent: AgentProcess | undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-ctrd-manifests-'));
const PODS = ['a', 'b', 'c', 'd'];

before(async () => {
  ctrd = await startContainerd();
}, { timeout: 120_000 });

after(async () => {
  await agent?.kill();
  await ctrd?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}, { timeout: 120_000 });

function writeNetPod(name: string): void {
  fs.writeFileSync(
    path.join(dir, `${name}.yaml`),
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  terminationGracePeriodSeconds: 2\n  containers:\n  - name: main\n    image: docker.io/local/busybox:1\n    imagePullPolicy: Never\n    command: ["sleep", "100000"]\n`,
  );
}

test('manifests → running → edit → delete → agent restart adoption, on containerd', { timeout: 240_000 }, async () => {
  assert.ok(ctrd);
  const endpoint = ctrd.endpoint;
  for (const p of PODS) writePodManifest(dir, p);
  writeNetPod('net');
  agent = await startAgent({ endpoint, manifestDir: dir, workers: 2 });
  const all = PODS.length + 1;
  const pods = await pollUntil(async () => {
    const ps = await agent!.pods();
    return ps.length === all && ps.every(isRunning) ? ps : undefined;
  }, { what: `${all} pods running on containerd`, timeoutMs: 120_000, intervalMs: 250 });
  const net = pods.find((p) => p.metadata?.name === 'net-node-e2e')!;
  assert.match(net.status?.podIP ?? '', new RegExp(`^${ctrd.network.subnet.replace(/\.0\/24$/, '').replace(/\./g, '\\.')}\\.`), 'pod-network pod has an IP from the CNI bridge');
  assert.ok((net.status?.containerStatuses?.[0]?.containerID ?? '').startsWith('containerd://'));
  const before = await runtimeView(endpoint);
  assert.equal(before.size, all);

  // Edit one (new UID: old pod torn down, new one started), remove another.
  const a = pods.find((p) => p.metadata?.name === 'a-node-e2e')!;
  const b = pods.find((p) => p.metadata?.name === 'b-node-e2e')!;
  writePodManifest(dir, 'a', { command: ['sleep', '200000'] });
  fs.rmSync(path.join(dir, 'b.yaml'));
  await pollUntil(async () => {
    const v = await runtimeView(endpoint);
    const ps = await agent!.pods();
    const a2 = ps.find((p) => p.metadata?.name === 'a-node-e2e');
    return !v.has(a.metadata!.uid!) && !v.has(b.metadata!.uid!) && ps.length === all - 1 && a2 && a2.metadata?.uid !== a.metadata?.uid && isRunning(a2) ? true : undefined;
  }, { what: 'edited pod restarted under a new UID, removed pod gone from the runtime', timeoutMs: 90_000, intervalMs: 250 });
  const afterEdit = await runtimeView(endpoint);
  for (const [uid, v] of before) {
    if (uid === a.metadata!.uid || uid === b.metadata!.uid) continue;
    assert.deepEqual(afterEdit.get(uid)?.containers.map((c) => c.id), v.containers.map((c) => c.id), `pod ${uid} was disturbed by the edit`);
  }

  // Crash the agent; a new one adopts everything.
  await agent.kill();
  agent = await startAgent({ endpoint, manifestDir: dir, workers: 2 });
  await pollUntil(async () => {
    const ps = await agent!.pods();
    return ps.length === all - 1 && ps.every(isRunning) ? true : undefined;
  }, { what: 'all pods running after the agent restart', timeoutMs: 60_000, intervalMs: 250 });
  // A few relists' worth of time for a wrong decision to show up: wait for 3 relists.
  const relists = async (): Promise<number> => Number(/kubelet_pleg_relist_duration_seconds_count (\d+)/.exec((await agent!.get('/metrics')).body)?.[1] ?? 0);
  const r0 = await relists();
  await pollUntil(async () => ((await relists()) >= r0 + 3 ? true : undefined), { what: '3 relists', timeoutMs: 30_000 });
  const afterRestart = await runtimeView(endpoint);
  assert.equal(afterRestart.size, afterEdit.size);
  for (const [uid, v] of afterEdit) {
    assert.deepEqual(afterRestart.get(uid)?.sandboxes.map((s) => s.id), v.sandboxes.map((s) => s.id), `pod ${uid}: sandbox changed`);
    assert.deepEqual(afterRestart.get(uid)?.containers.map((c) => c.id), v.containers.map((c) => c.id), `pod ${uid}: container restarted`);
  }
});
