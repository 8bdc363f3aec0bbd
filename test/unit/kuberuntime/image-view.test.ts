/**
 * The per-thread image view (workers/kuberuntime/image-view.ts) through the ImagePuller that
 * the syncer wires it into: which ImageStatus calls it spares and when it asks again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Container } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { Image, ImageStatusResponse } from '../../../src/shared/cri/cri-types.js';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import { Backoff } from '../../../workers/kuberuntime/backoff.js';
import { ImagePuller } from '../../../workers/kuberuntime/image-puller.js';
import { ImageView } from '../../../workers/kuberuntime/image-view.js';

function image(id: string, tag: string): Image {
  return { id, repoTags: [tag], repoDigests: [], size: '1', username: '', spec: null, pinned: false };
}

/** An ImageService whose ImageStatus answers are released by the test (deferred). */
function fakeImages() {
  const present = new Map<string, Image>();
  const calls: string[] = [];
  const pending: (() => void)[] = [];
  let hold = false;
  return {
    present, calls,
    hold(on: boolean) { hold = on; },
    release() { for (const r of pending.splice(0)) r(); },
    imageStatus(spec: { image: string }): Promise<ImageStatusResponse> {
      calls.push(`ImageStatus ${spec.image}`);
      const answer = (): ImageStatusResponse => ({ image: present.get(spec.image) ?? null, info: {} });
      if (!hold) return Promise.resolve(answer());
      return new Promise((resolve) => pending.push(() => resolve(answer())));
    },
    async pullImage(req: { image: { image: string } }): Promise<string> {
      calls.push(`PullImage ${req.image.image}`);
      const img = image(`sha256:${req.image.image}`, req.image.image);
      present.set(req.image.image, img);
      return img.id;
    },
    listImages: async () => [...present.values()],
    removeImage: async () => {},
    imageFsInfo: async () => ({ imageFilesystems: [], containerFilesystems: [] }),
  };
}

function setup(ttlMs = 30_000) {
  const clock = new FakeClock();
  const images = fakeImages();
  const view = new ImageView({ monotonic: () => clock.monotonic(), ttlMs });
  const puller = new ImagePuller({ images: images as never, backoff: new Backoff({ initialMs: 10_000, maxMs: 300_000, clock }), view });
  const ensure = (c: V1Container, signal = new AbortController().signal) => puller.ensureImageExists('uid', c, {} as never, signal);
  return { clock, images, view, puller, ensure };
}

const app = (img: string, extra: Partial<V1Container> = {}): V1Container => ({ name: 'app', image: img, ...extra });

test('image view: one ImageStatus per image per TTL; the answer carries what a container of it reports', async () => {
  const h = setup();
  h.images.present.set('busybox:1', { ...image('sha256:b', 'docker.io/library/busybox:1'), repoDigests: ['busybox@sha256:d'] });
  const first = await h.ensure(app('busybox:1'));
  assert.deepEqual(first, { ok: true, imageRef: 'sha256:b', facts: { id: 'sha256:b', statusImage: 'docker.io/library/busybox:1', statusImageRef: 'busybox@sha256:d', user: { uid: 0 } } });
  for (let i = 0; i < 5; i++) assert.equal((await h.ensure(app('busybox:1'))).ok, true);
  assert.deepEqual(h.images.calls, ['ImageStatus busybox:1']);
  h.clock.step(30_000);
  await h.ensure(app('busybox:1'));
  assert.deepEqual(h.images.calls, ['ImageStatus busybox:1', 'ImageStatus busybox:1'], 'asked again once the answer is 30 s old');
});

test('image view: an absent image is never remembered; a pull makes the next lookup ask again; Always always pulls', async () => {
  const h = setup();
  assert.equal((await h.ensure(app('nginx:1'))).ok, true);
  assert.deepEqual(h.images.calls, ['ImageStatus nginx:1', 'PullImage nginx:1']);
  const after = await h.ensure(app('nginx:1'));
  assert.ok(after.ok && after.facts, 'the re-read after the pull has the facts');
  await h.ensure(app('nginx:1'));
  assert.deepEqual(h.images.calls.slice(2), ['ImageStatus nginx:1'], 'then the view answers');
  h.images.calls.length = 0;
  await h.ensure(app('nginx:1', { imagePullPolicy: 'Always' }));
  assert.deepEqual(h.images.calls, ['ImageStatus nginx:1', 'PullImage nginx:1'], 'Always: status and pull as before');
  h.images.calls.length = 0;
  const never = await h.ensure(app('gone:1', { imagePullPolicy: 'Never' }));
  assert.equal(never.ok, false);
  await h.ensure(app('gone:1', { imagePullPolicy: 'Never' }));
  assert.deepEqual(h.images.calls, ['ImageStatus gone:1', 'ImageStatus gone:1'], 'absence is not cached');
});

test('image view: the runtime reporting the image missing (CreateContainer NotFound) forgets it', async () => {
  const h = setup();
  h.images.present.set('busybox:1', image('sha256:b', 'busybox:1'));
  await h.ensure(app('busybox:1'));
  h.images.present.delete('busybox:1');
  h.puller.imageMissing('sha256:b');
  const r = await h.ensure(app('busybox:1', { imagePullPolicy: 'Never' }));
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.failure.reason, 'ErrImageNeverPull');
  assert.equal(h.view.size, 0);
});

test('image view: concurrent lookups of one image share one ImageStatus; an aborted pod does not fail the others', async () => {
  const h = setup();
  h.images.present.set('busybox:1', image('sha256:b', 'busybox:1'));
  h.images.hold(true);
  const aborted = new AbortController();
  const a = h.ensure(app('busybox:1'), aborted.signal);
  const b = h.ensure(app('busybox:1'));
  const c = h.ensure(app('busybox:1'));
  aborted.abort(new CriError('ERR_CRI_CANCELLED', 'sync', 'killed'));
  await assert.rejects(a, (e: unknown) => e instanceof CriError && e.code === 'ERR_CRI_CANCELLED');
  h.images.release();
  assert.deepEqual([(await b).ok, (await c).ok], [true, true]);
  assert.deepEqual(h.images.calls, ['ImageStatus busybox:1']);
});

test('image view: ttlMs 0 asks every time; bad options are rejected up front; the number of names is bounded', async () => {
  const h = setup(0);
  h.images.present.set('busybox:1', image('sha256:b', 'busybox:1'));
  await h.ensure(app('busybox:1'));
  await h.ensure(app('busybox:1'));
  assert.equal(h.images.calls.length, 2);
  assert.throws(() => new ImageView({ monotonic: () => 0, ttlMs: -1 }), /ttlMs/);
  assert.throws(() => new ImageView({ monotonic: () => 0, maxEntries: 0 }), /maxEntries/);
  const v = new ImageView({ monotonic: () => 0, maxEntries: 2 });
  for (const n of ['a', 'b', 'c']) v.record(n, image(`sha256:${n}`, n), n);
  assert.equal(v.size, 2);
  assert.equal(v.lookup('a'), undefined, 'the oldest name went first');
});
