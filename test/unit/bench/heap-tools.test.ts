import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import { diffHeapGroups, HeapSummaryError, summarizeHeapSnapshot, type HeapSnapshotJson } from '../../../bench/heap-summary.js';
import { parsePromText } from '../../../bench/prom-text.js';
import { threadMemory, totalMiB } from '../../../bench/thread-memory.js';

async function snapshotOfThisThread(): Promise<HeapSnapshotJson> {
  const chunks: Buffer[] = [];
  for await (const c of v8.getHeapSnapshot()) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as HeapSnapshotJson;
}

class HeapSummaryMarker {
  constructor(readonly i: number) {}
}

test('summarizeHeapSnapshot groups a real V8 snapshot by constructor; the difference of two counts what was added', async () => {
  const a = summarizeHeapSnapshot(await snapshotOfThisThread());
  const keep = Array.from({ length: 2000 }, (_, i) => new HeapSummaryMarker(i));
  const b = summarizeHeapSnapshot(await snapshotOfThisThread());
  assert.ok(keep.length === 2000);
  const marker = b.groups.find((g) => g.name === 'HeapSummaryMarker');
  assert.ok(marker !== undefined, 'the class is a group of its own');
  assert.equal(marker.count, 2000);
  assert.ok(marker.selfBytes >= 2000 * 16, `self bytes ${marker.selfBytes}`);
  assert.equal(b.totalBytes, b.groups.reduce((n, g) => n + g.selfBytes, 0), 'groups partition the heap');
  const d = diffHeapGroups(a.groups, b.groups).find((x) => x.name === 'HeapSummaryMarker');
  assert.deepEqual(d && { n: d.countDelta, bytes: d.bytesDelta }, { n: 2000, bytes: marker.selfBytes });
});

test('summarizeHeapSnapshot refuses what is not a heap snapshot', () => {
  assert.throws(() => summarizeHeapSnapshot({ snapshot: { meta: { node_fields: ['a'], node_types: [] } }, nodes: [], strings: [] }), HeapSummaryError);
  assert.throws(() => summarizeHeapSnapshot({ snapshot: { meta: { node_fields: ['type', 'name', 'self_size'], node_types: [['object']] } }, nodes: [0, 0], strings: ['x'] }), /not a multiple/);
});

test('threadMemory turns shardlet_thread_heap_bytes into one row per thread, main and pleg first, MiB', () => {
  const M = 1024 * 1024;
  const text = [
    `shardlet_thread_heap_bytes{thread="12",role="pod-worker",kind="committed"} ${20 * M}`,
    `shardlet_thread_heap_bytes{thread="12",role="pod-worker",kind="used"} ${10 * M}`,
    `shardlet_thread_heap_bytes{thread="3",role="pod-worker",kind="committed"} ${30 * M}`,
    `shardlet_thread_heap_bytes{thread="pleg",role="pleg",kind="external"} ${2 * M}`,
    `shardlet_thread_heap_bytes{thread="0",role="main",kind="committed"} ${50 * M}`,
    `shardlet_thread_pods_owned{thread="3"} 7`,
  ].join('\n');
  const rows = threadMemory(parsePromText(text + '\n'));
  assert.deepEqual(rows, [
    { thread: '0', role: 'main', committedMiB: 50, usedMiB: null, externalMiB: null },
    { thread: 'pleg', role: 'pleg', committedMiB: null, usedMiB: null, externalMiB: 2 },
    { thread: '3', role: 'pod-worker', committedMiB: 30, usedMiB: null, externalMiB: null },
    { thread: '12', role: 'pod-worker', committedMiB: 20, usedMiB: 10, externalMiB: null },
  ]);
  assert.equal(totalMiB(rows, 'committedMiB'), 100);
  assert.equal(totalMiB([], 'usedMiB'), null);
});
