/**
 * A pod-worker thread terminated on purpose is replaced, its shard's pods are re-sent to the
 * replacement, and they keep converging: pods added afterwards on that shard start, pods
 * removed afterwards are torn down, and no running pod is restarted or duplicated.
 * The agent runs in-process here (to reach its dispatcher); the runtime is a separate process.
 *
 * Second case: the thread dies in the middle of a burst (its pods being created and their fresh
 * statuses written to the shared cache), on the containerd-latency sim profile so the burst lasts
 * several seconds. Measured from the agent's own signals (its dispatcher's thread ids and per-
 * thread stats) and the runtime's record of what the agent did (container creation times): the
 * shard is replaced and owns its pods again within 2 s, the other shard keeps creating pods while
 * it restarts, and nothing is duplicated or restarted.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePromText, sampleSum } from '../../bench/prom-text.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent } from '../../src/main/agent/agent.js';
import { AGENT_DEFAULTS } from '../../src/main/agent/agent-config.js';
import { realClock, realRandom } from '../../src/shared/clock/clock.js';
import { PoolDispatcher } from '../../src/main/dispatch/pool-dispatcher.js';
import { shardOf } from '../../src/main/dispatch/shard-table.js';
import { createLogger, silentLogger } from '../../src/shared/logging/logger.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { freePort, pollUntil, runtimeView, writePodManifest } from './agent-harness.js';

let sim: SimRuntimeInstance | undefined;
let agent: Agent | undefined;
let sim2: SimRuntimeInstance | undefined;
let agent2: Agent | undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-crash-'));

after(async () => {
  await agent?.stop();
  await sim?.stop();
  await agent2?.stop();
  await sim2?.stop();
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

test('a worker thread killed mid-burst: replaced and owning its shard within 2 s; the other shard keeps starting pods; nothing duplicated', async (t) => {
  sim2 = await startSimRuntime({ profile: 'containerd', extraArgs: ['--image', 'docker.io/local/busybox:1'] });
  const mdir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-crash2-'));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-crash2-root-'));
  t.after(() => {
    fs.rmSync(mdir, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  });
  const N = 240;
  for (let i = 0; i < N; i++) writePodManifest(mdir, `b-${i}`);
  agent2 = new Agent({
    config: { ...AGENT_DEFAULTS, containerRuntimeEndpoint: sim2.endpoint, podManifestPath: mdir, nodeName: 'n', workers: 2, maxPods: 1_000, port: 0, readOnlyPort: await freePort(), rootDir: root, podLogsDir: path.join(root, 'pods'), fileCheckFrequencyMs: 1_000 },
    clock: realClock,
    random: realRandom,
    logger: process.env['CRASH_LOG'] ? createLogger({ verbosity: 4, sink: (l) => fs.appendFileSync(process.env['CRASH_LOG']!, l + '\n') }) : silentLogger,
  });
  await agent2.start();
  const d = agent2.dispatcher;
  assert.ok(d instanceof PoolDispatcher);
  const running = async (): Promise<number> => [...(await runtimeView(sim2!.endpoint)).values()].filter((p) => p.containers.some((c) => c.state === 'CONTAINER_RUNNING')).length;
  // Mid-burst: a quarter of the containers created, the rest still to come.
  const atCrash = await pollUntil(async () => {
    let n = 0;
    for (const p of (await runtimeView(sim2!.endpoint)).values()) n += p.containers.length;
    return n >= N / 4 ? n : undefined;
  }, { what: `${N / 4} containers created`, timeoutMs: 90_000, intervalMs: 20 });
  const oldThread = d.threadIds()[0];
  const deadAt = Date.now();
  await d.terminateThread(0);
  const replacedMs = await pollUntil(() => {
    const id = d.threadIds()[0];
    return id !== undefined && id !== oldThread ? Date.now() - deadAt : undefined;
  }, { what: 'a replacement thread on shard 0', timeoutMs: 30_000, intervalMs: 10 });
  // Every pod of shard 0 handed to the replacement: its per-thread stats own them all.
  const ownedMs = await pollUntil(async () => {
    const id = d.threadIds()[0];
    const st = (await d.stats()).find((s) => s.threadId === id);
    const view = await runtimeView(sim2!.endpoint);
    const onShard0 = [...view.keys()].filter((uid) => uid !== '' && shardOf(uid, 2) === 0).length;
    return st !== undefined && st.podsOwned >= onShard0 && onShard0 > 0 ? Date.now() - deadAt : undefined;
  }, { what: 'the replacement to own its shard', timeoutMs: 30_000, intervalMs: 20 });
  let last = 0;
  await pollUntil(async () => ((last = await running()) === N ? true : undefined), { what: `${N} pods running`, timeoutMs: 120_000, intervalMs: 200 }).catch(async (err: unknown) => {
    const v = await runtimeView(sim2!.endpoint);
    throw new Error(`${String(err)}; ${last} running, ${v.size} pods in the runtime: ${JSON.stringify([...v].filter(([, p]) => !p.containers.some((c) => c.state === 'CONTAINER_RUNNING')).slice(0, 5))}`);
  });

  // The runtime's record: container creation times per shard around the crash.
  const cri = new CriClient({ endpoint: sim2.endpoint, timeoutMs: 30_000 });
  let created: { shard: number; atMs: number }[];
  let view: Awaited<ReturnType<typeof runtimeView>>;
  try {
    created = (await cri.listContainers()).map((c) => ({ shard: shardOf(c.labels['io.kubernetes.pod.uid'] ?? '', 2), atMs: Number(BigInt(c.createdAt) / 1_000_000n) }));
    view = await runtimeView(sim2.endpoint);
  } finally {
    cri.close();
  }
  const inWindow = (shard: number, from: number, to: number): number => created.filter((c) => c.shard === shard && c.atMs >= from && c.atMs < to).length;
  const otherBefore = inWindow(1, deadAt - 2_000, deadAt);
  const otherDuring = inWindow(1, deadAt, deadAt + 2_000);
  // Shard 0 at work again: its first container created by the replacement (calls the dead
  // thread had in flight may still land in the runtime just after its death). Reported, not
  // asserted: when the dead thread had already created all of its shard's containers there is
  // none left to create; convergence is asserted below (every pod running, nothing duplicated).
  const resumedMs = Math.min(...created.filter((c) => c.shard === 0 && c.atMs >= deadAt + replacedMs).map((c) => c.atMs)) - deadAt;
  const shard0After = inWindow(0, deadAt + replacedMs, Infinity);
  t.diagnostic(`crash at ${atCrash}/${N} containers created; replaced after ${replacedMs} ms; shard 0 owned again after ${ownedMs} ms; shard 0 created its first container again after ${resumedMs} ms (${shard0After} in all after the replacement); shard 1 created ${otherBefore} containers in the 2 s before the crash, ${otherDuring} in the 2 s after`);
  assert.ok(replacedMs < 2_000, `replaced after ${replacedMs} ms`);
  assert.ok(ownedMs < 2_000, `shard 0 owned by the replacement after ${ownedMs} ms`);
  assert.ok(otherDuring > 0, 'the other shard kept creating pods while shard 0 restarted');
  // Nothing duplicated or restarted: one sandbox and one first-attempt container per pod.
  assert.equal(view.size, N);
  for (const [uid, p] of view) {
    assert.equal(p.sandboxes.length, 1, `pod ${uid}: sandboxes`);
    assert.deepEqual(p.containers.map((c) => c.attempt), [0], `pod ${uid}: containers`);
  }
});
