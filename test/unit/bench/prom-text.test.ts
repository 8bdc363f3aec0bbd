import { test } from 'node:test';
import assert from 'node:assert/strict';
import { familyNames, histogramBuckets, parsePromText, sampleSum } from '../../../bench/prom-text.js';

const TEXT = `# HELP kubelet_pleg_relist_duration_seconds Duration in seconds for relisting pods in PLEG.
# TYPE kubelet_pleg_relist_duration_seconds histogram
kubelet_pleg_relist_duration_seconds_bucket{le="0.005"} 3
kubelet_pleg_relist_duration_seconds_bucket{le="0.01"} 7
kubelet_pleg_relist_duration_seconds_bucket{le="+Inf"} 8
kubelet_pleg_relist_duration_seconds_sum 0.061
kubelet_pleg_relist_duration_seconds_count 8
# TYPE shardlet_thing gauge
shardlet_thing{worker="0",path="a\\"b\\\\c\\nd"} 1.5
shardlet_thing{worker="1"} 2.5 1700000000000
shardlet_nan NaN
shardlet_inf -Inf
this is not a metric
`;

test('parses samples, labels with escapes, special values and timestamps', () => {
  const m = parsePromText(TEXT);
  assert.equal(m.types.get('kubelet_pleg_relist_duration_seconds'), 'histogram');
  assert.equal(m.types.get('shardlet_thing'), 'gauge');
  const thing = m.samples.filter((s) => s.name === 'shardlet_thing');
  assert.equal(thing.length, 2);
  assert.equal(thing[0]?.labels['path'], 'a"b\\c\nd');
  assert.equal(thing[1]?.value, 2.5);
  assert.ok(Number.isNaN(m.samples.find((s) => s.name === 'shardlet_nan')?.value ?? 0));
  assert.equal(m.samples.find((s) => s.name === 'shardlet_inf')?.value, -Infinity);
  assert.equal(m.errors.length, 1);
  assert.match(m.errors[0] ?? '', /^line 13: this is not a metric$/);
});

test('sampleSum aggregates across label sets, filtered by labels', () => {
  const m = parsePromText(TEXT);
  assert.equal(sampleSum(m, 'shardlet_thing'), 4);
  assert.equal(sampleSum(m, 'shardlet_thing', { worker: '1' }), 2.5);
  assert.equal(sampleSum(m, 'missing'), null);
});

test('histogramBuckets returns sorted cumulative buckets including +Inf', () => {
  const m = parsePromText(TEXT + 'kubelet_pleg_relist_duration_seconds_bucket{le="0.005",shard="b"} 1\n');
  assert.deepEqual(histogramBuckets(m, 'kubelet_pleg_relist_duration_seconds'), [
    { le: 0.005, count: 4 },
    { le: 0.01, count: 7 },
    { le: Infinity, count: 8 },
  ]);
  assert.deepEqual(histogramBuckets(m, 'kubelet_pleg_relist_duration_seconds', { shard: 'b' }), [{ le: 0.005, count: 1 }]);
});

test('familyNames folds histogram suffixes', () => {
  const names = familyNames(parsePromText(TEXT));
  assert.ok(names.includes('kubelet_pleg_relist_duration_seconds'));
  assert.ok(!names.includes('kubelet_pleg_relist_duration_seconds_bucket'));
});
