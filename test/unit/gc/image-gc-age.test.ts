/**
 * Image GC by age (the kubelet's freeOldImages, imageMaximumGCAge): unused images last used
 * more than the maximum age ago are removed at any disk usage, only once the maximum age has
 * passed since GC began; in-use, sandbox and pinned images never go; errors are the kubelet's;
 * the config field and flag with the kubelet's validation message.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import type { Container, Image, ImageFsInfoResponse, ImageSpec, ImageStatusResponse, StatusResponse } from '../../../src/shared/cri/cri-types.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import type { FsCapacitySource } from '../../../src/main/gc/image-fs-stats.js';
import { ImageGcManager, type ImageGcRuntime } from '../../../src/main/gc/image-gc-manager.js';
import { parseAgentConfig, type AgentConfig } from '../../../src/main/agent/agent-config.js';
import { T0, ctr } from './gc-fixtures.js';

const MB = 1_000_000;
const MIN = 60_000;

class Images implements ImageGcRuntime {
  images: Image[] = [];
  containers: Container[] = [];
  readonly removed: string[] = [];
  readonly failRemove = new Set<string>();
  async listImages(): Promise<Image[]> { return [...this.images]; }
  async listContainers(): Promise<Container[]> { return [...this.containers]; }
  async imageStatus(spec: ImageSpec): Promise<ImageStatusResponse> {
    return { image: this.images.find((i) => i.repoTags.includes(spec.image) || i.id === spec.image) ?? null, info: {} } as ImageStatusResponse;
  }
  async removeImage(spec: ImageSpec): Promise<void> {
    if (this.failRemove.has(spec.image)) throw new CriError('ERR_CRI_UNKNOWN', 'RemoveImage', `cannot remove ${spec.image}`);
    this.removed.push(spec.image);
    this.images = this.images.filter((i) => i.id !== spec.image);
  }
  async status(): Promise<StatusResponse> { return { status: null, info: {} }; }
  async imageFsInfo(): Promise<ImageFsInfoResponse> {
    return { imageFilesystems: [{ timestamp: '0', fsId: { mountpoint: '/images' }, usedBytes: { value: String(this.images.length * MB) }, inodesUsed: null }], containerFilesystems: [] };
  }
  add(id: string, opts: { tag?: string; pinned?: boolean } = {}): void {
    this.images.push({ id, repoTags: [opts.tag ?? `docker.io/library/${id}:1`], repoDigests: [], size: String(MB), username: '', spec: null, pinned: opts.pinned ?? false });
  }
}

function setup(maxAgeMs: number, maxRemovalsPerPass?: number) {
  const clock = new FakeClock(T0);
  const rt = new Images();
  // 1 GB of capacity: usage stays far below the high threshold, so only age removes anything.
  const capacity: FsCapacitySource = { statfs: async () => ({ capacityBytes: 1000 * MB, availableBytes: 1000 * MB - rt.images.length * MB, inodes: 1000, inodesFree: 500 }) };
  const metric: string[] = [];
  const gc = new ImageGcManager({
    runtime: rt, capacity, clock, logger: silentLogger,
    policy: { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 2 * MIN, maxAgeMs },
    sandboxImage: 'registry.k8s.io/pause:3.9',
    observer: { removed: (r) => metric.push(r), pass: () => {} },
    ...(maxRemovalsPerPass !== undefined ? { maxRemovalsPerPass } : {}),
  });
  return { clock, rt, gc, metric };
}

test('age GC waits until the maximum age has passed since GC began, then removes images unused for longer, at low usage', async () => {
  const { clock, rt, gc, metric } = setup(10 * MIN);
  rt.add('old'); rt.add('was-used'); rt.add('used'); rt.add('pause', { tag: 'registry.k8s.io/pause:3.9' }); rt.add('pinned', { pinned: true });
  rt.containers = [ctr('x', 'p', 'c', T0, 'CONTAINER_RUNNING', { imageRef: 'was-used' }), ctr('y', 'p', 'd', T0, 'CONTAINER_EXITED', { imageRef: 'used' })];
  gc.start();
  assert.deepEqual((await gc.running)!.removed, [], 'first pass: GC began now');
  clock.step(5 * MIN);
  assert.deepEqual((await gc.running)!.removed, [], '5 min after GC began: not yet');
  rt.containers = rt.containers.filter((c) => c.id !== 'x'); // was-used last seen in use at T0+5m
  clock.step(5 * MIN); // T0+10m: exactly the maximum age since GC began: still not (strictly more)
  assert.deepEqual((await gc.running)!.removed, []);
  clock.step(5 * MIN); // T0+15m: "old" never used → removed; was-used last used at T0+5m (10 min ago, not more) → kept
  const p = (await gc.running)!;
  assert.equal(p.ok, true);
  assert.deepEqual(p.removedByAge, ['old']);
  assert.ok(p.usagePercent! < 85, 'usage was low: age alone removed it');
  clock.step(5 * MIN); // T0+20m: was-used unused for 15 min > 10 → removed
  assert.deepEqual((await gc.running)!.removedByAge, ['was-used']);
  assert.deepEqual(rt.removed, ['old', 'was-used']);
  assert.deepEqual(metric, ['age', 'age']);
  for (const id of ['used', 'pause', 'pinned']) assert.ok(rt.images.some((i) => i.id === id), `${id} kept`);
  await gc.close();
});

test('an image first seen after GC began is removed once unused for longer than the maximum age, even within the minimum age of its own', async () => {
  const { clock, rt, gc } = setup(3 * MIN);
  await gc.runOnce();
  clock.step(4 * MIN);
  rt.add('pulled'); // first seen now, never used
  const r = await gc.runOnce();
  // The kubelet's freeOldImages compares last use only (zero time for never used), not first detection.
  assert.deepEqual(r.removedByAge, ['pulled']);
});

test('maximum age 0 is off; removal errors are the kubelet\'s and the rest is still tried; the per-pass cap covers age removals', async () => {
  const off = setup(0);
  off.rt.add('old');
  await off.gc.runOnce();
  off.clock.step(1000 * MIN);
  assert.deepEqual((await off.gc.runOnce()).removed, []);

  const { clock, rt, gc } = setup(MIN);
  rt.add('a'); rt.add('b'); rt.add('c');
  rt.failRemove.add('a');
  clock.step(2 * MIN);
  const r = await gc.runOnce();
  assert.equal(r.ok, false);
  assert.equal(r.error, 'wanted to free images older than 1m0s, encountered errors in image deletion: cannot remove a');
  assert.deepEqual(rt.removed, ['b', 'c']);

  const capped = setup(MIN, 2);
  for (const id of ['a', 'b', 'c', 'd', 'e']) capped.rt.add(id);
  capped.clock.step(2 * MIN);
  assert.equal((await capped.gc.runOnce()).removedByAge.length, 2);
  assert.equal((await capped.gc.runOnce()).removedByAge.length, 2);
  assert.equal((await capped.gc.runOnce()).removedByAge.length, 1);
});

test('config: --image-maximum-gc-age and imageMaximumGCAge, default 0, the kubelet\'s validation message', () => {
  const parse = (argv: string[], file?: string) => {
    const c = parseAgentConfig(['--pod-manifest-path', '/m', ...argv, ...(file !== undefined ? ['--config', '/cfg.yaml'] : [])], () => file ?? '');
    assert.notEqual(c, 'help');
    return c as AgentConfig;
  };
  assert.equal(parse([]).imageMaximumGCAgeMs, 0);
  assert.equal(parse(['--image-maximum-gc-age', '1h']).imageMaximumGCAgeMs, 3_600_000);
  assert.equal(parse([], 'imageMaximumGCAge: 30m\n').imageMaximumGCAgeMs, 1_800_000);
  assert.throws(() => parse(['--image-maximum-gc-age', '1m']), /--image-maximum-gc-age: invalid configuration: imageMaximumGCAge 1m0s must be greater than imageMinimumGCAge 2m0s/);
  assert.throws(() => parse(['--image-maximum-gc-age=-5m']), /--image-maximum-gc-age: must be a duration/);
  assert.throws(() => parse(['--image-maximum-gc-age', 'forever']), /--image-maximum-gc-age: must be a duration/);
});
