/**
 * The list-response memo (src/shared/cri/cri-list-memo.ts): item for item the same answer as
 * proto-loader's own deserializer, unchanged items reused (and frozen), changed ones decoded,
 * anything unexpected handed to the plain deserializer, the memo bounded; and the CriClient
 * really decodes its ListContainers / ListPodSandbox answers through it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as grpc from '@grpc/grpc-js';
import { CriListMemo, MEMO_KEEP_RESPONSES } from '../../src/shared/cri/cri-list-memo.js';
import { loadCriProto } from '../../src/shared/cri/cri-proto.js';
import { runPod, startHarness } from './simruntime/sim-harness.js';

const listContainers = loadCriProto().runtime['ListContainers'] as grpc.MethodDefinition<unknown, unknown>;
const encode = (res: object): Buffer => listContainers.responseSerialize(res);
const plain = (buf: Buffer): unknown => listContainers.responseDeserialize(buf);

function container(id: string, state = 'CONTAINER_RUNNING', attempt = 0): object {
  return {
    id,
    podSandboxId: `sb-${id}`,
    metadata: { name: `c-${id}`, attempt },
    image: { image: 'docker.io/library/busybox:1' },
    imageRef: 'sha256:abc',
    state,
    createdAt: '1700000000000000000',
    labels: { 'io.kubernetes.pod.uid': `uid-${id}` },
    annotations: { 'io.kubernetes.container.restartCount': String(attempt) },
  };
}

test('same answer as the plain deserializer; unchanged items reused, changed ones decoded', () => {
  const memo = new CriListMemo({ deserialize: plain, listField: 'containers' });
  const first = encode({ containers: [container('a'), container('b'), container('c')] });
  const r1 = memo.deserialize(first) as { containers: object[] };
  assert.deepEqual(r1, plain(first));
  assert.deepEqual(memo.stats, { decoded: 3, reused: 0, fallbacks: 0 });

  // b changed state, d is new, c is gone.
  const second = encode({ containers: [container('a'), container('b', 'CONTAINER_EXITED'), container('d')] });
  const r2 = memo.deserialize(second) as { containers: object[] };
  assert.deepEqual(r2, plain(second));
  assert.equal(r2.containers[0], r1.containers[0], 'a: the very object decoded last time');
  assert.notEqual(r2.containers[1], r1.containers[1], 'b changed: decoded again');
  assert.equal((r2.containers[1] as { state: string }).state, 'CONTAINER_EXITED');
  assert.deepEqual(memo.stats, { decoded: 5, reused: 1, fallbacks: 0 });

  // An empty list is an empty list.
  assert.deepEqual(memo.deserialize(encode({ containers: [] })), plain(encode({ containers: [] })));
});

test('memoized objects are frozen: a consumer cannot corrupt the next answer', () => {
  const memo = new CriListMemo({ deserialize: plain, listField: 'containers' });
  const buf = encode({ containers: [container('a')] });
  const r = memo.deserialize(buf) as { containers: Array<{ state: string; labels: Record<string, string> }> };
  const c = r.containers[0]!;
  assert.throws(() => { c.state = 'CONTAINER_EXITED'; }, TypeError);
  assert.throws(() => { c.labels['x'] = 'y'; }, TypeError);
  const again = memo.deserialize(buf) as { containers: Array<{ state: string }> };
  assert.equal(again.containers[0]!.state, 'CONTAINER_RUNNING');
});

test('unexpected wire shapes go to the plain deserializer whole', () => {
  const memo = new CriListMemo({ deserialize: plain, listField: 'containers' });
  // An unknown top-level field 2 (varint 7) after a valid item.
  const withExtra = Buffer.concat([encode({ containers: [container('a')] }), Buffer.from([0x10, 0x07])]);
  assert.deepEqual(memo.deserialize(withExtra), plain(withExtra));
  // An item without an id.
  const { id: _id, ...withoutId } = container('a') as { id: string };
  const noId = encode({ containers: [withoutId] });
  assert.deepEqual(memo.deserialize(noId), plain(noId));
  assert.equal(memo.stats.fallbacks, 2);
  // A truncated length: the plain deserializer's verdict (it throws), not a wrong list.
  const truncated = encode({ containers: [container('a')] }).subarray(0, 10);
  assert.throws(() => plain(truncated));
  assert.throws(() => memo.deserialize(truncated));
  assert.equal(memo.size, 0, 'nothing memoized from answers it did not decode itself');
});

test(`an item not seen in ${MEMO_KEEP_RESPONSES} responses is dropped (the memo is bounded)`, () => {
  const memo = new CriListMemo({ deserialize: plain, listField: 'containers' });
  memo.deserialize(encode({ containers: [container('old'), container('keep')] }));
  assert.equal(memo.size, 2);
  // Responses that differ (keep's attempt moves); an identical repeat is not walked (below).
  for (let i = 1; i < MEMO_KEEP_RESPONSES; i++) memo.deserialize(encode({ containers: [container('keep', 'CONTAINER_RUNNING', i)] }));
  assert.equal(memo.size, 2, 'still within the window');
  memo.deserialize(encode({ containers: [container('keep', 'CONTAINER_RUNNING', MEMO_KEEP_RESPONSES)] }));
  assert.equal(memo.size, 1, 'old dropped');
});

test('a response identical to the last one returns its items again without a walk, in a fresh array', () => {
  const memo = new CriListMemo({ deserialize: plain, listField: 'containers' });
  const buf = encode({ containers: [container('a'), container('b')] });
  const r1 = memo.deserialize(buf) as { containers: object[] };
  const r2 = memo.deserialize(Buffer.from(buf)) as { containers: object[] };
  assert.deepEqual(r2, plain(buf));
  assert.notEqual(r2.containers, r1.containers, 'a fresh array each time');
  assert.equal(r2.containers[0], r1.containers[0]);
  assert.equal(r2.containers[1], r1.containers[1]);
  r2.containers.reverse();
  const r3 = memo.deserialize(buf) as { containers: object[] };
  assert.deepEqual(r3, plain(buf), 'a caller reordering its array does not change the next answer');
  assert.deepEqual(memo.stats, { decoded: 2, reused: 4, fallbacks: 0 });
  // One byte different: walked again (b decoded anew, a reused).
  const changed = encode({ containers: [container('a'), container('b', 'CONTAINER_EXITED')] });
  const r4 = memo.deserialize(changed) as { containers: Array<{ state: string }> };
  assert.deepEqual(r4, plain(changed));
  assert.equal(r4.containers[0], r1.containers[0]);
  assert.equal(r4.containers[1]!.state, 'CONTAINER_EXITED');
  assert.deepEqual(memo.stats, { decoded: 3, reused: 5, fallbacks: 0 });
});

test('the CriClient decodes its list answers through the memo (frozen, reused across calls)', async () => {
  const h = await startHarness({});
  try {
    const { sandboxId, containerId } = await runPod(h, ['sleep', '100']);
    const a = await h.client.listPodSandbox();
    const b = await h.client.listPodSandbox();
    assert.equal(a.length, 1);
    assert.equal(a[0]!.id, sandboxId);
    assert.ok(Object.isFrozen(a[0]), 'a memoized (frozen) object');
    assert.equal(b[0], a[0], 'the second answer reuses the first one\'s object');
    const c1 = await h.client.listContainers();
    const c2 = await h.client.listContainers();
    assert.equal(c1[0]!.id, containerId);
    assert.equal(c2[0], c1[0], 'ListContainers goes through it too');
    await h.client.stopContainer(containerId, 0);
    await h.client.stopPodSandbox(sandboxId);
    assert.equal((await h.client.listPodSandbox())[0]!.state, 'SANDBOX_NOTREADY', 'a changed item is decoded again');
    assert.equal((await h.client.listContainers())[0]!.state, 'CONTAINER_EXITED');
  } finally {
    await h.close();
  }
});
