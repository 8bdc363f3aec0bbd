import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplyBuffers } from '../../../src/shared/cri/h2/reply-buffers.js';

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
