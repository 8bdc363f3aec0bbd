import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { createMetricsSystem, type MetricsSystem } from '../../../src/main/metrics/main-metrics.js';
import { createWorkerMetrics } from '../../../workers/metrics/worker-metrics.js';
import { sample } from './exposition-parse.js';

const WORKER_URL = new URL('./fixtures/recording-worker.js', import.meta.url);

interface Spawned { worker: Worker; threadId: number; attached: boolean }

/** Every worker a test started, so a failing test cannot leave threads that keep the process alive. */
const started = new Set<Worker>();
afterEach(async () => {
  await Promise.all([...started].map((w) => w.terminate()));
  started.clear();
});

async function spawn(system: MetricsSystem, ops: number, pod: string): Promise<Spawned> {
  const worker = new Worker(WORKER_URL, { workerData: { arena: system.arena.buffer, ops, pod } });
  started.add(worker);
  const [msg] = (await once(worker, 'message')) as [{ kind: string; attached: boolean; threadId: number }];
  assert.equal(msg.kind, 'recorded');
  return { worker, threadId: msg.threadId, attached: msg.attached };
}

async function exit(s: Spawned): Promise<void> {
  const exited = once(s.worker, 'exit');
  s.worker.postMessage('exit');
  await exited;
}

const OPS = { operation_type: 'list_podsandbox' };

test('counters observed in N real worker threads add up exactly in one exposition', async () => {
  const system = createMetricsSystem({ processMetrics: false, eventLoopDelay: false, arena: { slots: 8 } });
  const ops = [1000, 1001, 1002, 1003];
  const workers = await Promise.all(ops.map((n, i) => spawn(system, n, `pod-${i}`)));
  try {
    assert.ok(workers.every((w) => w.attached));
    const text = await system.aggregator.collect();
    const total = ops.reduce((a, b) => a + b, 0);
    assert.equal(sample(text, 'kubelet_runtime_operations_total', OPS), total);
    assert.equal(sample(text, 'kubelet_runtime_operations_duration_seconds_count', OPS), total);
    assert.equal(sample(text, 'kubelet_runtime_operations_duration_seconds_bucket', { ...OPS, le: '+Inf' }), total);
    // i % 10 === 0 fails: ceil(n / 10) errors per thread.
    assert.equal(sample(text, 'kubelet_runtime_operations_errors_total', OPS), ops.reduce((a, n) => a + Math.ceil(n / 10), 0));
    assert.equal(sample(text, 'kubelet_pod_worker_duration_seconds_count', { operation_type: 'sync' }), total);
    for (const [i, w] of workers.entries()) {
      assert.equal(sample(text, 'shardlet_thread_pods_owned', { thread: String(w.threadId) }), ops[i]);
      assert.equal(sample(text, 'prober_probe_total', {
        probe_type: 'Liveness', result: 'successful', container: 'c', pod: `pod-${i}`, namespace: 'ns', pod_uid: `uid-pod-${i}`,
      }), 1);
    }
    // HELP/TYPE appear once per family even though four threads hold the series.
    assert.equal(text.split('\n').filter((l) => l === '# TYPE kubelet_runtime_operations_total counter').length, 1);
  } finally {
    await Promise.all(workers.map(exit));
    system.close();
  }
});

test('a retired and replaced thread neither loses nor doubles totals; its gauges and per-pod series leave', async () => {
  const system = createMetricsSystem({ processMetrics: false, eventLoopDelay: false, arena: { slots: 3 } });
  const a = await spawn(system, 100, 'pod-a');
  const b = await spawn(system, 200, 'pod-b');
  const before = await system.aggregator.collect();
  assert.equal(sample(before, 'kubelet_runtime_operations_total', OPS), 300);

  await exit(a);
  // Exited but not yet retired: its slot still holds its last values.
  assert.equal(sample(await system.aggregator.collect(), 'kubelet_runtime_operations_total', OPS), 300);
  assert.equal(system.aggregator.retireThread(a.threadId), 1);
  assert.equal(system.aggregator.retireThread(a.threadId), 0, 'retiring twice is harmless');
  const afterRetire = await system.aggregator.collect();
  assert.equal(sample(afterRetire, 'kubelet_runtime_operations_total', OPS), 300, 'folded into the retired accumulator');
  assert.equal(sample(afterRetire, 'kubelet_runtime_operations_duration_seconds_count', OPS), 300);
  assert.equal(sample(afterRetire, 'shardlet_thread_pods_owned', { thread: String(a.threadId) }), undefined);
  assert.equal(sample(afterRetire, 'shardlet_thread_busy_seconds_total', { thread: String(a.threadId) }), undefined);
  assert.equal(sample(afterRetire, 'shardlet_thread_pods_owned', { thread: String(b.threadId) }), 200);
  assert.doesNotMatch(afterRetire, /pod="pod-a"/);
  assert.match(afterRetire, /pod="pod-b"/);

  // Only 3 slots (main + 2): the replacement can attach only because retire freed a's slot.
  const c = await spawn(system, 5, 'pod-a');
  assert.equal(c.attached, true);
  const afterReplace = await system.aggregator.collect();
  assert.equal(sample(afterReplace, 'kubelet_runtime_operations_total', OPS), 305);
  assert.match(afterReplace, /pod="pod-a"/);

  await Promise.all([exit(b), exit(c)]);
  system.aggregator.retireThread(b.threadId);
  system.aggregator.retireThread(c.threadId);
  assert.equal(sample(await system.aggregator.collect(), 'kubelet_runtime_operations_total', OPS), 305);
  system.close();
});

test('with no worker threads the main thread records the same metrics inline (--workers 0)', async () => {
  const system = createMetricsSystem({ processMetrics: false, eventLoopDelay: false, arena: { slots: 2 } });
  const inline = createWorkerMetrics({ arena: system.arena, threadId: 0 });
  inline.runtimeOperation('RunPodSandbox', 0.3);
  inline.runPodSandbox('', 0.3);
  system.main.runningPods.set(12);
  const text = await system.aggregator.collect();
  assert.equal(sample(text, 'kubelet_runtime_operations_total', { operation_type: 'run_podsandbox' }), 1);
  assert.equal(sample(text, 'kubelet_run_podsandbox_duration_seconds_count', { runtime_handler: '' }), 1);
  assert.equal(sample(text, 'kubelet_running_pods'), 12);
  system.close();
});

test('a thread that finds the arena full still records (privately) and reports attached=false', () => {
  const system = createMetricsSystem({ processMetrics: false, eventLoopDelay: false, arena: { slots: 1 } });
  const m = createWorkerMetrics({ arena: system.arena, threadId: 42 });
  assert.equal(m.attached, false);
  m.runtimeOperation('Version', 0.001);
  system.close();
});

test('process metrics are appended on the main thread only when asked, without *_total gauges', async () => {
  const system = createMetricsSystem({ eventLoopDelay: true, arena: { slots: 2 } });
  const text = await system.aggregator.collect();
  assert.match(text, /^process_resident_memory_bytes \d+/m);
  assert.doesNotMatch(text, /nodejs_active_handles_total/);
  assert.notEqual(sample(text, 'shardlet_main_event_loop_delay_seconds', { stat: 'p99' }), undefined);
  system.close();
});
