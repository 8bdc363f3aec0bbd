/**
 * The shared cache under real threads: two writers racing on the same pods, readers checking
 * every entry they see is one whole version, an async waiter, and cross-thread getNewerThan.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { podUid, typicalPodStatus } from './pod-status-fixtures.js';
import type { ScriptStep, WorkerReport, WorkerRole } from './cache-thread-worker.js';

const WORKER = new URL('./cache-thread-worker.js', import.meta.url);

function spawn(role: WorkerRole): { worker: Worker; report: Promise<WorkerReport> } {
  const worker = new Worker(WORKER, { workerData: role });
  const report = new Promise<WorkerReport>((resolve, reject) => {
    worker.once('message', (m: WorkerReport) => resolve(m));
    worker.once('error', reject);
  });
  return { worker, report };
}

test('concurrent writers and readers on worker threads: no torn entry, versions never go back', async () => {
  const pods = 8;
  const versions = 1500;
  const { buffer, reader } = createPodCache({ capacity: 64 });
  const stop = new SharedArrayBuffer(4);
  const evens = Array.from({ length: versions }, (_, k) => 2 * k + 2);
  const odds = Array.from({ length: versions }, (_, k) => 2 * k + 1);
  const readers = [spawn({ role: 'reader', buffer, pods, stop }), spawn({ role: 'reader', buffer, pods, stop })];
  const waiter = spawn({ role: 'waiter', buffer, pods, until: 2 * versions });
  const writers = [spawn({ role: 'writer', buffer, pods, versions: evens }), spawn({ role: 'writer', buffer, pods, versions: odds })];
  const writerReports = await Promise.all(writers.map((w) => w.report));
  Atomics.store(new Int32Array(stop), 0, 1);
  const readerReports = await Promise.all(readers.map((r) => r.report));
  const waiterReport = await waiter.report;
  await Promise.all([...readers, ...writers, waiter].map((w) => w.worker.terminate()));

  for (const r of [...writerReports, ...readerReports, waiterReport]) assert.deepEqual(r.violations, []);
  for (const r of readerReports) {
    assert.ok(r.checks > 0, 'reader saw entries');
    assert.ok(r.versionsSeen > 1, `reader saw ${r.versionsSeen} versions: the test raced nothing`);
  }
  assert.ok(waiterReport.checks > 0);
  // The newest version wins regardless of which writer finished last.
  for (let p = 0; p < pods; p++) assert.equal(reader.get(podUid(p))?.timestampMs, 2 * versions);
  assert.equal(reader.globalTimestampMs(), 2 * versions);
});

test('entries spanning overflow slots under concurrent writers, deletes and readers: every read is one whole version, nothing leaks', async () => {
  const pods = 6;
  const versions = 400;
  // Small slots: a wide status spans 0 to ~20 overflow slots; chains grow, shrink and reuse
  // slots another pod's chain just freed, while readers follow them lock-free.
  const { buffer, reader, writer } = createPodCache({ capacity: 8, maxCapacity: 4096, bytesPerSlot: 1024 });
  const stop = new SharedArrayBuffer(4);
  const evens = Array.from({ length: versions }, (_, k) => 2 * k + 2);
  const odds = Array.from({ length: versions }, (_, k) => 2 * k + 1);
  const readers = [spawn({ role: 'reader', buffer, pods, stop, wide: true, deletes: true }), spawn({ role: 'reader', buffer, pods, stop, wide: true, deletes: true })];
  const writers = [
    spawn({ role: 'writer', buffer, pods, versions: evens, wide: true, deletes: true }),
    spawn({ role: 'writer', buffer, pods, versions: odds, wide: true, deletes: true }),
  ];
  const writerReports = await Promise.all(writers.map((w) => w.report));
  Atomics.store(new Int32Array(stop), 0, 1);
  const readerReports = await Promise.all(readers.map((r) => r.report));
  await Promise.all([...readers, ...writers].map((w) => w.worker.terminate()));
  for (const r of [...writerReports, ...readerReports]) assert.deepEqual(r.violations, []);
  for (const r of readerReports) assert.ok(r.versionsSeen > 1, `reader saw ${r.versionsSeen} versions: the test raced nothing`);
  // Accounting: after deleting every pod, no head and no overflow slot is held.
  const held = reader.stats();
  assert.ok(held.overflowSlots > 0, 'the test used overflow slots');
  for (let p = 0; p < pods; p++) writer.delete(podUid(p));
  assert.deepEqual({ used: reader.stats().slotsUsed, overflow: reader.stats().overflowSlots, bytes: reader.stats().bytesUsed }, { used: 0, overflow: 0, bytes: 0 });
});

test('getNewerThan on the main thread waits for another thread\'s newer write, not an older one', async () => {
  const { buffer, reader } = createPodCache({ capacity: 8 });
  const { worker } = spawn({ role: 'script', buffer });
  const step = async (s: ScriptStep): Promise<void> => {
    worker.postMessage(s);
    await once(worker, 'message');
  };
  await step({ op: 'set', pod: 1, version: 0, ts: 100 });
  let settled = false;
  const p = reader.getNewerThan(podUid(1), 100).then((e) => {
    settled = true;
    return e;
  });
  // Older/equal writes to pod 1, then a write to a witness pod in the same thread: when the
  // witness waiter resolves, the writes to pod 1 were visible to the same wake-up round.
  await step({ op: 'set', pod: 1, version: 1, ts: 99 });
  await step({ op: 'set', pod: 1, version: 2, ts: 100 });
  await step({ op: 'updateTime', ts: 100 });
  const witness = reader.getNewerThan(podUid(2), 100);
  await step({ op: 'set', pod: 2, version: 0, ts: 101 });
  await witness;
  assert.equal(settled, false, 'resolved on a write that was not newer');
  await step({ op: 'set', pod: 1, version: 3, ts: 101 });
  const e = await p;
  assert.equal(e.timestampMs, 101);
  assert.equal(e.status.name, 'pod-1-v3');
  await worker.terminate();
});

test('growth on either thread is seen by the other, each attached before it', async () => {
  const { buffer, reader, writer } = createPodCache({ capacity: 2, maxCapacity: 600 });
  const { worker } = spawn({ role: 'script', buffer });
  const ask = async <T>(s: ScriptStep): Promise<T> => {
    worker.postMessage(s);
    const [m] = (await once(worker, 'message')) as [T];
    return m;
  };
  // The worker has attached (it answers), at capacity 2.
  assert.deepEqual(await ask<(string | null)[]>({ op: 'names', pods: 2 }), [null, null]);
  // The main thread grows it.
  for (let p = 0; p < 300; p++) writer.set(podUid(p), typicalPodStatus(p, 0), null, 10);
  const grownByMain = reader.stats().capacity;
  assert.ok(grownByMain >= 300 && grownByMain < 600, `capacity ${grownByMain}`);
  assert.deepEqual(await ask<(string | null)[]>({ op: 'names', pods: 300 }), Array.from({ length: 300 }, (_, p) => `pod-${p}-v0`));
  // The worker fills it and grows it to the maximum; the main thread sees every entry.
  for (let p = 300; p < 600; p++) assert.equal(await ask<string>({ op: 'set', pod: p, version: 1, ts: 11 }), 'done');
  assert.equal(reader.stats().capacity, 600);
  for (let p = 0; p < 600; p++) assert.equal(reader.get(podUid(p))?.status.name, `pod-${p}-v${p < 300 ? 0 : 1}`);
  assert.equal(reader.uids().length, 600);
  await worker.terminate();
});
