/**
 * MirrorPodManager reconcile with fakes (creator, deleter, status sink) and a fake clock: create
 * with the mirror annotation and one controller ownerReference; no duplicate create while the
 * watch has not shown it; a mirror being deleted or of an old hash is deleted then re-created; an
 * orphan is deleted; statuses go to the current mirror (a new mirror gets the newest status);
 * the API set is split (mirrors never reach the pod sink); failures back off per name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { ApiError } from '../../../src/main/apiserver/api-errors.js';
import type { PodRef } from '../../../src/main/apiserver/api-roles.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { MirrorPodManager } from '../../../src/main/mirror/mirror-pods.js';

function staticPod(name: string, hash: string): V1Pod {
  return {
    metadata: { name, namespace: 'default', uid: hash, annotations: { 'kubernetes.io/config.hash': hash, 'kubernetes.io/config.source': 'file' } },
    spec: { containers: [{ name: 'c', image: 'i' }], nodeName: 'n1' },
  };
}

function mirrorOf(p: V1Pod, uid: string, extra: Partial<V1Pod['metadata']> = {}): V1Pod {
  return { ...p, metadata: { ...p.metadata, uid, annotations: { ...p.metadata!.annotations, 'kubernetes.io/config.mirror': p.metadata!.annotations!['kubernetes.io/config.hash']! }, ...extra }, status: { phase: 'Pending' } };
}

function setup() {
  const clock = new FakeClock();
  const created: Record<string, unknown>[] = [];
  const deleted: PodRef[] = [];
  const statuses: { uid: string; phase: string | undefined }[] = [];
  const forgotten: string[] = [];
  const fail: { create: ApiError[]; del: ApiError[] } = { create: [], del: [] };
  let desired: V1Pod[] = [];
  let nodeUid: string | undefined = 'node-uid';
  let n = 0;
  const m = new MirrorPodManager({
    creator: { createPod: async (pod) => { created.push(pod); const e = fail.create.shift(); if (e) throw e; return { uid: `c${++n}` }; } },
    deleter: { deletePod: async (ref) => { deleted.push(ref); const e = fail.del.shift(); if (e) throw e; } },
    statusSink: { setStatus: (pod: V1Pod, s: V1PodStatus) => statuses.push({ uid: pod.metadata!.uid!, phase: s.phase }), podTerminated: () => {}, forget: (uid: string) => forgotten.push(uid) },
    desired: () => desired, nodeName: 'n1', nodeUid: () => nodeUid, clock, logger: silentLogger,
  });
  return { clock, m, created, deleted, statuses, forgotten, fail, setDesired: (d: V1Pod[]) => (desired = d), setNodeUid: (u: string | undefined) => (nodeUid = u) };
}

test('creates the mirror once (annotation, one controller ownerReference), not again before the watch shows it', async () => {
  const s = setup();
  const web = staticPod('web-n1', 'h1');
  s.setDesired([web]);
  s.setNodeUid(undefined);
  s.m.reconcile();
  await s.m.idle();
  assert.equal(s.created.length, 0, 'no create before the Node UID is known');
  s.setNodeUid('node-uid');
  s.m.reconcile();
  await s.m.idle();
  assert.equal(s.created.length, 1);
  const meta = s.created[0]!['metadata'] as { uid?: string; annotations: Record<string, string>; ownerReferences: unknown[] };
  assert.equal(meta.uid, undefined);
  assert.equal(meta.annotations['kubernetes.io/config.mirror'], 'h1');
  assert.deepEqual(meta.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid', controller: true }]);
  s.m.reconcile();
  s.m.setObserved([]);
  await s.m.idle();
  assert.equal(s.created.length, 1, 'not created twice while the watch lags');
  s.m.setObserved([mirrorOf(web, 'm1')]);
  await s.m.idle();
  assert.equal(s.created.length, 1);
  assert.equal(s.deleted.length, 0);
});

test('a mirror deleted by a user (deletionTimestamp) is deleted and re-created once gone', async () => {
  const s = setup();
  const web = staticPod('web-n1', 'h1');
  s.setDesired([web]);
  s.m.setObserved([mirrorOf(web, 'm0', { deletionTimestamp: new Date() })]);
  await s.m.idle();
  assert.deepEqual(s.deleted, [{ namespace: 'default', name: 'web-n1', uid: 'm0' }]);
  assert.equal(s.created.length, 0, 'the name is still taken');
  s.m.setObserved([]);
  await s.m.idle();
  assert.equal(s.created.length, 1);
});

test('a changed manifest (new hash) replaces the mirror; a mirror without a static pod is deleted', async () => {
  const s = setup();
  const v1 = staticPod('web-n1', 'h1');
  const v2 = staticPod('web-n1', 'h2');
  s.setDesired([v2]);
  s.m.setObserved([mirrorOf(v1, 'm0'), mirrorOf(staticPod('gone-n1', 'h9'), 'm9')]);
  await s.m.idle();
  assert.deepEqual(s.deleted.map((r) => r.uid).sort(), ['m0', 'm9']);
  s.m.setObserved([]);
  await s.m.idle();
  assert.equal((s.created[0]!['metadata'] as { annotations: Record<string, string> }).annotations['kubernetes.io/config.mirror'], 'h2');
});

test('statuses go to the current mirror; a new mirror gets the newest status; a stale mirror none', async () => {
  const s = setup();
  const web = staticPod('web-n1', 'h1');
  s.setDesired([web]);
  s.m.setStatus(web, { phase: 'Running' });
  assert.deepEqual(s.statuses, [], 'no mirror yet');
  s.m.setObserved([mirrorOf(web, 'm1')]);
  await s.m.idle();
  assert.deepEqual(s.statuses, [{ uid: 'm1', phase: 'Running' }]);
  s.m.setStatus(web, { phase: 'Succeeded' });
  assert.deepEqual(s.statuses.at(-1), { uid: 'm1', phase: 'Succeeded' });
  // The user deletes it; the replacement gets the newest status, and the old one is forgotten.
  s.m.setObserved([]);
  assert.deepEqual(s.forgotten, ['m1']);
  await s.m.idle();
  assert.equal(s.created.length, 1, 're-created');
  s.m.setObserved([mirrorOf(web, 'c1')]);
  assert.deepEqual(s.statuses.at(-1), { uid: 'c1', phase: 'Succeeded' });
  const n = s.statuses.length;
  s.m.setObserved([mirrorOf(web, 'm3', { deletionTimestamp: new Date() })]);
  s.m.setStatus(web, { phase: 'Running' });
  assert.equal(s.statuses.length, n, 'a mirror being deleted gets no status');
  await s.m.idle();
});

test('the API set is split: mirror pods never reach the pod sink', () => {
  const s = setup();
  const got: V1Pod[][] = [];
  const sink = s.m.splitSink({ set: (pods) => got.push([...pods]) });
  const api: V1Pod = { metadata: { name: 'a', namespace: 'x', uid: 'u' }, spec: { containers: [] } };
  sink.set([api, mirrorOf(staticPod('web-n1', 'h1'), 'm1')]);
  assert.deepEqual(got, [[api]]);
});

test('a refused create backs off per name (no retry on every reconcile)', async () => {
  const s = setup();
  s.setDesired([staticPod('web-n1', 'h1')]);
  s.fail.create.push(new ApiError('ERR_API_FORBIDDEN', 'pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods', 403));
  s.m.reconcile();
  await s.m.idle();
  s.m.reconcile();
  s.m.reconcile();
  await s.m.idle();
  assert.equal(s.created.length, 1, 'backing off');
  s.clock.step(2_000);
  s.m.reconcile();
  await s.m.idle();
  assert.equal(s.created.length, 2, 'retried after the backoff');
});
