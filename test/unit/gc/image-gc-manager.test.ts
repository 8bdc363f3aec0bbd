/**
 * Image GC (the kubelet's realImageGCManager) over a fake image service and a fake capacity
 * source: thresholds and the amount freed, least-recently-used order, what is never removed
 * (in use by any container, the sandbox image, pinned, too young), the kubelet's events and
 * its failure reporting, and the period.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import type { Container, Image, ImageFsInfoResponse, ImageSpec, ImageStatusResponse, StatusResponse } from '../../../src/shared/cri/cri-types.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import type { FsCapacitySource } from '../../../src/main/gc/image-fs-stats.js';
import { ImageGcManager, type ImageGcDeps, type ImageGcRuntime } from '../../../src/main/gc/image-gc-manager.js';
import { T0, ctr } from './gc-fixtures.js';

const MB = 1_000_000;

class ImageFake implements ImageGcRuntime {
  images: Image[] = [];
  containers: Container[] = [];
  readonly removed: string[] = [];
  readonly failRemove = new Set<string>();
  async listImages(): Promise<Image[]> {
    return [...this.images];
  }
  async listContainers(): Promise<Container[]> {
    return [...this.containers];
  }
  async imageStatus(spec: ImageSpec): Promise<ImageStatusResponse> {
    const img = this.images.find((i) => i.repoTags.includes(spec.image) || i.id === spec.image);
    return { image: img ?? null, info: {} } as ImageStatusResponse;
  }
  async removeImage(spec: ImageSpec): Promise<void> {
    if (this.failRemove.has(spec.image)) throw new CriError('ERR_CRI_UNKNOWN', 'RemoveImage', `cannot remove ${spec.image}`);
    this.removed.push(spec.image);
    this.images = this.images.filter((i) => i.id !== spec.image);
  }
  runtimeConfig: string | undefined;
  async status(): Promise<StatusResponse> {
    return { status: null, info: this.runtimeConfig === undefined ? {} : { config: this.runtimeConfig } };
  }
  async imageFsInfo(): Promise<ImageFsInfoResponse> {
    return { imageFilesystems: [{ timestamp: '0', fsId: { mountpoint: '/images' }, usedBytes: { value: String(this.used()) }, inodesUsed: null }], containerFilesystems: [] };
  }
  used(): number {
    return this.images.reduce((s, i) => s + Number(i.size), 0);
  }
  add(id: string, sizeMb: number, opts: { tag?: string; pinned?: boolean } = {}): void {
    this.images.push({ id, repoTags: [opts.tag ?? `docker.io/library/${id}:1`], repoDigests: [], size: String(sizeMb * MB), username: '', spec: null, pinned: opts.pinned ?? false });
  }
}

function setup(over: Partial<ImageGcDeps> = {}, capacityMb = 100, otherMb = 0) {
  const clock = new FakeClock(T0);
  const rt = new ImageFake();
  const events: string[] = [];
  let cap: number | undefined = capacityMb * MB;
  const capacity: FsCapacitySource = {
    statfs: async (dir) => (dir === '/images' && cap !== undefined ? { capacityBytes: cap, availableBytes: cap - rt.used() - otherMb * MB, inodes: 1000, inodesFree: 500 } : undefined),
  };
  const removedMetric: string[] = [];
  const gc = new ImageGcManager({
    runtime: rt, capacity, clock, logger: silentLogger,
    policy: { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 120_000 },
    sandboxImage: 'registry.k8s.io/pause:3.9',
    event: (reason, message) => events.push(`${reason}: ${message}`),
    observer: { removed: (r) => removedMetric.push(r), pass: () => {} },
    ...over,
  });
  return { clock, rt, gc, events, removedMetric, setCapacity: (mb: number | undefined) => (cap = mb === undefined ? undefined : mb * MB) };
}

test('over the high threshold: unused images go, least recently used first, until usage is at the low threshold', async () => {
  const { rt, gc, clock, removedMetric } = setup();
  // 90 MB of images on 100 MB: usage 90% ≥ 85%; to reach 80% free 10 MB.
  rt.add('a', 10); rt.add('b', 8); rt.add('c', 7); rt.add('used', 30); rt.add('pause', 5, { tag: 'registry.k8s.io/pause:3.9' }); rt.add('pinned', 30, { pinned: true });
  rt.containers = [ctr('x', 'p', 'c', T0, 'CONTAINER_EXITED', { imageRef: 'used' })];
  const first = await gc.runOnce();
  // Images present at the first detection count as first seen long ago (the kubelet's initial detection).
  assert.equal(first.ok, true);
  assert.equal(first.usagePercent, 90);
  assert.equal(first.amountToFree, 10 * MB);
  // a, b, c all unused and never used: ties broken by first detection (all equal) → listing order;
  // a (10 MB) frees enough.
  assert.deepEqual(rt.removed, ['a']);
  assert.deepEqual(removedMetric, ['space']);
  // Now 80%: below the high threshold, nothing to do.
  clock.step(300_000);
  const second = await gc.runOnce();
  assert.equal(second.usagePercent, 80);
  assert.deepEqual(rt.removed, ['a']);
});

test('least recently used first: an image that was in use goes after those never used; in-use, sandbox, pinned and young images never go', async () => {
  const { rt, gc, clock, events } = setup();
  rt.add('was-used', 10); rt.add('never', 10); rt.add('used', 10); rt.add('pause', 10, { tag: 'registry.k8s.io/pause:3.9' }); rt.add('pinned', 10, { pinned: true });
  rt.containers = [ctr('x', 'p', 'c', T0, 'CONTAINER_RUNNING', { imageRef: 'was-used' }), ctr('y', 'p', 'd', T0, 'CONTAINER_CREATED', { imageRef: 'used' })];
  const r1 = await gc.runOnce(); // 50%: nothing to do; records when was-used and used were last in use
  assert.deepEqual(r1.removed, []);
  rt.containers = rt.containers.filter((c) => c.id !== 'x'); // was-used's container is gone
  clock.step(300_000);
  rt.add('young', 45); // 95%: free 15 MB; "young" was first seen now (minimum age 2 min)
  const r2 = await gc.runOnce();
  assert.deepEqual(r2.removed, ['never', 'was-used'], 'never used first, then the least recently used');
  for (const id of ['used', 'pause', 'pinned', 'young']) assert.ok(rt.images.some((i) => i.id === id), `${id} kept`);
  assert.equal(gc.records().get('used')?.lastUsedMs, clock.now());
  assert.deepEqual(events, []);
});

test('FreeDiskSpaceFailed when not enough can be freed; ImageGCFailed from the second failure in a row; InvalidDiskCapacity', async () => {
  const { rt, gc, events, clock, setCapacity } = setup({}, 100, 50);
  rt.add('a', 10); rt.add('used', 30);
  rt.containers = [ctr('x', 'p', 'c', T0, 'CONTAINER_EXITED', { imageRef: 'used' })];
  const r = await gc.runOnce(); // 90% (40 images + 50 other): free 10 MB; only a (10 MB) eligible → enough
  assert.deepEqual(r.removed, ['a']);
  rt.add('b', 5); clock.step(300_000);
  const r2 = await gc.runOnce(); // 85%: free 5 MB, b too young (first seen now) → 0 freed
  assert.equal(r2.ok, false);
  assert.deepEqual(events, ['FreeDiskSpaceFailed: Failed to garbage collect required amount of images. Attempted to free 5000000 bytes, but only found 0 bytes eligible to free.']);
  clock.step(1000);
  await gc.runOnce();
  assert.equal(events.length, 3);
  assert.match(events[2]!, /^ImageGCFailed: Failed to garbage collect required amount of images/);
  events.length = 0;
  setCapacity(undefined);
  const r3 = await gc.runOnce();
  assert.equal(r3.ok, false);
  assert.deepEqual(events, ['InvalidDiskCapacity: invalid capacity 0 on image filesystem', 'ImageGCFailed: invalid capacity 0 on image filesystem']);
});

test('a removal error fails the pass after trying the rest; the error is the kubelet\'s', async () => {
  const { rt, gc } = setup();
  rt.add('a', 5); rt.add('b', 40); rt.add('c', 45);
  rt.failRemove.add('a');
  const r = await gc.runOnce(); // 90%: free 10 MB; a fails, b frees 40
  assert.equal(r.ok, false);
  assert.deepEqual(rt.removed, ['b']);
  assert.match(r.error!, /^wanted to free 10000000 bytes, but freed 40000000 bytes space with errors in image deletion: \[cannot remove a\]$/);
});

test('the per-pass cap stops removals without FreeDiskSpaceFailed; a high threshold of 100 disables image GC', async () => {
  const { rt, gc, events } = setup({ maxRemovalsPerPass: 2 });
  for (let i = 0; i < 9; i++) rt.add(`i${i}`, 10); // 90%, free 10 MB → one removal suffices
  rt.images.forEach((img) => (img.size = String(1 * MB)));
  rt.add('fill', 81); // 90 MB used; each small image frees 1 MB: needs 10 removals, cap 2
  const r = await gc.runOnce();
  assert.equal(r.removed.length, 2);
  assert.equal(r.ok, true);
  assert.deepEqual(events, []);
  const off = setup({ policy: { highThresholdPercent: 100, lowThresholdPercent: 80, minAgeMs: 0 } });
  assert.equal(off.gc.enabled, false);
  off.gc.start();
  assert.equal(off.gc.running, undefined);
  assert.equal(off.clock.pendingTimers, 0);
});

test('runs at start, then every 5 minutes after the previous pass; close() stops it', async () => {
  const { gc, clock } = setup();
  gc.start();
  assert.ok(gc.running);
  await gc.running;
  clock.step(299_999);
  assert.equal(gc.running, undefined);
  clock.step(1);
  assert.ok(gc.running);
  await gc.close();
  assert.equal(clock.pendingTimers, 0);
});

test('the sandbox image named in the runtime\'s verbose Status config (containerd) is kept too', async () => {
  const { rt, gc } = setup();
  rt.runtimeConfig = JSON.stringify({ sandboxImage: 'docker.io/local/pause:1', containerd: {} });
  rt.add('local-pause', 30, { tag: 'docker.io/local/pause:1' }); rt.add('a', 30); rt.add('b', 30); // 90%: free 10 MB
  const r = await gc.runOnce();
  assert.deepEqual(r.removed, ['a']);
  rt.add('c', 10); // 70 + 10 = 80%... push over again with one more
  rt.add('d', 10); // 90%
  const r2 = await gc.runOnce();
  assert.ok(!r2.removed.includes('local-pause'));
  assert.ok(rt.images.some((i) => i.id === 'local-pause'), 'containerd\'s sandbox image stays');
});
