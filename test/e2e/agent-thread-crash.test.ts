/**
 * A pod-worker thread terminated on purpose is replaced, its shard's pods are re-sent to the
 * replacement, and they keep converging: pods added afterwards on that shard start, pods
 * removed afterwards are torn down, and no running pod is restarted or duplicated.
 * The agent runs in-process here (to reach its dispatcher); the runtime is a separate process.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePromText, sampleSum } from '../../bench/prom-text.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent } from '../../src/agent/agent.js';
import { AGENT_DEFAULTS } from '../../src/agent/agent-config.js';
import { realClock, realRandom } from '../../src/clock/clock.js';
import { PoolDispatcher } from '../../src/dispatch/pool-dispatcher.js';
import { shardOf } from '../../src/dispatch/shard-table.js';
import { silentLogger } from '../../src/logging/logger.js';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { freePort, pollUntil, runtimeView, writePodManifest } from './agent-harness.js';

let sim: SimRuntimeInstance | undefined;
let agent: Agent | undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-crash-'));

after(async () => {
  await agent?.stop();
  await sim?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a terminated worker thread is replaced and its pods keep converging', async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
  for (let i = 0; i < 60; i++) writePodManifest(dir, `p-${i}`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-crash-root-'));
  agent = new Agent({
    config: { ...AGENT_DEFAULTS, containerRuntimeEndpoint: sim.endpoint, podManifestPath: dir, nodeName: 'n', workers: 2, port: 0, readOnlyPort: await freePort(), rootDir: root, podLogsDir: path.join(root, 'pods'), fileCheckFrequencyMs: 1_000 },
    clock: realClock,
    random: realRandom,
    logger: silentLogger,
  });
  await agent.start();
  const d = agent.dispatcher;
  assert.ok(d instanceof PoolDispatcher);
  const allRunning = async (n: number): Promise<Map<string, { sandboxes: { id: string }[]; containers: { id: string; state: string }[] }> | undefined> => {
    const v = await runtimeView(sim!.endpoint);
    const running = [...v.values()].filter((p) => p.containers.some((c) => c.state === 'CONTAINER_RUNNING'));
    return v.size === n && running.length === n ? v : undefined;
  };
  const before = await pollUntil(() => allRunning(60), { what: '60 pods running', timeoutMs: 60_000 });
  const threadsBefore = d.threadIds();

  await d.terminateThread(0);
  await pollUntil(() => (d.threadIds()[0] !== undefined && d.threadIds()[0] !== threadsBefore[0] ? true : undefined), { what: 'a replacement thread on shard 0', timeoutMs: 30_000 });

  // New pods and a removal after the crash, on both shards.
  for (let i = 60; i < 80; i++) writePodManifest(dir, `p-${i}`);
  fs.rmSync(path.join(dir, 'p-0.yaml'));
  fs.rmSync(path.join(dir, 'p-1.yaml'));
  const after = await pollUntil(() => allRunning(78), { what: '78 pods running after the crash', timeoutMs: 60_000 });
  const shards = new Set([...after.keys()].map((uid) => shardOf(uid, 2)));
  assert.deepEqual([...shards].sort(), [0, 1], 'pods on both shards');
  for (const [uid, v] of before) {
    const a = after.get(uid);
    if (!a) continue; // p-0 / p-1, removed
    assert.deepEqual(a.sandboxes.map((s) => s.id), v.sandboxes.map((s) => s.id), `pod ${uid}: sandbox changed`);
    assert.deepEqual(a.containers.map((c) => c.id), v.containers.map((c) => c.id), `pod ${uid}: container restarted`);
  }
  assert.equal([...before.keys()].filter((uid) => !after.has(uid)).length, 2, 'exactly the two removed pods are gone');
  // A removed pod's worker forgets it just after its objects are gone from the runtime.
  const stats = await pollUntil(async () => {
    const st = await d.stats();
    return st.reduce((n, s) => n + s.podsOwned, 0) === 78 ? st : undefined;
  }, { what: 'every pod owned by exactly one live thread (78)', timeoutMs: 30_000 });
  assert.equal(stats.length, 2);
  const metrics = await (await fetch(`http://127.0.0.1:${agent.address!.port}/metrics`)).text();
  assert.match(metrics, /shardlet_thread_restarts_total(\{[^}]*\})? 1\b/);
  // The replacement repeated nothing the dead thread had done (the thread died right after the
  // burst, when its last fresh statuses may not have been published): no CreateContainer or
  // RunPodSandbox rejected for a name already taken, and at most one start per pod ever created
  // (60 + 20). "At most": calls in flight when the thread was killed may have taken effect in
  // the runtime without being counted, as a kubelet counts a call when it returns.
  // /metrics reuses a collection for up to 1 s: read until two collections agree.
  let last = '';
  let lastText = '';
  const m = await pollUntil(async () => {
    lastText = await (await fetch(`http://127.0.0.1:${agent!.address!.port}/metrics`)).text();
    const parsed = parsePromText(lastText);
    const key = ['kubelet_started_containers_total', 'kubelet_runtime_operations_total', 'kubelet_runtime_operations_errors_total'].map((n) => sampleSum(parsed, n)).join();
    const settled = key === last;
    last = key;
    return settled ? parsed : undefined;
  }, { what: 'the start counters to settle', timeoutMs: 30_000, intervalMs: 1_100 });
  const series = lastText.split('\n').filter((l) => /^(kubelet_runtime_operations_(errors_)?total|kubelet_started_)/.test(l)).join(' ; ');
  assert.equal(sampleSum(m, 'kubelet_runtime_operations_errors_total', { operation_type: 'create_container' }) ?? 0, 0, series);
  assert.equal(sampleSum(m, 'kubelet_runtime_operations_errors_total', { operation_type: 'run_podsandbox' }) ?? 0, 0, series);
  assert.ok((sampleSum(m, 'kubelet_started_containers_total', { container_type: 'container' }) ?? 0) <= 80, series);
  assert.ok((sampleSum(m, 'kubelet_runtime_operations_total', { operation_type: 'run_podsandbox' }) ?? 0) <= 80, series);
});
