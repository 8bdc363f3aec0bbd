import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claimSlot, createMetricsArena, H_STATE, H_STRUCT_SEQ, openMetricsArena, retireSlot, SLOT_RETIRED } from '../../../src/shared/metrics/metrics-arena.js';
import { catalogIndexOf } from '../../../src/shared/metrics/metric-catalog.js';
import { proberProbeTotal, runtimeOperationsDuration, runtimeOperationsTotal } from '../../../src/shared/metrics/kubelet-metrics.js';
import { DROPPED, RegionWriter } from '../../../src/shared/metrics/region-writer.js';
import { RegionReader } from '../../../src/main/metrics/region-reader.js';
import { MetricsError } from '../../../src/shared/metrics/metrics-errors.js';

const OPS = catalogIndexOf(runtimeOperationsTotal);
const DUR = catalogIndexOf(runtimeOperationsDuration);
const PROBE = catalogIndexOf(proberProbeTotal);
const probeLabels = (pod: string) => ['Liveness', 'successful', 'c', pod, 'ns', `uid-${pod}`];

function fresh(opts = {}) {
  const arena = createMetricsArena({ slots: 2, ...opts });
  const slot = claimSlot(arena, 9);
  assert.ok(slot);
  return { arena, slot, writer: new RegionWriter(slot), reader: new RegionReader(slot) };
}

test('series appear in the reader snapshot with their labels and values', () => {
  const { writer, reader } = fresh();
  const c = writer.series(OPS, ['version']);
  writer.add(c, 2);
  assert.equal(writer.series(OPS, ['version']), c, 'same series, same cells');
  const h = writer.series(DUR, ['version']);
  writer.observe(h, runtimeOperationsDuration.buckets ?? [], 0.004); // first bucket (0.005)
  writer.observe(h, runtimeOperationsDuration.buckets ?? [], 1e9); // +Inf
  const snap = reader.snapshot();
  assert.ok(snap);
  assert.equal(snap.threadId, 9);
  const ops = snap.series.find((s) => s.defIndex === OPS);
  assert.deepEqual([...(ops?.values ?? [])], [2]);
  assert.deepEqual(ops?.labelValues, ['version']);
  const dur = snap.series.find((s) => s.defIndex === DUR);
  const v = [...(dur?.values ?? [])];
  assert.equal(v.length, 16, '14 buckets + +Inf + sum');
  assert.equal(v[0], 1);
  assert.equal(v[14], 1);
  assert.equal(v[15], 0.004 + 1e9);
});

test('deleted series leave the snapshot and their cells are reused, zeroed', () => {
  const { writer, reader } = fresh();
  const a = writer.series(PROBE, probeLabels('a'));
  writer.add(a, 5);
  assert.equal(writer.delete(PROBE, probeLabels('a')), true);
  assert.equal(writer.delete(PROBE, probeLabels('a')), false);
  assert.equal(reader.snapshot()?.series.length, 0);
  const b = writer.series(PROBE, probeLabels('b'));
  assert.equal(b, a, 'cells of the deleted series are reused');
  const snap = reader.snapshot();
  assert.deepEqual(snap?.series.map((s) => [s.labelValues[3], s.values[0]]), [['b', 0]]);
});

test('key space is compacted under churn; a full slot drops and counts new series', () => {
  const { writer, reader, slot } = fresh({ keyBytes: 2048, maxSeries: 64, slotBytes: 64 * 1024 });
  // Far more distinct pods over time than fit at once: compaction keeps the live ones readable.
  for (let i = 0; i < 500; i++) {
    const labels = probeLabels(`pod-${i}`);
    writer.add(writer.series(PROBE, labels), 1);
    if (i >= 3) writer.delete(PROBE, probeLabels(`pod-${i - 3}`));
  }
  const live = reader.snapshot()?.series.map((s) => s.labelValues[3]).sort();
  assert.deepEqual(live, ['pod-497', 'pod-498', 'pod-499']);
  assert.equal(reader.snapshot()?.dropped, 0);
  // Now fill the descriptors without deleting.
  let dropped = 0;
  for (let i = 0; i < 100; i++) if (writer.series(OPS, [`op-${i}`]) === DROPPED) dropped++;
  assert.ok(dropped > 0);
  assert.equal(reader.snapshot()?.dropped, dropped);
  assert.equal(Atomics.load(slot.header, H_STRUCT_SEQ) % 2, 0, 'seqlock even outside changes');
});

test('a reader retries while the owner is mid-change; a dead owner is still read in full', () => {
  const { writer, reader, slot } = fresh();
  writer.add(writer.series(OPS, ['status']), 7);
  Atomics.add(slot.header, H_STRUCT_SEQ, 1); // an owner that died inside a structural change
  assert.equal(reader.snapshot(), undefined, 'never returns a snapshot taken during a change');
  assert.deepEqual(reader.finalSnapshot().series.map((s) => s.values[0]), [7]);
});

test('retired slots are recycled only when no slot is free, oldest first, zeroed by the claimer', () => {
  const arena = createMetricsArena({ slots: 3 });
  const [a, b] = [claimSlot(arena, 1), claimSlot(arena, 2)];
  assert.ok(a && b);
  new RegionWriter(a).add(new RegionWriter(a).series(OPS, ['x']), 1);
  retireSlot(arena, b);
  retireSlot(arena, a);
  assert.equal(Atomics.load(a.header, H_STATE), SLOT_RETIRED);
  const c = claimSlot(arena, 3);
  assert.ok(c);
  assert.notEqual(c.index, a.index, 'a FREE slot is preferred to a retired one');
  assert.notEqual(c.index, b.index);
  assert.equal(claimSlot(arena, 4)?.index, b.index, 'then the oldest retirement');
  const again = claimSlot(arena, 5);
  assert.equal(again?.index, a.index);
  assert.equal(new RegionReader(again!).snapshot()?.series.length, 0, 'the old owner\'s series are gone');
  assert.equal(claimSlot(arena, 6), undefined, 'every slot claimed');
});

test('arenas validate options and buffers up front', () => {
  assert.throws(() => createMetricsArena({ slots: 0 }), (e: unknown) => e instanceof MetricsError && e.code === 'ERR_METRICS_BAD_OPTION' && /slots/.test(e.message));
  assert.throws(() => openMetricsArena(new SharedArrayBuffer(1024)), (e: unknown) => e instanceof MetricsError && e.code === 'ERR_METRICS_BAD_ARENA');
  const a = createMetricsArena({ slots: 1 });
  assert.equal(openMetricsArena(a.buffer).slotCount, 1);
});
