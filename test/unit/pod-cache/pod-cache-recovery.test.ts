/**
 * Locks held by a thread that died inside a cache critical section are recoverable: the
 * thread's slot and ALLOC_LOCK words carry its owner id, and recoverThread (called by the main
 * thread on the thread's 'exit') releases them, turns the possibly torn entry into an
 * ERR_CACHE_WRITER_DIED error entry, rebuilds the index and free list, and counts a recovery.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { CacheError } from '../../../src/shared/pod-cache/pod-cache-errors.js';
import { podUid, typicalPodStatus, wideStatus } from './pod-status-fixtures.js';
import type { WorkerRole } from './cache-thread-worker.js';

const WORKER = new URL('./cache-thread-worker.js', import.meta.url);

test('a thread dead inside set and slot allocation: stuck locks are bounded, then recovered whole', async () => {
  const c = createPodCache({ capacity: 8 });
  c.writer.set(podUid(0), typicalPodStatus(0, 1), null, 10); // slot 0
  c.writer.set(podUid(1), typicalPodStatus(1, 1), null, 10); // slot 1
  c.writer.updateTime(10);

  const worker = new Worker(WORKER, { workerData: { role: 'hold', buffer: c.buffer, slot: 0 } satisfies WorkerRole });
  const [msg] = (await Promise.race([once(worker, 'message'), once(worker, 'error').then(([e]) => Promise.reject(e as Error))])) as [string];
  assert.equal(msg, 'holding');
  const deadId = worker.threadId;
  await worker.terminate();

  // Before recovery: a reader of the held slot gives up (bounded, ≈ 1 s) with a typed error;
  // other pods read fine (lock-free), a new pod cannot get a slot (ALLOC_LOCK held).
  assert.throws(() => c.reader.get(podUid(0)), (e: unknown) => e instanceof CacheError && e.code === 'ERR_CACHE_LOCK_STUCK');
  assert.deepEqual(c.reader.get(podUid(1))?.status, typicalPodStatus(1, 1));
  assert.throws(() => c.writer.set(podUid(2), typicalPodStatus(2, 1), null, 11), (e: unknown) => e instanceof CacheError && e.code === 'ERR_CACHE_LOCK_STUCK');

  assert.equal(c.reader.recoveries(), 0);
  assert.equal(c.recoverThread(deadId), 2, 'the slot lock and ALLOC_LOCK');
  assert.equal(c.recoverThread(deadId), 0, 'idempotent');
  assert.equal(c.reader.recoveries(), 1);

  // The torn entry is an error entry (never the half-written bytes), at its stored timestamp.
  const e0 = c.reader.get(podUid(0));
  assert.equal(e0?.error?.code, 'ERR_CACHE_WRITER_DIED');
  assert.equal(e0?.status.sandboxes.length, 0);
  assert.equal(e0?.timestampMs, 10);
  assert.deepEqual(c.reader.get(podUid(1))?.status, typicalPodStatus(1, 1));
  // Writers and slot allocation work again; the free list and counters were rebuilt.
  assert.equal(c.writer.set(podUid(0), typicalPodStatus(0, 2), null, 12), 'stored');
  assert.deepEqual(c.reader.get(podUid(0))?.status, typicalPodStatus(0, 2));
  for (let p = 2; p < 8; p++) c.writer.set(podUid(p), typicalPodStatus(p, 1), null, 12);
  assert.equal(c.reader.stats().slotsUsed, 8);
  assert.throws(() => c.writer.set(podUid(8), typicalPodStatus(8, 1), null, 12), (e: unknown) => e instanceof CacheError && e.code === 'ERR_CACHE_FULL');
  c.writer.delete(podUid(3));
  assert.equal(c.writer.set(podUid(8), typicalPodStatus(8, 1), null, 13), 'stored');
  assert.deepEqual(c.reader.uids().sort(), [0, 1, 2, 4, 5, 6, 7, 8].map(podUid).sort());
});

test('recoverThread refuses the calling thread itself', () => {
  const c = createPodCache({ capacity: 2 });
  assert.throws(() => c.recoverThread(0), (e: unknown) => e instanceof CacheError && e.code === 'ERR_CACHE_INVALID_OPTION');
});

test('a thread dead inside a grown slot: recovery covers the slots added by growth and keeps them', async () => {
  const c = createPodCache({ capacity: 2, maxCapacity: 64 });
  for (let p = 0; p < 40; p++) c.writer.set(podUid(p), typicalPodStatus(p, 1), null, 10);
  const grown = c.reader.stats().capacity;
  assert.ok(grown >= 40);
  const worker = new Worker(WORKER, { workerData: { role: 'hold', buffer: c.buffer, slot: 39 } satisfies WorkerRole });
  const [msg] = (await Promise.race([once(worker, 'message'), once(worker, 'error').then(([e]) => Promise.reject(e as Error))])) as [string];
  assert.equal(msg, 'holding');
  const deadId = worker.threadId;
  await worker.terminate();
  assert.equal(c.recoverThread(deadId), 2, 'the grown slot\'s lock and ALLOC_LOCK');
  assert.equal(c.reader.get(podUid(39))?.error?.code, 'ERR_CACHE_WRITER_DIED');
  // The rebuilt free list and index span the grown capacity: nothing lost, growth continues.
  assert.deepEqual({ used: c.reader.stats().slotsUsed, capacity: c.reader.stats().capacity }, { used: 40, capacity: grown });
  for (let p = 0; p < 39; p++) assert.deepEqual(c.reader.get(podUid(p))?.status, typicalPodStatus(p, 1));
  for (let p = 40; p < 64; p++) c.writer.set(podUid(p), typicalPodStatus(p, 1), null, 11);
  assert.equal(c.reader.stats().slotsUsed, 64);
  assert.equal(c.reader.uids().length, 64);
});

test('a thread dead holding overflow reservations (or mid-write of a chained entry): recovery frees what no head reaches', async () => {
  const c = createPodCache({ capacity: 4, maxCapacity: 64, bytesPerSlot: 1024 });
  const big = wideStatus(0, 1, 12);
  assert.equal(c.writer.set(podUid(0), big, null, 10), 'stored');
  const chained = c.reader.stats().overflowSlots;
  assert.ok(chained > 0);
  const worker = new Worker(WORKER, { workerData: { role: 'reserve', buffer: c.buffer, slots: 5 } satisfies WorkerRole });
  const [msg] = (await Promise.race([once(worker, 'message'), once(worker, 'error').then(([e]) => Promise.reject(e as Error))])) as [string];
  assert.equal(msg, 'holding');
  assert.equal(c.reader.stats().overflowSlots, chained + 5, 'reserved while the thread lives');
  const deadId = worker.threadId;
  await worker.terminate();
  assert.equal(c.recoverThread(deadId), 5, 'five reservation markers');
  assert.equal(c.reader.stats().overflowSlots, chained, 'the dead reservations are free again; the live chain is kept');
  assert.deepEqual(c.reader.get(podUid(0)), { status: big, error: null, timestampMs: 10 });

  // A writer dead inside a chained entry's write (head SEQ odd): an error entry without a chain.
  const holder = new Worker(WORKER, { workerData: { role: 'hold', buffer: c.buffer, slot: 0 } satisfies WorkerRole });
  const [held] = (await Promise.race([once(holder, 'message'), once(holder, 'error').then(([e]) => Promise.reject(e as Error))])) as [string];
  assert.equal(held, 'holding');
  const holderId = holder.threadId;
  await holder.terminate();
  assert.equal(c.recoverThread(holderId), 2);
  assert.equal(c.reader.get(podUid(0))?.error?.code, 'ERR_CACHE_WRITER_DIED');
  assert.equal(c.reader.stats().overflowSlots, 0, 'its cut chain went back to FREE');
  // Every slot is usable again.
  assert.equal(c.writer.set(podUid(0), big, null, 11), 'stored');
  assert.deepEqual(c.reader.get(podUid(0))?.status, big);
  for (let p = 1; p < 20; p++) c.writer.set(podUid(p), wideStatus(p, 0, 3), null, 11);
  for (let p = 1; p < 20; p++) assert.deepEqual(c.reader.get(podUid(p))?.status, wideStatus(p, 0, 3));
});
