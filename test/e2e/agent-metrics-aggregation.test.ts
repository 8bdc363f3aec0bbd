/**
 * Cross-thread metric aggregation in the real agent: counters incremented on 4 pod-worker
 * threads add up on /metrics to exactly the work done (one RunPodSandbox, one started pod and
 * one started container per pod), and terminating a worker thread neither loses its counts
 * (its retired slot keeps them) nor doubles them (its replacement re-syncs the shard's running
 * pods without starting anything). Pods added after the crash add exactly their own counts.
 * The agent runs in-process (to reach its dispatcher); the runtime is a separate process.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parsePromText, sampleSum } from '../../bench/prom-text.js';
import { Agent } from '../../src/main/agent/agent.js';
import { AGENT_DEFAULTS } from '../../src/main/agent/agent-config.js';
import { realClock, realRandom } from '../../src/shared/clock/clock.js';
import { PoolDispatcher } from '../../src/main/dispatch/pool-dispatcher.js';
import { shardOf } from '../../src/main/dispatch/shard-table.js';
import { silentLogger } from '../../src/shared/logging/logger.js';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { freePort, pollUntil, runtimeView, writePodManifest } from './agent-harness.js';

const THREADS = 4;
const FIRST = 200;
const LATER = 40;

let sim: SimRuntimeInstance | undefined;
let agent: Agent | undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-agg-'));
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-agg-root-'));

after(async () => {
  await agent?.stop();
  await sim?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(root, { recursive: true, force: true });
});

/** The counters under test, read from one /metrics scrape. */
interface Totals {
  runPodSandbox: number;
  startedPods: number;
  startedContainers: number;
  podsOwned: number;
  threadRestarts: number;
}

async function totals(port: number): Promise<Totals> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const m = parsePromText(text);
  assert.deepEqual(m.errors, []);
  return {
    runPodSandbox: sampleSum(m, 'kubelet_runtime_operations_total', { operation_type: 'run_podsandbox' }) ?? 0,
    startedPods: sampleSum(m, 'kubelet_started_pods_total') ?? 0,
    startedContainers: sampleSum(m, 'kubelet_started_containers_total', { container_type: 'container' }) ?? 0,
    podsOwned: sampleSum(m, 'shardlet_thread_pods_owned') ?? 0,
    threadRestarts: sampleSum(m, 'shardlet_thread_restarts_total') ?? 0,
  };
}

/** Polls /metrics until `accept` holds; a timeout names the last totals seen (the likely bug). */
async function pollTotals(port: number, accept: (t: Totals) => boolean, what: string, timeoutMs: number): Promise<Totals> {
  let last: Totals | undefined;
  try {
    return await pollUntil(async () => {
      last = await totals(port);
      return accept(last) ? last : undefined;
    }, { what, timeoutMs, intervalMs: 250 });
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last totals ${JSON.stringify(last)}`);
  }
}

async function runningCount(): Promise<number> {
  const v = await runtimeView(sim!.endpoint);
  return [...v.values()].filter((p) => p.containers.some((c) => c.state === 'CONTAINER_RUNNING')).length;
}

test('worker-thread counters sum exactly on /metrics, and survive a thread restart without loss or doubling', async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
  for (let i = 0; i < FIRST; i++) writePodManifest(dir, `agg-${i}`);
  agent = new Agent({
    config: { ...AGENT_DEFAULTS, containerRuntimeEndpoint: sim.endpoint, podManifestPath: dir, nodeName: 'n', workers: THREADS, maxPods: 1000, port: 0, readOnlyPort: await freePort(), rootDir: root, podLogsDir: path.join(root, 'pods'), fileCheckFrequencyMs: 1_000 },
    clock: realClock,
    random: realRandom,
    logger: silentLogger,
  });
  await agent.start();
  const d = agent.dispatcher;
  assert.ok(d instanceof PoolDispatcher);
  const port = agent.address!.port;

  await pollUntil(async () => ((await runningCount()) === FIRST ? true : undefined), { what: `${FIRST} pods running`, timeoutMs: 180_000, intervalMs: 250 });
  // The pods spread over every thread, so the totals below are sums over 4 threads' slots.
  const view = await runtimeView(sim.endpoint);
  assert.deepEqual(new Set([...view.keys()].map((uid) => shardOf(uid, THREADS))).size, THREADS);

  const before = await pollTotals(port, (t) => t.startedContainers === FIRST && t.podsOwned === FIRST, 'the first scrape that has seen every start', 60_000);
  assert.deepEqual(before, { runPodSandbox: FIRST, startedPods: FIRST, startedContainers: FIRST, podsOwned: FIRST, threadRestarts: 0 });
  // Per thread, too: every thread's own series is part of the sum (none double-counted).
  const stats = await d.stats();
  assert.equal(stats.length, THREADS);
  assert.equal(stats.reduce((n, s) => n + s.podsOwned, 0), FIRST);

  // Thread 0 goes away; its replacement takes shard 0's pods back and re-syncs them.
  const threadsBefore = d.threadIds();
  await d.terminateThread(0);
  await pollUntil(() => (d.threadIds()[0] !== undefined && d.threadIds()[0] !== threadsBefore[0] ? true : undefined), { what: 'a replacement thread on shard 0', timeoutMs: 30_000 });
  // The replacement owns the shard's pods again once it has re-synced them.
  const afterRestart = await pollTotals(port, (t) => t.threadRestarts === 1 && t.podsOwned === FIRST, 'the replacement thread owning shard 0 again', 60_000);
  const expected = { runPodSandbox: FIRST, startedPods: FIRST, startedContainers: FIRST, podsOwned: FIRST, threadRestarts: 1 };
  if (!isDeepStrictEqual(afterRestart, expected)) {
    // What the runtime holds and what the agent reports, to tell a counting bug from real work.
    const rv = await runtimeView(sim.endpoint);
    const sandboxesPerPod = [...rv.values()].map((v) => v.sandboxes.length);
    const pods = (await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Array<{ metadata: { name: string }; status?: { phase?: string; reason?: string; message?: string; containerStatuses?: Array<{ state?: unknown }> } }> };
    const notRunning = pods.items.filter((p) => p.status?.phase !== 'Running').map((p) => `${p.metadata.name}: ${JSON.stringify(p.status)}`);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const series = text.split('\n').filter((l) => /^(kubelet_runtime_operations_(total|errors_total)\{operation_type="run_podsandbox"|kubelet_started_pods|kubelet_started_containers_total)/.test(l));
    assert.fail(`the terminated thread's counts are kept (not lost) and the replacement started nothing (not doubled): got ${JSON.stringify(afterRestart)}; ` +
      `runtime: ${rv.size} pods, max ${Math.max(...sandboxesPerPod)} sandboxes per pod; not Running on /pods: ${notRunning.length} ${notRunning.slice(0, 3).join(' | ')}; series: ${series.join(' ; ')}`);
  }

  // New pods after the crash, on every shard (the replacement's included): exactly +LATER.
  for (let i = FIRST; i < FIRST + LATER; i++) writePodManifest(dir, `agg-${i}`);
  await pollUntil(async () => ((await runningCount()) === FIRST + LATER ? true : undefined), { what: `${FIRST + LATER} pods running`, timeoutMs: 180_000, intervalMs: 250 });
  const later = await pollTotals(port, (t) => t.startedContainers >= FIRST + LATER && t.podsOwned === FIRST + LATER, 'a scrape that has seen the later starts', 60_000);
  assert.deepEqual(later, { runPodSandbox: FIRST + LATER, startedPods: FIRST + LATER, startedContainers: FIRST + LATER, podsOwned: FIRST + LATER, threadRestarts: 1 });
  const laterView = await runtimeView(sim.endpoint);
  const newUids = [...laterView.keys()].filter((uid) => !view.has(uid));
  assert.equal(newUids.length, LATER);
  assert.ok(newUids.some((uid) => shardOf(uid, THREADS) === 0), 'some later pods landed on the replacement thread');
});
