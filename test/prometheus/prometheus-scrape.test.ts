/**
 * A real Prometheus scrapes the agent server's /metrics: the target is up, a kubelet gauge
 * set on the main thread and a counter observed in a worker thread come back through
 * Prometheus's query API with the exact values, and promtool finds nothing wrong with the
 * exposition beyond the documented kubelet naming exceptions.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { createMetricsSystem, type MetricsSystem } from '../../src/main/metrics/main-metrics.js';
import { createAgentServer, type AgentServer } from '../../src/main/server/agent-server.js';
import { silentLogger } from '../../src/shared/logging/logger.js';
import { KUBELET_NAMING_EXCEPTIONS, KUBELET_NAMING_EXCEPTIONS_ALWAYS_EXPOSED } from '../unit/metrics/naming-exceptions.js';
import { promtoolCheckMetrics, startPrometheus, type PrometheusHandle } from './prometheus-harness.js';

const RUNNING_PODS = 37;
const WORKER_OPS = 250;

let system: MetricsSystem;
let server: AgentServer;
let prom: PrometheusHandle | undefined;
let worker: Worker | undefined;
let target = '';

before(async () => {
  system = createMetricsSystem();
  system.main.runningPods.set(RUNNING_PODS);
  system.main.runningContainers('running').set(2 * RUNNING_PODS);
  worker = new Worker(new URL('../unit/metrics/fixtures/recording-worker.js', import.meta.url), {
    workerData: { arena: system.arena.buffer, ops: WORKER_OPS, pod: 'scraped-pod' },
  });
  await once(worker, 'message');
  server = createAgentServer({
    port: 0,
    metrics: system.aggregator,
    health: { checks: () => [{ name: 'syncloop', ok: true }] },
    pods: { list: () => [] },
    logger: silentLogger,
  });
  const { address, port } = await server.listen();
  target = `${address}:${port}`;
  prom = await startPrometheus({ targets: [target] });
});

after(async () => {
  await prom?.stop();
  await server?.close();
  await worker?.terminate();
  system?.close();
});

test('Prometheus scrapes the agent: target up, exact values through the query API', async () => {
  assert.ok(prom);
  await prom.waitForTargetsUp();
  const targets = await prom.targets();
  assert.deepEqual(targets.map((t) => [t.scrapeUrl, t.health]), [[`http://${target}/metrics`, 'up']]);
  const pods = await prom.waitForQuery('kubelet_running_pods', (r) => r.length === 1);
  assert.equal(Number(pods[0]?.value[1]), RUNNING_PODS);
  const ops = await prom.waitForQuery('kubelet_runtime_operations_total{operation_type="list_podsandbox"}', (r) => r.length === 1);
  assert.equal(Number(ops[0]?.value[1]), WORKER_OPS, 'a counter from a worker thread');
  const buckets = await prom.query('sum(kubelet_runtime_operations_duration_seconds_bucket{le="+Inf"})');
  assert.equal(Number(buckets[0]?.value[1]), WORKER_OPS);
});

test('promtool check metrics finds only the documented kubelet naming exceptions', async () => {
  const text = await system.aggregator.collect();
  const { problems } = promtoolCheckMetrics(text);
  const unexpected = problems.filter((p) => ![...KUBELET_NAMING_EXCEPTIONS].some((name) => p.startsWith(`${name} `)));
  assert.deepEqual(unexpected, []);
  // And the exceptions really are the kubelet's names, still exposed.
  for (const name of KUBELET_NAMING_EXCEPTIONS_ALWAYS_EXPOSED) assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'));
});
