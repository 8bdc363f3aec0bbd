import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetricsSystem, type MetricsSystem } from '../../../src/main/metrics/main-metrics.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { recordThreadHeap, sampleThreadHeap, startThreadHeapSampler, type ThreadHeapSample } from '../../../src/shared/metrics/thread-heap.js';
import { sample } from './exposition-parse.js';

let system: MetricsSystem | undefined;
afterEach(() => {
  system?.close();
  system = undefined;
});

const METRIC = 'shardlet_thread_heap_bytes';

test('sampleThreadHeap describes this isolate: committed and used heap are positive, used within committed-ish bounds', () => {
  const s = sampleThreadHeap();
  assert.ok(s.committedBytes > 1024 * 1024, `committed ${s.committedBytes}`);
  assert.ok(s.usedBytes > 0 && s.usedBytes < 4 * s.committedBytes, `used ${s.usedBytes}`);
  assert.ok(s.externalBytes >= 0);
});

test('the sampler records at once, then every period on the injected clock, and stop() ends it', async () => {
  system = createMetricsSystem({ processMetrics: false, eventLoopDelay: false, arena: { slots: 4 } });
  const clock = new FakeClock();
  let n = 0;
  const fake = (): ThreadHeapSample => {
    n++;
    return { committedBytes: 1000 * n, usedBytes: 100 * n, externalBytes: 10 * n };
  };
  const sampler = startThreadHeapSampler({ recorder: system.main.recorder, thread: '7', role: 'pod-worker', clock, periodMs: 5_000, sample: fake });
  const read = async (kind: string): Promise<number | undefined> => sample(await system!.aggregator.collect(), METRIC, { thread: '7', role: 'pod-worker', kind });
  assert.equal(await read('committed'), 1000);
  assert.equal(await read('used'), 100);
  assert.equal(await read('external'), 10);
  clock.step(4_999);
  assert.equal(await read('committed'), 1000, 'not before the period');
  clock.step(1);
  assert.equal(await read('committed'), 2000);
  clock.step(5_000);
  assert.equal(await read('used'), 300);
  sampler.stop();
  sampler.stop();
  assert.equal(clock.pendingTimers, 0, 'stop cancels the next tick');
  clock.step(20_000);
  assert.equal(await read('committed'), 3000, 'nothing after stop');
});

test('a period below 100 ms is refused up front', () => {
  system = createMetricsSystem({ processMetrics: false, eventLoopDelay: false, arena: { slots: 4 } });
  assert.throws(() => startThreadHeapSampler({ recorder: system!.main.recorder, thread: '1', role: 'pleg', clock: new FakeClock(), periodMs: 10 }), RangeError);
});

test('recordThreadHeap keeps threads apart by their labels', async () => {
  system = createMetricsSystem({ processMetrics: false, eventLoopDelay: false, arena: { slots: 4 } });
  recordThreadHeap(system.main.recorder, '0', 'main', { committedBytes: 5, usedBytes: 4, externalBytes: 3 });
  recordThreadHeap(system.main.recorder, 'pleg', 'pleg', { committedBytes: 50, usedBytes: 40, externalBytes: 30 });
  const text = await system.aggregator.collect();
  assert.equal(sample(text, METRIC, { thread: '0', role: 'main', kind: 'committed' }), 5);
  assert.equal(sample(text, METRIC, { thread: 'pleg', role: 'pleg', kind: 'external' }), 30);
});
