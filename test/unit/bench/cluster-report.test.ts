import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBenchArgs } from '../../../bench/bench-config.js';
import { requestCounts } from '../../../bench/cluster-session.js';
import { clusterSection } from '../../../bench/report-cluster.js';
import type { BenchResults } from '../../../bench/results.js';

test('the cluster section is on by default (1,000 pods, 2 threads, QPS 50 and unthrottled) and off with --no-cluster', () => {
  const d = parseBenchArgs([], new Date(0));
  assert.deepEqual(d.cluster, { pods: 1000, workers: 2, qps: [50, 0] });
  assert.equal(parseBenchArgs(['--no-cluster'], new Date(0)).cluster, undefined);
});

test('apiserver_request_total is summed by verb and resource/subresource across the other labels', () => {
  const text = [
    '# TYPE apiserver_request_total counter',
    'apiserver_request_total{code="200",component="apiserver",contentType="application/json",dry_run="",group="",resource="pods",scope="namespace",subresource="status",verb="PATCH",version="v1"} 7',
    'apiserver_request_total{code="422",component="apiserver",contentType="application/json",dry_run="",group="",resource="pods",scope="namespace",subresource="status",verb="PATCH",version="v1"} 1',
    'apiserver_request_total{code="201",component="apiserver",contentType="application/json",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1"} 3',
    'apiserver_request_total{code="200",component="apiserver",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 2',
  ].join('\n');
  assert.deepEqual(Object.fromEntries(requestCounts(text)), { 'PATCH pods/status': 8, 'POST pods': 3, 'LIST pods': 2 });
});

test('the report puts each QPS session beside the standalone burst of the same size and lists requests per session', () => {
  const r = {
    workloads: [{ workload: 'burst', runtime: 'sim', profile: 'zero', workers: 2, pods: 1000, podCount: 1000, podsPerSec: 100, startupMs: { p50: 4000, p99: 9000 } }],
    cluster: [
      { qps: 50, pods: 1000, workers: 2, allRunningS: 20, createS: 8, startupMs: { count: 1000, min: 1, mean: 1, p50: 3000, p90: 1, p99: 12000, max: 1 }, requests: { 'PATCH pods/status': 1010, 'POST pods': 1000 }, requestsPerPodStart: 1.01, notes: ['n'] },
      { qps: 0, pods: 1000, workers: 2, allRunningS: 10, createS: 8, startupMs: null, requests: { 'PATCH pods/status': 1500 }, requestsPerPodStart: 1.5, notes: ['n'] },
    ],
  } as unknown as BenchResults;
  const md = clusterSection(r).join('\n');
  assert.match(md, /\| cluster, sim\/zero w=2, --kube-api-qps 50 \| 1000 \| 8\.0 \| 20\.0 \| 50\.0 \| 3,000 \| 12,000 \| 1\.01 \|/);
  assert.match(md, /\| cluster, sim\/zero w=2, unthrottled \| 1000 \| 8\.0 \| 10\.0 \| 100\.0 \| – \| – \| 1\.50 \|/);
  assert.match(md, /\| standalone burst \(manifests\), sim\/zero w=2 \| 1000 \| – \| 10\.0 \| 100\.0 \| 4,000 \| 9,000 \| – \|/);
  assert.match(md, /\| PATCH pods\/status \| 1010 \| 1500 \|/);
  assert.match(md, /\| POST pods \| 1000 \| 0 \|/);
  assert.deepEqual(clusterSection({ ...r, cluster: [] }), []);
});
