/**
 * A real Prometheus scrapes the REAL agent process (`shardlet agent`, 4 pod-worker threads, the
 * simulated runtime as its own process, 50 static pods): the target is up; kubelet_running_pods
 * as stored by Prometheus equals the pods /pods reports Running; kubelet_running_containers and
 * the per-thread shardlet_* series agree with the runtime; and `promtool check metrics` finds
 * nothing in the agent's own exposition beyond the documented kubelet naming exceptions.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parsePromText, sampleSum } from '../../bench/prom-text.js';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { isRunning, pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess } from '../e2e/agent-harness.js';
import { KUBELET_NAMING_EXCEPTIONS, KUBELET_NAMING_EXCEPTIONS_ALWAYS_EXPOSED } from '../unit/metrics/naming-exceptions.js';
import { promtoolCheckMetrics, startPrometheus, type PrometheusHandle } from './prometheus-harness.js';

const PODS = 50;
const THREADS = 4;

let sim: SimRuntimeInstance | undefined;
let agent: AgentProcess | undefined;
let prom: PrometheusHandle | undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-prom-agent-'));

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
  for (let i = 0; i < PODS; i++) writePodManifest(dir, `scraped-${i}`);
  agent = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, workers: THREADS });
  await pollUntil(async () => {
    const pods = await agent!.pods();
    return pods.length === PODS && pods.every(isRunning) ? true : undefined;
  }, { what: `${PODS} pods running`, timeoutMs: 120_000, intervalMs: 250 });
  prom = await startPrometheus({ targets: [`127.0.0.1:${agent.port}`] });
});

after(async () => {
  await prom?.stop();
  await agent?.kill();
  await sim?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('Prometheus scrapes the real agent: target up, kubelet_running_pods = pods running on /pods', async () => {
  const p = prom!;
  await p.waitForTargetsUp();
  const targets = await p.targets();
  assert.deepEqual(targets.map((t) => [t.scrapeUrl, t.health]), [[`http://127.0.0.1:${agent!.port}/metrics`, 'up']]);
  const up = await p.query('up{job="shardlet"}');
  assert.equal(Number(up[0]?.value[1]), 1);

  const running = (await agent!.pods()).filter(isRunning).length;
  assert.equal(running, PODS);
  // The pods were all running before Prometheus started, so every scrape it stored saw them all.
  const pods = await p.waitForQuery('kubelet_running_pods', (r) => r.length === 1);
  assert.equal(Number(pods[0]?.value[1]), running);

  // One container per pod, all running in the runtime.
  const view = await runtimeView(sim!.endpoint);
  const runtimeRunning = [...view.values()].reduce((n, v) => n + v.containers.filter((c) => c.state === 'CONTAINER_RUNNING').length, 0);
  assert.equal(runtimeRunning, PODS);
  const ctrs = await p.waitForQuery('kubelet_running_containers{container_state="running"}', (r) => r.length === 1 && Number(r[0]?.value[1]) === runtimeRunning);
  assert.equal(Number(ctrs[0]?.value[1]), runtimeRunning);

  // Every pod started once, across the threads: the worker-thread counters add up exactly.
  const sandboxes = await p.waitForQuery('sum(kubelet_runtime_operations_total{operation_type="run_podsandbox"})', (r) => r.length === 1);
  assert.equal(Number(sandboxes[0]?.value[1]), PODS);
  const owned = await p.waitForQuery('sum(shardlet_thread_pods_owned)', (r) => r.length === 1 && Number(r[0]?.value[1]) === PODS);
  assert.equal(Number(owned[0]?.value[1]), PODS);
  // Pod start latency: one observation per pod in both histograms (seen → running; the SLI).
  for (const h of ['kubelet_pod_start_duration_seconds', 'kubelet_pod_start_sli_duration_seconds']) {
    const count = await p.waitForQuery(`${h}_count`, (r) => r.length === 1);
    assert.equal(Number(count[0]?.value[1]), PODS, `${h}_count`);
  }
  const threads = await p.query('count(shardlet_thread_pods_owned)');
  assert.equal(Number(threads[0]?.value[1]), THREADS, 'one pods_owned series per pod-worker thread');
  const busy = await p.query('sum(shardlet_thread_busy_seconds_total)');
  assert.ok(Number(busy[0]?.value[1]) > 0, 'the threads recorded busy time');
});

test('promtool check metrics on the real agent exposition finds only the documented naming exceptions', async () => {
  const res = await agent!.get('/metrics');
  assert.equal(res.status, 200);
  const { problems } = promtoolCheckMetrics(res.body);
  const unexpected = problems.filter((line) => ![...KUBELET_NAMING_EXCEPTIONS].some((name) => line.startsWith(`${name} `)));
  assert.deepEqual(unexpected, []);
  for (const name of KUBELET_NAMING_EXCEPTIONS_ALWAYS_EXPOSED) assert.match(res.body, new RegExp(`^# TYPE ${name} `, 'm'));

  // The exposition parses cleanly and carries the per-thread load series.
  const m = parsePromText(res.body);
  assert.deepEqual(m.errors, []);
  assert.equal(sampleSum(m, 'shardlet_thread_pods_owned'), PODS);
  assert.equal(sampleSum(m, 'shardlet_thread_queue_depth'), 0, 'nothing is waiting once every pod runs');
  assert.equal(m.types.get('shardlet_thread_busy_seconds_total'), 'counter');
});
