/**
 * The image filesystem's figures: statfs of the mountpoint (walking up to the nearest existing
 * directory), usage from CRI ImageFsInfo of the simulated runtime (images, writable layers, set
 * extra usage), and /stats/summary's node.runtime.imageFs / containerFs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { imageFsStats, statfsCapacity, ImageFsStatsError } from '../../../src/main/gc/image-fs-stats.js';
import { SummaryProvider } from '../../../src/main/server/stats-summary.js';
import type { NodeStatsReader } from '../../../src/main/server/stats-node.js';
import { simCapacitySource } from '../../harness/sim-capacity.js';
import { runPod, startHarness } from '../simruntime/sim-harness.js';

const NODE: NodeStatsReader = { read: async () => ({ cpuUsageCoreSeconds: 1, memoryUsageBytes: 1, memoryWorkingSetBytes: 1, memoryAvailableBytes: 1 }) };

test('statfsCapacity: the filesystem of the directory, or of its nearest existing parent; relative paths refused', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'imagefs-'));
  try {
    const st = fs.statfsSync(dir);
    const c = await statfsCapacity.statfs(dir);
    assert.equal(c?.capacityBytes, st.blocks * st.bsize);
    assert.equal(c?.inodes, st.files);
    const deeper = await statfsCapacity.statfs(path.join(dir, 'not', 'there'));
    assert.equal(deeper?.capacityBytes, st.blocks * st.bsize);
    assert.equal(await statfsCapacity.statfs('relative/dir'), undefined);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('usage from the sim (images, writable layers, set extra usage) and capacity from its simulated disk; in /stats/summary', async () => {
  const h = await startHarness({ imageFs: { capacityBytes: 10_000_000_000, extraUsedBytes: 1_000 } });
  try {
    await runPod(h, ['sleep', '3600'], { annotations: { 'sim.shardlet.io/writable-layer-bytes': '5000000' } });
    await runPod(h, ['sleep', '3600']);
    const f = h.rt.imageFs.figures();
    assert.equal(f.containerBytes, 5_000_000 + 4096);
    const imageBytes = (await h.client.listImages()).reduce((s, i) => s + Number(i.size), 0);
    assert.equal(f.imageBytes, imageBytes);
    const { imageFs, containerFs } = await imageFsStats(h.client, simCapacitySource(h.rt), h.clock);
    assert.equal(imageFs.usedBytes, imageBytes + 1_000);
    assert.equal(containerFs.usedBytes, 5_004_096);
    assert.equal(imageFs.capacityBytes, 10_000_000_000);
    assert.equal(imageFs.availableBytes, 10_000_000_000 - imageBytes - 1_000 - 5_004_096);
    assert.equal(imageFs.inodesUsed, 3 * 150);
    const stats = await h.client.listContainerStats();
    assert.deepEqual(stats.map((s) => (s as unknown as { writableLayer: { usedBytes: { value: string } } }).writableLayer.usedBytes.value).sort(), ['4096', '5000000']);

    const summary = new SummaryProvider({
      runtime: h.client, pods: () => [], node: NODE, nodeName: 'n', clock: h.clock, startedAtMs: h.clock.now(),
      runtimeFs: () => imageFsStats(h.client, simCapacitySource(h.rt), h.clock),
    });
    const s = await summary.summary();
    assert.deepEqual(s.node.runtime?.imageFs, imageFs);
    assert.equal(s.node.runtime?.containerFs.usedBytes, 5_004_096);
    const failing = new SummaryProvider({ runtime: h.client, pods: () => [], node: NODE, nodeName: 'n', clock: h.clock, startedAtMs: 0, runtimeFs: () => Promise.reject(new Error('down')) });
    assert.equal((await failing.summary()).node.runtime, undefined, 'unknown figures are left out');
  } finally {
    await h.close();
  }
});

test('a runtime reporting no image filesystem is an error (the kubelet\'s "imageFs information is unavailable"); no container fs shares the image one', async () => {
  const clock = { now: () => 0 } as never;
  await assert.rejects(imageFsStats({ imageFsInfo: async () => ({ imageFilesystems: [], containerFilesystems: [] }) }, statfsCapacity, clock), (e: unknown) => e instanceof ImageFsStatsError && e.message === 'imageFs information is unavailable');
  const r = await imageFsStats({ imageFsInfo: async () => ({ imageFilesystems: [{ timestamp: '1000000000', fsId: { mountpoint: '/' }, usedBytes: { value: '42' }, inodesUsed: null }], containerFilesystems: [] }) }, statfsCapacity, clock);
  assert.equal(r.containerFs, r.imageFs);
  assert.equal(r.imageFs.usedBytes, 42);
  assert.equal(r.imageFs.time, '1970-01-01T00:00:01Z');
  assert.ok((r.imageFs.capacityBytes ?? 0) > 0);
});
