import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PodStartGate, type StartSlotRelease } from '../../../workers/pod-start-gate.js';

/** Records the order grants arrive in; each acquire's promise settles through a real completion. */
function track(gate: PodStartGate, name: string, order: string[], signal?: AbortSignal): Promise<StartSlotRelease> {
  return gate.acquire(signal).then((r) => {
    order.push(name);
    return r;
  });
}

test('at most limit holders; waiters are admitted oldest first as slots free', async () => {
  const gate = new PodStartGate(2);
  const order: string[] = [];
  const a = track(gate, 'a', order);
  const b = track(gate, 'b', order);
  const c = track(gate, 'c', order);
  const d = track(gate, 'd', order);
  const ra = await a;
  await b;
  assert.deepEqual(order, ['a', 'b']);
  assert.equal(gate.held, 2);
  assert.equal(gate.waiting, 2);
  ra();
  ra(); // idempotent: frees one slot only
  const rc = await c;
  assert.deepEqual(order, ['a', 'b', 'c']);
  assert.equal(gate.held, 2);
  assert.equal(gate.waiting, 1);
  rc();
  await d;
  assert.deepEqual(order, ['a', 'b', 'c', 'd']);
  assert.equal(gate.waiting, 0);
});

test('a new acquire does not overtake older waiters even when a slot is free at that instant', async () => {
  const gate = new PodStartGate(1);
  const order: string[] = [];
  const r1 = await track(gate, 'first', order);
  const older = track(gate, 'older', order);
  r1();
  const newer = track(gate, 'newer', order);
  (await older)();
  await newer;
  assert.deepEqual(order, ['first', 'older', 'newer']);
});

test('an aborted wait rejects with the reason, leaves the queue and never holds a slot', async () => {
  const gate = new PodStartGate(1);
  const r1 = await gate.acquire();
  const ac = new AbortController();
  const aborted = gate.acquire(ac.signal);
  const order: string[] = [];
  const next = track(gate, 'next', order);
  ac.abort(new Error('pod killed'));
  await assert.rejects(aborted, /pod killed/);
  assert.equal(gate.waiting, 1);
  r1();
  await next;
  assert.deepEqual(order, ['next']);
  assert.equal(gate.held, 1);
  const pre = new AbortController();
  pre.abort(new Error('already'));
  await assert.rejects(gate.acquire(pre.signal), /already/);
});

test('limit 0 never waits; a bad limit is refused', async () => {
  const gate = new PodStartGate(0);
  const rs = await Promise.all(Array.from({ length: 100 }, () => gate.acquire()));
  assert.equal(gate.held, 100);
  rs.forEach((r) => r());
  assert.equal(gate.held, 0);
  assert.throws(() => new PodStartGate(-1), RangeError);
  assert.throws(() => new PodStartGate(1.5), RangeError);
});
