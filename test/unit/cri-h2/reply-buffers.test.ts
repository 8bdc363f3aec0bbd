import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildUnaryMethods } from '../../../src/shared/cri/cri-methods.js';
import { ReplyBuffers } from '../../../src/shared/cri/h2/reply-buffers.js';
import { responseMessage } from './h2-test-peers.js';

test('ReplyBuffers: one buffer held and lent to one borrower at a time; a concurrent borrower gets its own; the larger is kept', () => {
  const r = new ReplyBuffers();
  const first = r.borrow(100_000);
  assert.ok(first.length >= 100_000);
  const concurrent = r.borrow(100_000);
  assert.notEqual(concurrent, first, 'lent out: a fresh one');
  r.giveBack(first);
  assert.equal(r.borrow(90_000), first, 'held one lent again');
  r.giveBack(first);
  r.giveBack(concurrent);
  assert.equal(r.heldBytes, Math.max(first.length, concurrent.length));
  const bigger = r.borrow(first.length * 2);
  assert.ok(bigger.length >= first.length * 2, 'too small: a fresh one');
  r.giveBack(bigger);
  assert.equal(r.heldBytes, bigger.length, 'the larger kept');
});

test('ReplyBuffers: a held buffer far larger than asked (a node that drained) is given up', () => {
  const r = new ReplyBuffers();
  r.giveBack(r.borrow(1_000_000));
  const small = r.borrow(10_000);
  assert.ok(small.length < 100_000);
  assert.equal(r.heldBytes, 0, 'the large one dropped');
  r.giveBack(small);
  assert.equal(r.heldBytes, small.length);
});

test('the methods whose replies may be gathered in a reused buffer (copiesReply) decode to objects that keep nothing of the reply bytes', () => {
  const methods = buildUnaryMethods();
  const lending = [...methods.values()].filter((m) => m.copiesReply).map((m) => m.name).sort();
  assert.deepEqual(lending, ['ListContainers', 'ListPodSandbox']);
  // An empty id is left out (protobufjs would write an explicit '' on the wire).
  const full = (i: number, id: string) => ({
    ...(id === '' ? {} : { id }), podSandboxId: `s${i}`, metadata: { name: `c${i}`, attempt: 1, uid: `u${i}`, namespace: 'ns' }, state: i % 2 ? 'CONTAINER_RUNNING' : 'SANDBOX_READY',
    image: { image: 'busybox', annotations: { a: 'b' }, userSpecifiedImage: 'busybox:1', runtimeHandler: 'h' }, imageRef: 'sha256:' + 'a'.repeat(64),
    createdAt: '1700000000000000000', labels: { l: `v${i}` }, annotations: { x: `y${i}` }, runtimeHandler: 'runc',
  });
  for (const name of lending) {
    const field = name === 'ListContainers' ? 'containers' : 'items';
    const m = methods.get(name)!;
    // The memo's walk, then a reply it cannot walk (an item without an id): the plain deserializer on the whole buffer.
    for (const ids of [['a', 'b', 'c'], ['a', '', 'c']]) {
      const reply = Buffer.from(responseMessage(name, { [field]: ids.map((id, i) => full(i, id)) }));
      const decoded = m.deserialize(reply);
      const before = JSON.stringify(decoded);
      reply.fill(0xff);
      assert.equal(JSON.stringify(decoded), before, `${name} with ids ${ids.join(',')}: the decoded reply changed when its bytes were overwritten`);
    }
  }
});
