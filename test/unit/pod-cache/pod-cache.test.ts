import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attachPodCache, createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { CacheError, type CacheErrorCode } from '../../../src/shared/pod-cache/pod-cache-errors.js';
import type { CacheEntry } from '../../../src/shared/pod-cache/pod-cache.js';
import { emptyPodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { container, podUid, typicalPodStatus, wideStatus } from './pod-status-fixtures.js';

const hasCode = (code: CacheErrorCode) => (e: unknown): boolean => e instanceof CacheError && e.code === code;

/** Tracks a promise's settlement without waiting on it. */
function track<T>(p: Promise<T>): { settled: () => boolean; value: () => T | undefined; error: () => unknown } {
  let settled = false;
  let value: T | undefined;
  let error: unknown;
  p.then((v) => { settled = true; value = v; }, (e: unknown) => { settled = true; error = e; });
  return { settled: () => settled, value: () => value, error: () => error };
}

test('set then get returns the status, error and timestamp; absent pods are undefined', () => {
  const { reader, writer } = createPodCache({ capacity: 8 });
  assert.equal(reader.get(podUid(1)), undefined);
  assert.equal(reader.globalTimestampMs(), undefined);
  const st = typicalPodStatus(1, 0);
  assert.equal(writer.set(podUid(1), st, null, 1000), 'stored');
  assert.deepEqual(reader.get(podUid(1)), { status: st, error: null, timestampMs: 1000 });
  const err = { code: 'ERR_CRI_DEADLINE_EXCEEDED', message: 'slow' };
  writer.set(podUid(2), emptyPodStatus(podUid(2)), err, 1001);
  assert.deepEqual(reader.get(podUid(2))?.error, err);
  assert.equal(reader.stats().slotsUsed, 2);
});

test('newer timestamp wins; an equal timestamp overwrites (later writer wins)', () => {
  const { reader, writer } = createPodCache({ capacity: 8 });
  const uid = podUid(1);
  assert.equal(writer.set(uid, typicalPodStatus(1, 2), null, 200), 'stored');
  assert.equal(writer.set(uid, typicalPodStatus(1, 1), null, 100), 'stale');
  assert.equal(reader.get(uid)?.status.name, 'pod-1-v2');
  assert.equal(writer.set(uid, typicalPodStatus(1, 3), null, 200), 'stored');
  assert.equal(reader.get(uid)?.status.name, 'pod-1-v3');
});

test('getNewerThan: pending until the entry or the global timestamp is strictly newer', async () => {
  const { reader, writer } = createPodCache({ capacity: 8 });
  const a = podUid(1);
  const b = podUid(2);
  writer.set(a, typicalPodStatus(1, 0), null, 100);
  // Already newer: resolves at once.
  assert.equal((await reader.getNewerThan(a, 99)).timestampMs, 100);

  const waiting = reader.getNewerThan(a, 100);
  const wait = track(waiting);
  // A witness that resolves on the same write proves the waiter was re-checked and still refused.
  writer.set(b, typicalPodStatus(2, 0), null, 100);
  await reader.getNewerThan(b, 99);
  writer.set(a, typicalPodStatus(1, 1), null, 100); // equal, not newer
  const witness1 = reader.getNewerThan(b, 99);
  await witness1;
  writer.updateTime(100); // global equal, not newer
  await reader.getNewerThan(b, 99);
  assert.equal(wait.settled(), false);
  assert.equal(reader.pendingWaits, 1);

  writer.updateTime(101); // global newer: the (older) entry is now good enough
  const got = await reader.getNewerThan(a, 100);
  assert.equal(got.timestampMs, 100);
  assert.equal(got.status.name, 'pod-1-v1');
  // The earlier waiter resolves on the same wake-up (awaited: its completion signal).
  assert.equal((await waiting).status.name, 'pod-1-v1');
  assert.equal(reader.pendingWaits, 0);
});

test('getNewerThan resolves on a newer entry before any updateTime', async () => {
  const { reader, writer } = createPodCache({ capacity: 8 });
  const a = podUid(1);
  const p = reader.getNewerThan(a, 500);
  writer.set(a, typicalPodStatus(1, 4), null, 501);
  const e = await p;
  assert.equal(e.timestampMs, 501);
  assert.equal(e.status.name, 'pod-1-v4');
});

test('a pod without an entry resolves with an empty status stamped with the global time', async () => {
  const { reader, writer } = createPodCache({ capacity: 8 });
  const uid = podUid(9);
  const p = reader.getNewerThan(uid, 1000);
  writer.updateTime(1001);
  const e: CacheEntry = await p;
  assert.deepEqual(e, { status: emptyPodStatus(uid), error: null, timestampMs: 1001 });
});

test('updateTime never moves the global timestamp back', () => {
  const { reader, writer } = createPodCache({ capacity: 8 });
  writer.updateTime(50);
  writer.updateTime(40);
  assert.equal(reader.globalTimestampMs(), 50);
});

test('an aborted getNewerThan rejects with the reason and stops waiting', async () => {
  const { reader } = createPodCache({ capacity: 8 });
  const ac = new AbortController();
  const p = reader.getNewerThan(podUid(1), 10, ac.signal);
  assert.equal(reader.pendingWaits, 1);
  ac.abort(new Error('killed'));
  await assert.rejects(p, /killed/);
  assert.equal(reader.pendingWaits, 0);
  await assert.rejects(reader.getNewerThan(podUid(1), 10, ac.signal), /killed/);
});

test('getNewerThanSync returns an entry when ready and undefined after the timeout', () => {
  const { reader, writer } = createPodCache({ capacity: 8 });
  assert.equal(reader.getNewerThanSync(podUid(1), 10, 0), undefined);
  writer.updateTime(11);
  assert.equal(reader.getNewerThanSync(podUid(1), 10, 0)?.timestampMs, 11);
});

test('capacity exhaustion (no growth allowed) throws ERR_CACHE_FULL, counts it, and leaves existing entries intact', () => {
  const { reader, writer } = createPodCache({ capacity: 3 });
  for (let p = 0; p < 3; p++) writer.set(podUid(p), typicalPodStatus(p, 0), null, 10);
  assert.throws(() => writer.set(podUid(3), typicalPodStatus(3, 0), null, 10), hasCode('ERR_CACHE_FULL'));
  assert.equal(reader.stats().fullTotal, 1);
  assert.equal(reader.get(podUid(3)), undefined);
  for (let p = 0; p < 3; p++) assert.deepEqual(reader.get(podUid(p))?.status, typicalPodStatus(p, 0));
  // Updating a pod that already has a slot still works when full.
  assert.equal(writer.set(podUid(1), typicalPodStatus(1, 1), null, 11), 'stored');
  writer.delete(podUid(0));
  assert.equal(writer.set(podUid(3), typicalPodStatus(3, 0), null, 12), 'stored');
  assert.equal(reader.stats().slotsUsed, 3);
});

test('the cache grows when every slot holds a pod, up to maxCapacity; entries survive growth on every view', () => {
  const { buffer, reader, writer } = createPodCache({ capacity: 3, maxCapacity: 40 });
  // A second attachment made before any growth (as a worker thread attaches at start).
  const early = attachPodCache(buffer);
  for (let p = 0; p < 40; p++) assert.equal(writer.set(podUid(p), typicalPodStatus(p, 0), null, 10 + p), 'stored');
  const st = reader.stats();
  assert.deepEqual({ used: st.slotsUsed, capacity: st.capacity, max: st.maxCapacity, full: st.fullTotal }, { used: 40, capacity: 40, max: 40, full: 0 });
  assert.ok(st.growTotal >= 2, `grew ${st.growTotal} times`);
  for (let p = 0; p < 40; p++) {
    assert.equal(early.reader.get(podUid(p))?.status.name, `pod-${p}-v0`, `pod ${p} through the early view`);
    assert.equal(reader.get(podUid(p))?.timestampMs, 10 + p);
  }
  // The early view writes into grown slots too, and lists every pod.
  assert.equal(early.writer.set(podUid(39), typicalPodStatus(39, 1), null, 99), 'stored');
  assert.equal(reader.get(podUid(39))?.status.name, 'pod-39-v1');
  assert.equal(new Set(early.reader.uids()).size, 40);
  // At the maximum it refuses, as a fixed-size cache does.
  assert.throws(() => writer.set(podUid(40), typicalPodStatus(40, 0), null, 100), hasCode('ERR_CACHE_FULL'));
  assert.equal(reader.stats().fullTotal, 1);
  // A pod leaving makes room without growth.
  writer.delete(podUid(0));
  assert.equal(early.writer.set(podUid(40), typicalPodStatus(40, 0), null, 101), 'stored');
});

test('while the PLEG could not store every pod, a pod without an entry is unknown (ERR_CACHE_FULL), not empty', async () => {
  const { reader, writer } = createPodCache({ capacity: 4 });
  const uid = podUid(7);
  writer.updateTime(100, 3);
  const e = await reader.getNewerThan(uid, 99);
  assert.equal(e.error?.code, 'ERR_CACHE_FULL');
  assert.deepEqual(e.status, emptyPodStatus(uid));
  assert.equal(reader.stats().unstored, 3);
  // Every listed pod stored again: no entry means no runtime objects, as in the kubelet.
  writer.updateTime(101, 0);
  assert.deepEqual(await reader.getNewerThan(uid, 100), { status: emptyPodStatus(uid), error: null, timestampMs: 101 });
  assert.equal(reader.stats().unstored, 0);
});

test('a status larger than the slot even trimmed is stored as an ERR_CACHE_ENTRY_TOO_LARGE entry past maxEntryBytes, never truncated', () => {
  // What pod workers do with that entry (skip the sync) is asserted on the product path in
  // test/unit/workers/pod-workers-cache-limits.test.ts.
  const { reader, writer } = createPodCache({ capacity: 2, maxCapacity: 64, bytesPerSlot: 1024, maxEntryBytes: 2048 });
  const uid = podUid(1);
  writer.set(uid, typicalPodStatus(1, 0), null, 10);
  const big = typicalPodStatus(1, 2);
  // Ten running containers with distinct names: nothing can be trimmed.
  for (let k = 2; k < 10; k++) big.containers.push({ ...big.containers[0]!, name: `c${k}` });
  assert.equal(writer.set(uid, big, null, 20), 'oversize');
  const e = reader.get(uid);
  assert.equal(e?.timestampMs, 20);
  assert.equal(e?.error?.code, 'ERR_CACHE_ENTRY_TOO_LARGE');
  assert.deepEqual(e?.status, emptyPodStatus(uid, big.name, big.namespace));
  assert.deepEqual({ oversize: reader.stats().oversizeTotal, trimmed: reader.stats().trimmedTotal, overflow: reader.stats().overflowSlots }, { oversize: 1, trimmed: 0, overflow: 0 });
});

test('a status whose overflow slots the cache cannot give (at its maximum) is an ERR_CACHE_ENTRY_TOO_LARGE entry; nothing reserved leaks', () => {
  const { reader, writer } = createPodCache({ capacity: 4, bytesPerSlot: 1024 });
  const uid = podUid(1);
  for (let p = 2; p <= 4; p++) writer.set(podUid(p), typicalPodStatus(p, 0), null, 5);
  // 8 containers: ~2.5 KB, a head and two overflow slots; one slot is free.
  const big = wideStatus(1, 0, 8);
  assert.equal(writer.set(uid, big, null, 20), 'oversize');
  assert.equal(reader.get(uid)?.error?.code, 'ERR_CACHE_ENTRY_TOO_LARGE');
  assert.deepEqual({ used: reader.stats().slotsUsed, overflow: reader.stats().overflowSlots, oversize: reader.stats().oversizeTotal }, { used: 4, overflow: 0, oversize: 1 });
  // Room again (two pods are gone): the next write stores the whole status.
  writer.delete(podUid(2));
  writer.delete(podUid(3));
  assert.equal(writer.set(uid, big, null, 30), 'stored');
  assert.deepEqual(reader.get(uid), { status: big, error: null, timestampMs: 30 });
  assert.deepEqual({ used: reader.stats().slotsUsed, overflow: reader.stats().overflowSlots }, { used: 2, overflow: 2 });
});

test('statuses of 14, 50, 200 and 2,000 containers are stored whole across overflow slots, grow, shrink and free their chain', () => {
  const { reader, writer } = createPodCache({ capacity: 4, maxCapacity: 16_384 });
  const uid = podUid(7);
  let ts = 1;
  for (const n of [14, 50, 200, 2000, 50, 14, 1, 200]) {
    const st = wideStatus(7, n, n);
    assert.equal(writer.set(uid, st, null, ts), 'stored', `${n} containers`);
    const e = reader.get(uid);
    assert.deepEqual(e, { status: st, error: null, timestampMs: ts }, `${n} containers read back whole`);
    const stats = reader.stats();
    assert.equal(stats.slotsUsed, 1);
    assert.ok(n > 8 ? stats.overflowSlots > 0 : stats.overflowSlots === 0, `${n}: overflow slots ${stats.overflowSlots}`);
    ts++;
  }
  // Another pod's entries reuse freed overflow slots and never see this pod's bytes.
  writer.set(podUid(8), wideStatus(8, 1, 50), null, ts);
  assert.deepEqual(reader.get(podUid(8))?.status, wideStatus(8, 1, 50));
  assert.deepEqual(reader.get(uid)?.status, wideStatus(7, 200, 200));
  writer.delete(uid);
  writer.delete(podUid(8));
  assert.deepEqual({ used: reader.stats().slotsUsed, overflow: reader.stats().overflowSlots, bytes: reader.stats().bytesUsed }, { used: 0, overflow: 0, bytes: 0 });
  assert.equal(reader.stats().oversizeTotal, 0);
  // Every slot is free again: a cache of this capacity holds that many small pods.
  const cap = reader.stats().capacity;
  for (let p = 0; p < cap; p++) writer.set(podUid(100 + p), typicalPodStatus(100 + p, 0), null, ts);
  assert.equal(reader.stats().slotsUsed, cap);
});

test('a status too large only for its old exited instances is stored trimmed: newest two per name, every live object', () => {
  const { reader, writer } = createPodCache({ capacity: 2, maxCapacity: 8, bytesPerSlot: 1024, maxEntryBytes: 2048 });
  const uid = podUid(1);
  const st = typicalPodStatus(1, 0); // c0 and c1 running in sandbox s
  const sb = st.sandboxes[0]!;
  // 12 exited instances of c0 (newest first after the running one), and 3 old dead sandboxes.
  for (let a = 1; a <= 12; a++) st.containers.push({ ...container(1, 0, 2 * a - 1, sb.id), id: `dead-${a}`.padEnd(64, '0') });
  for (let k = 1; k <= 3; k++) st.sandboxes.push({ ...sb, id: `old-sandbox-${k}`.padEnd(64, '0'), state: 'SANDBOX_NOTREADY' });
  assert.equal(writer.set(uid, st, null, 10), 'trimmed');
  const e = reader.get(uid);
  assert.equal(e?.error, null);
  assert.deepEqual(e?.status.containers.map((c) => [c.name, c.state]), [
    ['c0', 'CONTAINER_RUNNING'], ['c1', 'CONTAINER_RUNNING'], ['c0', 'CONTAINER_EXITED'],
  ], 'latest + previous of c0 (lastState), c1, nothing older');
  assert.equal(e?.status.containers[2]?.id, st.containers[2]?.id, 'the previous instance is the newest exited one');
  assert.equal(e?.status.sandboxes[0]?.id, sb.id, 'the current sandbox stays first');
  assert.deepEqual({ trimmed: reader.stats().trimmedTotal, oversize: reader.stats().oversizeTotal }, { trimmed: 1, oversize: 0 });
});

test('delete frees the slot; tombstones never break lookups across many add/delete cycles', () => {
  const { reader, writer } = createPodCache({ capacity: 16 });
  const live = new Map<number, number>();
  let ts = 1;
  for (let round = 0; round < 400; round++) {
    const p = (round * 7919) % 61;
    if (live.has(p)) {
      writer.delete(podUid(p));
      live.delete(p);
    } else if (live.size < 16) {
      writer.set(podUid(p), typicalPodStatus(p, round), null, ts++);
      live.set(p, round);
    }
    for (let q = 0; q < 61; q++) {
      const v = live.get(q);
      assert.equal(reader.get(podUid(q))?.status.name, v === undefined ? undefined : `pod-${q}-v${v}`);
    }
  }
  assert.equal(reader.stats().slotsUsed, live.size);
  writer.delete(podUid(999)); // absent: no-op
  for (const q of [...live.keys()]) writer.delete(podUid(q));
  assert.deepEqual({ used: reader.stats().slotsUsed, bytes: reader.stats().bytesUsed }, { used: 0, bytes: 0 });
});

test('bad input is rejected with typed errors', () => {
  const { writer } = createPodCache({ capacity: 2 });
  assert.throws(() => writer.set('', emptyPodStatus(''), null, 1), hasCode('ERR_CACHE_INVALID_UID'));
  assert.throws(() => writer.set('x'.repeat(65), emptyPodStatus('x'), null, 1), hasCode('ERR_CACHE_INVALID_UID'));
  assert.throws(() => writer.set('u', emptyPodStatus('u'), null, 1.5), hasCode('ERR_CACHE_INVALID_TIMESTAMP'));
  assert.throws(() => writer.updateTime(Number.NaN), hasCode('ERR_CACHE_INVALID_TIMESTAMP'));
  assert.throws(() => createPodCache({ capacity: 0 }), hasCode('ERR_CACHE_INVALID_OPTION'));
  assert.throws(() => attachPodCache(new SharedArrayBuffer(4096)), hasCode('ERR_CACHE_BAD_BUFFER'));
});

test('a second attachment of the same buffer sees the same data', () => {
  const { buffer, writer } = createPodCache({ capacity: 4 });
  writer.set(podUid(1), typicalPodStatus(1, 5), null, 77);
  const other = attachPodCache(buffer);
  assert.equal(other.reader.get(podUid(1))?.status.name, 'pod-1-v5');
  other.writer.updateTime(80);
  assert.equal(other.reader.globalTimestampMs(), 80);
});

test('foreignWrites moves exactly when another attached view changes an entry (set that wrote, delete), never for the reader\'s own writes', () => {
  const pleg = createPodCache({ capacity: 8 });
  const worker = attachPodCache(pleg.buffer);
  const mark = (): number => pleg.reader.foreignWrites();
  const m0 = mark();
  pleg.writer.set(podUid(1), typicalPodStatus(1, 0), null, 1000);
  pleg.writer.delete(podUid(9));
  pleg.writer.updateTime(1000);
  assert.equal(mark(), m0, 'own writes and updateTime are not foreign');
  worker.writer.set(podUid(1), typicalPodStatus(1, 1), null, 1001);
  const m1 = mark();
  assert.notEqual(m1, m0, 'a worker\'s set');
  assert.equal(worker.reader.foreignWrites(), worker.reader.foreignWrites(), 'stable between writes');
  assert.equal(worker.writer.set(podUid(1), typicalPodStatus(1, 0), null, 999), 'stale');
  assert.equal(mark(), m1, 'a stale set wrote nothing');
  worker.writer.delete(podUid(1));
  assert.notEqual(mark(), m1, 'a worker\'s delete');
  const m2 = mark();
  pleg.writer.set(podUid(2), typicalPodStatus(2, 0), null, 1002);
  assert.equal(mark(), m2);
});
