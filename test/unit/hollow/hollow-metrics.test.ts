/**
 * Node-labelled exposition: every sample of every node gets `node` first, families are merged
 * with one HELP/TYPE, histograms keep their suffixed samples under their family, label values
 * are escaped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeNodeExpositions, withNodeLabel } from '../../../src/main/hollow/hollow-metrics.js';

test('withNodeLabel: with labels, without, empty braces; escaping', () => {
  assert.equal(withNodeLabel('a_total{verb="get"} 3', 'h-0'), 'a_total{node="h-0",verb="get"} 3');
  assert.equal(withNodeLabel('a_total 3', 'h-0'), 'a_total{node="h-0"} 3');
  assert.equal(withNodeLabel('a_total{} 3', 'h-0'), 'a_total{node="h-0"} 3');
  assert.equal(withNodeLabel('a 1', 'x"y\\z'), 'a{node="x\\"y\\\\z"} 1');
});

test('mergeNodeExpositions: one header per family, every node sample labelled, family order kept', () => {
  const one = '# HELP req_total Requests.\n# TYPE req_total counter\nreq_total{verb="get"} 1\n# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\nlat_seconds_bucket{le="1"} 2\nlat_seconds_bucket{le="+Inf"} 2\nlat_seconds_sum 0.5\nlat_seconds_count 2\n';
  const two = '# HELP req_total Requests.\n# TYPE req_total counter\nreq_total{verb="get"} 4\n';
  const out = mergeNodeExpositions([{ node: 'h-0', text: one }, { node: 'h-1', text: two }]);
  assert.equal(
    out,
    [
      '# HELP req_total Requests.', '# TYPE req_total counter', 'req_total{node="h-0",verb="get"} 1', 'req_total{node="h-1",verb="get"} 4',
      '# HELP lat_seconds Latency.', '# TYPE lat_seconds histogram', 'lat_seconds_bucket{node="h-0",le="1"} 2', 'lat_seconds_bucket{node="h-0",le="+Inf"} 2', 'lat_seconds_sum{node="h-0"} 0.5', 'lat_seconds_count{node="h-0"} 2',
    ].join('\n') + '\n',
  );
  assert.equal(mergeNodeExpositions([]), '');
});
