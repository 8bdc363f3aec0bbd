import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podCacheSize } from '../../../src/main/agent/pod-cache-size.js';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';

test('the agent sizes the pod cache from --max-pods and lets it grow 16× (at least 16,384 slots) within 1 GiB', () => {
  assert.deepEqual(podCacheSize(110), { capacity: 1024, maxCapacity: 16_384 });
  assert.deepEqual(podCacheSize(5000), { capacity: 10_064, maxCapacity: 161_024 });
  assert.deepEqual(podCacheSize(1_000_000), { capacity: 262_144, maxCapacity: 262_144 });
  // Every size the agent can ask for is one the cache accepts (only address space is reserved).
  for (const maxPods of [1, 110, 5000]) {
    const c = createPodCache(podCacheSize(maxPods));
    assert.equal(c.reader.stats().maxCapacity, podCacheSize(maxPods).maxCapacity);
  }
});
