/**
 * The agent's GC wiring (agent-gc.ts): the flags reach both collectors, failures become the
 * kubelet's node events on the recorder, and removals and passes appear in /metrics under the
 * kubelet's and shardlet's names.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentConfig, type AgentConfig } from '../../../src/main/agent/agent-config.js';
import { createAgentGc } from '../../../src/main/agent/agent-gc.js';
import { createMetricsSystem } from '../../../src/main/metrics/main-metrics.js';
import type { EventRecorder } from '../../../src/main/events/event-recorder.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { CriClient } from '../../../src/shared/cri/cri-client.js';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import type { Container, Image } from '../../../src/shared/cri/cri-types.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { T0, ctr } from './gc-fixtures.js';

test('flags reach the collectors; failures are node events; removals are metrics', async () => {
  const config = parseAgentConfig(['--pod-manifest-path', '/m', '--node-name', 'n1', '--maximum-dead-containers-per-container', '0', '--image-gc-high-threshold', '50', '--image-gc-low-threshold', '40', '--minimum-image-ttl-duration', '0']) as AgentConfig;
  let failList = true;
  let containers: Container[] = [ctr('d1', 'p', 'c', T0), ctr('d2', 'p', 'c', T0 + 1)];
  let images: Image[] = [{ id: 'big', repoTags: ['x:1'], repoDigests: [], size: '600', username: '', spec: null, pinned: false }];
  const runtime = {
    listContainers: async () => {
      if (failList) throw new CriError('ERR_CRI_UNAVAILABLE', 'ListContainers', 'connection refused');
      return containers;
    },
    listPodSandbox: async () => [],
    removeContainer: async (id: string) => void (containers = containers.filter((c) => c.id !== id)),
    stopContainer: async () => {},
    stopPodSandbox: async () => {},
    removePodSandbox: async () => {},
    listImages: async () => images,
    removeImage: async (s: { image: string }) => void (images = images.filter((i) => i.id !== s.image)),
    imageStatus: async () => ({ image: null, info: {} }),
    status: async () => ({ status: null, info: {} }),
    imageFsInfo: async () => ({ imageFilesystems: [{ timestamp: '0', fsId: { mountpoint: '/img' }, usedBytes: { value: '600' }, inodesUsed: null }], containerFilesystems: [] }),
  } as unknown as CriClient;
  const events: string[] = [];
  const recorder = { record: (obj: { kind: string; name: string }, type: string, reason: string, message: string) => events.push(`${obj.kind}/${obj.name} ${type} ${reason}: ${message}`) } as unknown as EventRecorder;
  const metrics = createMetricsSystem({ processMetrics: false, eventLoopDelay: false });
  let capacity = 0;
  const gc = createAgentGc({
    config, clock: new FakeClock(T0 + 60_000), logger: silentLogger, runtime, metrics, recorder,
    sourcesReady: () => true, isPodGone: () => false,
    capacity: { statfs: async () => ({ capacityBytes: capacity, availableBytes: capacity - images.reduce((s, i) => s + Number(i.size), 0), inodes: 1, inodesFree: 1 }) },
  });
  try {
    assert.equal((await gc.containers.runOnce()).ok, false);
    failList = false;
    assert.equal((await gc.containers.runOnce()).containersRemoved, 2, '--maximum-dead-containers-per-container 0 reached the container GC');
    assert.equal((await gc.images.runOnce()).ok, false); // capacity 0
    assert.equal((await gc.images.runOnce()).ok, false); // again: ImageGCFailed
    capacity = 1000; // 60% ≥ 50%: free down to 40%
    const r = await gc.images.runOnce();
    assert.deepEqual(r.removed, ['big'], 'the thresholds and minimum age reached the image GC');
    assert.deepEqual(events, [
      'Node/n1 Warning ContainerGCFailed: connection refused',
      'Node/n1 Warning InvalidDiskCapacity: invalid capacity 0 on image filesystem',
      'Node/n1 Warning InvalidDiskCapacity: invalid capacity 0 on image filesystem',
      'Node/n1 Warning ImageGCFailed: invalid capacity 0 on image filesystem',
    ]);
    const text = await metrics.aggregator.collect();
    assert.match(text, /^kubelet_image_garbage_collected_total\{reason="space"\} 1$/m);
    assert.match(text, /^shardlet_container_gc_removed_total\{kind="container",result="ok"\} 2$/m);
    assert.match(text, /^shardlet_gc_pass_duration_seconds_count\{gc="container",result="failed"\} 1$/m);
    assert.match(text, /^shardlet_gc_pass_duration_seconds_count\{gc="image",result="failed"\} 2$/m);
  } finally {
    await gc.close();
    metrics.close();
  }
});
