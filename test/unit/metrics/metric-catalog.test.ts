import { test } from 'node:test';
import assert from 'node:assert/strict';
import { METRIC_CATALOG } from '../../../src/shared/metrics/metric-catalog.js';
import { DEF_BUCKETS } from '../../../src/shared/metrics/metric-definition.js';
import * as k from '../../../src/shared/metrics/kubelet-metrics.js';
import { renderFamilies } from '../../../src/main/metrics/exposition-text.js';

import { KUBELET_NAMING_EXCEPTIONS } from './naming-exceptions.js';

test('every metric is named with its unit and type the way promtool expects', () => {
  for (const d of METRIC_CATALOG) {
    assert.ok(d.help.length > 0, `${d.name} has help`);
    assert.match(d.name, /^[a-z_][a-z0-9_]*$/, `${d.name} is snake_case`);
    if (d.type === 'counter' && !KUBELET_NAMING_EXCEPTIONS.has(d.name)) assert.match(d.name, /_total$/, `${d.name} counter ends in _total`);
    if (d.type !== 'counter') assert.doesNotMatch(d.name, /_total$/, `${d.name}: only counters end in _total`);
    if (d.type !== 'histogram') assert.doesNotMatch(d.name, /_(bucket|sum|count)$/, `${d.name}`);
    if (/duration|interval|delay|last_seen|busy/.test(d.name)) assert.match(d.name, /_seconds(_total)?$/, `${d.name} carries its unit`);
  }
});

test('buckets match the kubelet exactly', () => {
  assert.deepEqual(DEF_BUCKETS, [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
  assert.deepEqual(k.podStartDuration.buckets, [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600]);
  assert.deepEqual(k.podStartSliDuration.buckets, k.podStartDuration.buckets);
  assert.deepEqual(k.podWorkerDuration.buckets, DEF_BUCKETS);
  assert.deepEqual(k.containersPerPodCount.buckets, [1, 2, 4, 8, 16]);
  const rt = k.runtimeOperationsDuration.buckets ?? [];
  assert.equal(rt.length, 14);
  assert.equal(rt[0], 0.005);
  assert.ok(Math.abs((rt[13] as number) - 0.005 * 2.5 ** 13) < 1e-9);
  assert.deepEqual(k.proberProbeTotal.labelNames, ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid']);
  assert.deepEqual(k.workingPods.labelNames, ['lifecycle', 'config', 'static']);
});

test('the text format has HELP and TYPE once per family, escaped labels and cumulative buckets', () => {
  const text = renderFamilies([
    { def: k.runtimeOperationsTotal, series: [{ labelValues: ['a"b\\c\nd'], values: [3] }] },
    { def: k.containersPerPodCount, series: [{ labelValues: [], values: [1, 0, 2, 0, 0, 1, 40] }] },
  ]);
  assert.equal(text, [
    '# HELP kubelet_runtime_operations_total Cumulative number of runtime operations by operation type.',
    '# TYPE kubelet_runtime_operations_total counter',
    'kubelet_runtime_operations_total{operation_type="a\\"b\\\\c\\nd"} 3',
    '# HELP kubelet_containers_per_pod_count The number of containers per pod.',
    '# TYPE kubelet_containers_per_pod_count histogram',
    'kubelet_containers_per_pod_count_bucket{le="1"} 1',
    'kubelet_containers_per_pod_count_bucket{le="2"} 1',
    'kubelet_containers_per_pod_count_bucket{le="4"} 3',
    'kubelet_containers_per_pod_count_bucket{le="8"} 3',
    'kubelet_containers_per_pod_count_bucket{le="16"} 3',
    'kubelet_containers_per_pod_count_bucket{le="+Inf"} 4',
    'kubelet_containers_per_pod_count_sum 40',
    'kubelet_containers_per_pod_count_count 4',
    '',
  ].join('\n'));
});
