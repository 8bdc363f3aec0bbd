/**
 * The pod cache's limits, as the agent wires them (agent.ts): PodCacheMetrics copies the shared
 * cache's counters into /metrics at each collection, and podCacheCheck (/healthz/podcache) fails
 * while the PLEG could not store every pod. Driven on a real cache filled to its maximum.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetricsSystem } from '../../../src/main/metrics/main-metrics.js';
import { PodCacheMetrics } from '../../../src/main/metrics/pod-cache-metrics.js';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { podCacheCheck } from '../../../src/main/server/health-checks.js';
import { podUid, typicalPodStatus } from '../pod-cache/pod-status-fixtures.js';

function sample(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

test('full, oversize, trimmed and unstored pods show in /metrics and fail /healthz/podcache', async () => {
  const metrics = createMetricsSystem({ processMetrics: false, eventLoopDelay: false });
  const cache = createPodCache({ capacity: 2, maxCapacity: 4, bytesPerSlot: 1024 });
  const cacheMetrics = new PodCacheMetrics(metrics.main);
  metrics.aggregator.onCollect(() => cacheMetrics.observe(cache.reader.stats()));
  const check = () => podCacheCheck({ stats: () => cache.reader.stats() });
  assert.deepEqual(check(), { name: 'podcache', ok: true });

  for (let p = 0; p < 4; p++) cache.writer.set(podUid(p), typicalPodStatus(p, 0), null, 10);
  assert.throws(() => cache.writer.set(podUid(4), typicalPodStatus(4, 0), null, 10), /ERR_CACHE_FULL|full/);
  const big = typicalPodStatus(0, 1);
  for (let k = 2; k < 10; k++) big.containers.push({ ...big.containers[0]!, name: `c${k}` });
  assert.equal(cache.writer.set(podUid(0), big, null, 11), 'oversize');
  cache.writer.updateTime(11, 1); // the PLEG's relist: one listed pod had no slot

  let text = await metrics.aggregator.collect();
  assert.equal(sample(text, 'shardlet_pod_cache_slots_capacity'), 4, 'grown from 2 to its maximum');
  assert.equal(sample(text, 'shardlet_pod_cache_slots_used'), 4);
  assert.equal(sample(text, 'shardlet_pod_cache_full_total'), 1);
  assert.equal(sample(text, 'shardlet_pod_cache_oversize_total'), 1);
  assert.equal(sample(text, 'shardlet_pod_cache_unstored_pods'), 2, 'the pod without a slot and the oversize placeholder');
  assert.deepEqual(check(), {
    name: 'podcache', ok: false,
    reason: 'pod cache full: 1 pods have no status (4 slots in use, at most 4); 1 pods have a status too large to store (ERR_CACHE_ENTRY_TOO_LARGE)',
  });

  // Room again: health recovers; counters never go back and are not counted twice.
  cache.writer.delete(podUid(3));
  cache.writer.set(podUid(4), typicalPodStatus(4, 0), null, 12);
  cache.writer.updateTime(12, 0);
  text = await metrics.aggregator.collect();
  assert.equal(sample(text, 'shardlet_pod_cache_unstored_pods'), 1, 'the placeholder stands until its pod is stored whole');
  assert.match(check().reason ?? '', /^1 pods have a status too large/);
  cache.writer.set(podUid(0), typicalPodStatus(0, 2), null, 13);
  text = await metrics.aggregator.collect();
  assert.equal(sample(text, 'shardlet_pod_cache_full_total'), 1);
  assert.equal(sample(text, 'shardlet_pod_cache_oversize_total'), 1);
  assert.equal(sample(text, 'shardlet_pod_cache_unstored_pods'), 0);
  assert.deepEqual(check(), { name: 'podcache', ok: true });
  metrics.close();
});
