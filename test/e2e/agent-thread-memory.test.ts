/**
 * Per-thread memory in the real agent (issue 15): with 2 pod-worker threads, /metrics carries
 * shardlet_thread_heap_bytes for the main thread, the PLEG thread and each pod-worker thread
 * (committed, used, external), and every long-lived worker thread the agent starts (pod workers,
 * PLEG) runs with the capped young generation of worker-heap-limits.ts. The agent runs
 * in-process (its Worker objects are seen through process 'worker' events); the runtime is a
 * separate process.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { parsePromText } from '../../bench/prom-text.js';
import { threadMemory } from '../../bench/thread-memory.js';
import { Agent } from '../../src/main/agent/agent.js';
import { AGENT_DEFAULTS } from '../../src/main/agent/agent-config.js';
import { PoolDispatcher } from '../../src/main/dispatch/pool-dispatcher.js';
import { WORKER_HEAP_LIMITS } from '../../src/main/dispatch/worker-heap-limits.js';
import { DECODER_THREAD_YOUNG_MB } from '../../src/main/config/manifest-decode-thread-client.js';
import { realClock, realRandom } from '../../src/shared/clock/clock.js';
import { silentLogger } from '../../src/shared/logging/logger.js';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { freePort, pollUntil, writePodManifest } from './agent-harness.js';

const THREADS = 2;
const PODS = 10;

let sim: SimRuntimeInstance | undefined;
let agent: Agent | undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-mem-'));
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-mem-root-'));
const workers: Worker[] = [];
/** Every thread's exit, and its young-generation limit as created (an exited Worker reports none). */
const exits = new Map<Worker, { youngMb: number | undefined; exited: Promise<number> }>();
const onWorker = (w: Worker): void => {
  workers.push(w);
  exits.set(w, { youngMb: w.resourceLimits?.maxYoungGenerationSizeMb, exited: new Promise<number>((resolve) => w.once('exit', resolve)) });
};
process.on('worker', onWorker);

after(async () => {
  process.off('worker', onWorker);
  await agent?.stop();
  await sim?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(root, { recursive: true, force: true });
});

test('every thread reports its heap on /metrics, and pod-worker and PLEG threads run with the capped young generation', async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
  for (let i = 0; i < PODS; i++) writePodManifest(dir, `mem-${i}`);
  agent = new Agent({
    config: { ...AGENT_DEFAULTS, containerRuntimeEndpoint: sim.endpoint, podManifestPath: dir, nodeName: 'n', workers: THREADS, maxPods: 200, port: 0, readOnlyPort: await freePort(), rootDir: root, podLogsDir: path.join(root, 'pods'), fileCheckFrequencyMs: 1_000 },
    clock: realClock,
    random: realRandom,
    logger: silentLogger,
  });
  await agent.start();
  const d = agent.dispatcher;
  assert.ok(d instanceof PoolDispatcher);
  const port = agent.address!.port;
  await d.whenAllReady();
  const podWorkerIds = new Set(d.threadIds().filter((t): t is number => t !== undefined).map(String));
  assert.equal(podWorkerIds.size, THREADS);

  // The PLEG thread reports with its first relist; pod workers at start.
  const rows = await pollUntil(async () => {
    const r = threadMemory(parsePromText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()));
    return r.some((x) => x.role === 'pleg') && r.filter((x) => x.role === 'pod-worker').length === THREADS ? r : undefined;
  }, { what: 'heap series of main, PLEG and both pod-worker threads', timeoutMs: 30_000, intervalMs: 250 });
  assert.deepEqual(rows.map((r) => r.role), ['main', 'pleg', 'pod-worker', 'pod-worker']);
  assert.deepEqual(new Set(rows.filter((r) => r.role === 'pod-worker').map((r) => r.thread)), podWorkerIds);
  for (const r of rows) {
    assert.ok((r.committedMiB ?? 0) > 1, `${r.role} ${r.thread}: committed ${r.committedMiB} MiB`);
    assert.ok((r.usedMiB ?? 0) > 1, `${r.role} ${r.thread}: used ${r.usedMiB} MiB`);
    assert.ok(r.externalMiB !== null && r.externalMiB >= 0);
  }

  // Pod workers (Piscina's) and the PLEG thread: the young-generation cap. The manifest decoder
  // has its own limits (manifest-decode-thread-client.ts) and is told apart by them.
  const live = workers.filter((w) => w.threadId > 0);
  const capped = live.filter((w) => w.resourceLimits?.maxYoungGenerationSizeMb === WORKER_HEAP_LIMITS.maxYoungGenerationSizeMb);
  for (const id of podWorkerIds) assert.ok(capped.some((w) => String(w.threadId) === id), `pod-worker thread ${id} has the young-generation cap`);
  // The PLEG runner also boots a standby PLEG thread after the first relist (pleg-runner.ts): it
  // may or may not exist yet, but every thread other than the one decoder carries the cap.
  const seen = JSON.stringify(live.map((w) => [w.threadId, w.resourceLimits?.maxYoungGenerationSizeMb]));
  assert.ok(capped.length >= THREADS + 1, `pod workers + the PLEG thread capped; limits seen: ${seen}`);
  assert.equal(live.length - capped.length, 1, `only the manifest decoder thread is uncapped; limits seen: ${seen}`);
});

test('the manifest decoder thread exits once idle (THREAD_DECODER_DEFAULTS.idleExitMs) instead of staying for the agent\'s life', async () => {
  // The decoder is the one thread created with its own young-generation limit.
  const decoders = [...exits.entries()].filter(([, e]) => e.youngMb === DECODER_THREAD_YOUNG_MB);
  assert.equal(decoders.length, 1, `one decoder thread started for the manifests; limits seen: ${JSON.stringify([...exits.values()].map((e) => e.youngMb))}`);
  const [, decoder] = decoders[0]!;
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('the idle decoder thread did not exit within 90 s')), 90_000)));
  try {
    await Promise.race([decoder.exited, bound]);
  } finally {
    clearTimeout(timer);
  }
  assert.equal(agent?.state, 'running', 'the agent keeps running without it');
});
