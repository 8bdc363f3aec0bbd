/**
 * The core scenario on the simulated runtime, with the agent and the runtime as separate
 * processes (as in production): 500 manifests → all running; edit one → only it restarts;
 * remove one → its pod is killed and removed; SIGKILL the agent and restart it → every pod is
 * adopted with no duplicate sandbox and no restart; invalid manifests are rejected with an
 * error naming the file and field while the others keep running.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { isRunning, pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

const N = 500;
let sim: SimRuntimeInstance;
let dir: string;
let agent: AgentProcess | undefined;

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-manifests-'));
  for (let i = 0; i < N; i++) writePodManifest(dir, `web-${i}`);
});

after(async () => {
  await agent?.kill();
  await sim?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function waitAllRunning(a: AgentProcess, count: number, what: string): Promise<void> {
  await pollUntil(async () => {
    const pods = await a.pods();
    return pods.length === count && pods.every(isRunning) ? true : undefined;
  }, { what, timeoutMs: 120_000, intervalMs: 250 });
}

test('500 pods from manifests all reach running, one sandbox each', async () => {
  agent = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, workers: 2 });
  await waitAllRunning(agent, N, `${N} pods running`);
  const view = await runtimeView(sim.endpoint);
  assert.equal(view.size, N);
  for (const [uid, v] of view) {
    assert.equal(v.sandboxes.length, 1, `pod ${uid} has ${v.sandboxes.length} sandboxes`);
    assert.equal(v.containers.length, 1);
    assert.equal(v.containers[0]!.state, 'CONTAINER_RUNNING');
  }
});

test('editing one manifest restarts that pod only; removing one kills it', async () => {
  const a = agent!;
  const before = await runtimeView(sim.endpoint);
  const podsBefore = await a.pods();
  const edited = podsBefore.find((p) => p.metadata?.name === 'web-7-node-e2e')!;
  writePodManifest(dir, 'web-7', { command: ['sleep', '200000'] });
  fs.rmSync(path.join(dir, 'web-8.yaml'));
  const removed = podsBefore.find((p) => p.metadata?.name === 'web-8-node-e2e')!;
  await pollUntil(async () => {
    const pods = await a.pods();
    const w7 = pods.find((p) => p.metadata?.name === 'web-7-node-e2e');
    return pods.length === N - 1 && w7 && w7.metadata?.uid !== edited.metadata?.uid && isRunning(w7) ? true : undefined;
  }, { what: 'the edited pod running under its new UID and the removed pod gone', timeoutMs: 60_000 });
  await pollUntil(async () => {
    const v = await runtimeView(sim.endpoint);
    return !v.has(edited.metadata!.uid!) && !v.has(removed.metadata!.uid!) ? v : undefined;
  }, { what: 'old and removed pods gone from the runtime', timeoutMs: 60_000 });
  const after = await runtimeView(sim.endpoint);
  let unchanged = 0;
  for (const [uid, v] of before) {
    if (uid === edited.metadata!.uid || uid === removed.metadata!.uid) continue;
    assert.deepEqual(after.get(uid)?.containers.map((c) => c.id), v.containers.map((c) => c.id), `pod ${uid} was disturbed`);
    unchanged++;
  }
  assert.equal(unchanged, N - 2);
});

test('SIGTERM stops the agent cleanly (exit 0, before the 5 s forced exit) and leaves every pod running', async () => {
  const before = await runtimeView(sim.endpoint);
  const code = await agent!.stop();
  assert.equal(code, 0, 'graceful stop; the CLI exits 1 when shutdown takes longer than 5 s');
  const after = await runtimeView(sim.endpoint);
  assert.equal(after.size, before.size);
  for (const [uid, v] of before) assert.deepEqual(after.get(uid)?.containers.map((c) => [c.id, c.state]), v.containers.map((c) => [c.id, c.state]), `pod ${uid} changed on shutdown`);
  agent = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, workers: 2 });
  await waitAllRunning(agent, N - 1, 'all pods running after a graceful restart');
});

test('SIGKILL of the agent and a restart adopt every pod: no duplicate sandbox, no restart', async () => {
  await agent!.kill();
  const before = await runtimeView(sim.endpoint);
  agent = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, workers: 2 });
  await waitAllRunning(agent, N - 1, 'all pods running after restart');
  // Give the restarted agent a few relists to do anything wrong.
  await pollUntil(async () => ((await agent!.get('/metrics')).body.includes('kubelet_pleg_relist_duration_seconds_count') ? true : undefined), { what: 'a relist', timeoutMs: 10_000 });
  const after = await runtimeView(sim.endpoint);
  assert.equal(after.size, before.size);
  for (const [uid, v] of before) {
    assert.deepEqual(after.get(uid)?.sandboxes.map((s) => s.id), v.sandboxes.map((s) => s.id), `pod ${uid}: sandboxes changed`);
    assert.deepEqual(after.get(uid)?.containers.map((c) => c.id), v.containers.map((c) => c.id), `pod ${uid}: containers restarted`);
  }
});

test('invalid manifests are rejected with errors naming file and field; the others keep running', async () => {
  const a = agent!;
  fs.writeFileSync(path.join(dir, 'bad-yaml.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: [oops\n');
  fs.writeFileSync(path.join(dir, 'no-name.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {}\nspec:\n  containers:\n  - name: c\n    image: busybox\n');
  fs.writeFileSync(path.join(dir, 'bad-container.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: badc\nspec:\n  containers:\n  - name: c\n');
  fs.writeFileSync(path.join(dir, 'dup.yaml'), fs.readFileSync(path.join(dir, 'web-9.yaml'), 'utf8').replace('sleep', 'sleep'));
  await pollUntil(() => {
    const text = a.logs.join('\n');
    return text.includes('bad-yaml.yaml') && text.includes('no-name.yaml') && text.includes('metadata.name') && text.includes('bad-container.yaml') && text.includes('image') && text.includes('dup.yaml')
      ? true
      : undefined;
  }, { what: 'an error for each invalid manifest', timeoutMs: 30_000 });
  const pods = await a.pods();
  assert.equal(pods.length, N - 1, 'no invalid manifest became a pod, none of the others was lost');
  assert.ok(pods.every(isRunning));
});
