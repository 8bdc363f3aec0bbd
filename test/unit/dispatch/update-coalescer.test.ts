import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coalesceUpdates, UpdateCoalescer } from '../../../src/main/dispatch/update-coalescer.js';
import type { PodUpdateMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';

const pod = (uid: string) => ({ metadata: { uid } });
const u = (uid: string, updateType: PodUpdateMessage['updateType'], extra: Partial<PodUpdateMessage> = {}): PodUpdateMessage => ({ kind: 'update', uid, updateType, pod: pod(uid), ...extra });

test('newest wins, a create stays a create, stamps keep the later time', () => {
  const c = coalesceUpdates(u('a', 'create', { statusNotBeforeMs: 10 }), u('a', 'sync', { statusNotBeforeMs: 5 }));
  assert.equal(c.updateType, 'create');
  assert.equal(c.statusNotBeforeMs, 10);
  assert.equal(coalesceUpdates(u('a', 'update'), u('a', 'sync')).updateType, 'sync');
});

test('a kill is never replaced by a later non-kill; two kills merge to the stronger one', () => {
  const k = u('a', 'kill', { kill: { removed: false, reason: 'deleted', gracePeriodSeconds: 30 } });
  assert.deepEqual(coalesceUpdates(k, u('a', 'sync')).kill, k.kill);
  assert.equal(coalesceUpdates(k, u('a', 'sync')).updateType, 'kill');
  const merged = coalesceUpdates(k, u('a', 'kill', { kill: { removed: true, reason: 'removed from source', gracePeriodSeconds: 5, keepLogs: true } }));
  assert.deepEqual(merged.kill, { removed: true, reason: 'removed from source', gracePeriodSeconds: 5 });
  assert.equal(coalesceUpdates(u('a', 'sync'), k).updateType, 'kill');
});

test('the buffer holds one update per pod, in first-pending order', () => {
  const b = new UpdateCoalescer();
  for (let i = 0; i < 1000; i++) b.add(u(`p${i % 10}`, 'sync'));
  assert.equal(b.size, 10);
  assert.deepEqual(b.drain().map((m) => m.uid), Array.from({ length: 10 }, (_, i) => `p${i}`));
  assert.equal(b.size, 0);
});

test('a PLEG-only sync stays PLEG-only only when merged with another PLEG-only sync', () => {
  const pleg = u('a', 'sync', { plegOnly: true });
  assert.equal(coalesceUpdates(pleg, u('a', 'sync', { plegOnly: true })).plegOnly, true);
  assert.equal(coalesceUpdates(u('a', 'sync'), pleg).plegOnly, undefined, 'a pending resync (probe, due work) is not erased');
  assert.equal(coalesceUpdates(u('a', 'create'), pleg).plegOnly, undefined, 'nor a create');
  assert.equal(coalesceUpdates(pleg, u('a', 'update')).plegOnly, undefined, 'a later config update is a full sync');
  assert.equal(coalesceUpdates(u('a', 'kill', { kill: { removed: false, reason: 'x' } }), pleg).plegOnly, undefined, 'a kill absorbs it');
});
