/**
 * Pods of 14, 50 and 200 containers on the simulated runtime (a separate process, as in
 * production), issue 30: they start; their crashing containers are restarted again and again
 * (the pod is synced after its status outgrew one cache slot); removing a manifest kills the
 * pod completely within the grace period plus two relists (many-containers-scenario.ts); a pod
 * removed while the agent was down is killed by the restarted agent; the pod cache reports
 * nothing unstored. With a per-entry limit too small for a 50-container status the status is
 * unstored: /healthz/podcache fails and shardlet_pod_cache_unstored_pods counts it, and a kill
 * still stops the pod completely (from the runtime's own listing).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { pollUntil, runtimeView, startAgent, type AgentProcess } from './agent-harness.js';
import {
  KILL_BOUND_MS, assertRuntimeHolds, podCacheHealth, removeWidePod, waitKilled, waitStartedAndRestarting, writeWidePod,
} from './many-containers-scenario.js';

const IMAGE = 'docker.io/local/busybox:1';
const SIZES = [14, 50, 200];
const CRASHERS = 2;
const NODE = 'node-e2e';
let sim: SimRuntimeInstance;
const dirs: string[] = [];
const agents: AgentProcess[] = [];

function manifestDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-wide-'));
  dirs.push(d);
  return d;
}

async function agentOn(dir: string, extraArgs: string[] = [], rootDir?: string): Promise<AgentProcess> {
  const a = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, workers: 2, extraArgs, ...(rootDir !== undefined ? { rootDir } : {}) });
  agents.push(a);
  return a;
}

/** The agent's lines about starting, orphans, kills and errors (for a failure message). */
function logExcerpt(a: AgentProcess): string {
  return a.logs.filter((l) => /orphan|Killing|kill|terminat|"level":"error"|serving|relist/i.test(l)).slice(0, 60).map((l) => l.slice(0, 300)).join('\n');
}

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', IMAGE] });
});

after(async () => {
  for (const a of agents) await a.kill();
  await sim?.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

test('14, 50 and 200 containers: start, crashed containers restart repeatedly, a removed pod is killed completely in bound, also across an agent restart', { timeout: 300_000 }, async (t) => {
  const dir = manifestDir();
  for (const n of SIZES) writeWidePod(dir, n, CRASHERS, IMAGE);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-wide-root-'));
  dirs.push(root);
  let agent = await agentOn(dir, [], root);
  const pods = await waitStartedAndRestarting(agent, SIZES, CRASHERS, 2, NODE, 180_000);
  await assertRuntimeHolds(sim.endpoint, pods, CRASHERS);
  const health = await podCacheHealth(agent);
  assert.deepEqual({ status: health.status, unstored: health.unstored, oversize: health.oversizeTotal }, { status: 200, unstored: 0, oversize: 0 }, health.body);

  // Remove the 14 and 50 container pods: each is killed completely within its bound.
  const t0 = Date.now();
  removeWidePod(dir, 14);
  removeWidePod(dir, 50);
  for (const n of [14, 50]) {
    const took = await waitKilled(sim.endpoint, pods.get(n)!.metadata!.uid!, t0, `the ${n}-container pod killed`);
    t.diagnostic(`${n} containers: killed ${took} ms after the manifest went (bound ${KILL_BOUND_MS} ms)`);
    assert.ok(took <= KILL_BOUND_MS, `the ${n}-container pod took ${took} ms to be killed (bound ${KILL_BOUND_MS} ms); agent log:\n${logExcerpt(agent)}`);
  }
  await pollUntil(async () => ((await agent.pods()).length === 1 ? true : undefined), { what: 'the removed pods gone from /pods', timeoutMs: 30_000 });

  // The agent dies; the 200-container pod's manifest goes while it is down; the restarted agent kills it.
  await agent.kill();
  removeWidePod(dir, 200);
  const t1 = Date.now();
  agent = await agentOn(dir, [], root);
  const took = await waitKilled(sim.endpoint, pods.get(200)!.metadata!.uid!, t1, 'the 200-container pod killed by the restarted agent');
  t.diagnostic(`200 containers: killed ${took} ms after the agent restart began`);
  // The restarted agent first starts (process, threads, first relist): counted in the bound's slack.
  assert.ok(took <= KILL_BOUND_MS + 10_000, `the 200-container pod took ${took} ms to be killed after the restart; agent log:\n${logExcerpt(agent)}`);
  const after = await podCacheHealth(agent);
  assert.deepEqual({ status: after.status, unstored: after.unstored }, { status: 200, unstored: 0 }, after.body);
});

test('a status over --pod-cache-max-entry-bytes is visible in /healthz/podcache and the metric, and its pod is still killed completely', { timeout: 180_000 }, async () => {
  const dir = manifestDir();
  writeWidePod(dir, 50, 0, IMAGE);
  const agent = await agentOn(dir, ['--pod-cache-max-entry-bytes', '8192']);
  // The first sync (no entry yet) starts every container; the status then exceeds 8 KiB.
  const health = await pollUntil(async () => {
    const h = await podCacheHealth(agent);
    return h.status !== 200 && h.unstored === 1 ? h : undefined;
  }, { what: '/healthz/podcache failing with one unstored pod', timeoutMs: 90_000, intervalMs: 500 });
  assert.match(health.body, /1 pods have a status too large to store/);
  assert.ok((health.oversizeTotal ?? 0) >= 1);
  const uid = await pollUntil(async () => (await agent.pods()).find((p) => p.metadata?.name === 'wide-50-node-e2e')?.metadata?.uid, { what: 'the pod in /pods', timeoutMs: 30_000 });
  await pollUntil(async () => {
    const v = (await runtimeView(sim.endpoint)).get(uid);
    return v && v.containers.filter((c) => c.state === 'CONTAINER_RUNNING').length === 50 ? true : undefined;
  }, { what: 'its 50 containers running', timeoutMs: 90_000, intervalMs: 500 });

  const t0 = Date.now();
  removeWidePod(dir, 50);
  const took = await waitKilled(sim.endpoint, uid, t0, 'the unstored pod killed');
  assert.ok(took <= KILL_BOUND_MS, `the unstored pod took ${took} ms to be killed (bound ${KILL_BOUND_MS} ms)`);
  // Gone from the runtime and the cache: health recovers.
  const recovered = await pollUntil(async () => {
    const h = await podCacheHealth(agent);
    return h.status === 200 && h.unstored === 0 ? h : undefined;
  }, { what: '/healthz/podcache ok again', timeoutMs: 30_000, intervalMs: 500 });
  assert.equal(recovered.body.trim(), 'ok');
});
