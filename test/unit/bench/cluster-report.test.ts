import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBenchArgs } from '../../../bench/bench-config.js';
import { requestCounts, type ClusterSessionResult } from '../../../bench/cluster-session.js';
import { bucketBoundAtQuantile, leaseDuringBurst, leaseVerdict } from '../../../bench/lease-during-burst.js';
import { parsePromText, type ParsedMetrics } from '../../../bench/prom-text.js';
import { clusterSection, leaseTable } from '../../../bench/report-cluster.js';
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

/** A scrape of the agent's lease histograms: cumulative counts per bucket bound (ok renewals). */
function leaseScrape(lateness: Record<string, number>, request: Record<string, number>, failed = 0): ParsedMetrics {
  const lines: string[] = [];
  for (const [name, buckets] of [['shardlet_node_lease_renew_lateness_seconds', lateness], ['shardlet_node_lease_renew_request_duration_seconds', request]] as const) {
    lines.push(`# TYPE ${name} histogram`);
    for (const [le, n] of Object.entries(buckets)) lines.push(`${name}_bucket{result="ok",le="${le}"} ${n}`);
    lines.push(`${name}_count{result="ok"} ${buckets['+Inf'] ?? 0}`);
    if (failed > 0) lines.push(`${name}_bucket{result="failed",le="+Inf"} ${failed}`, `${name}_count{result="failed"} ${failed}`);
  }
  return parsePromText(lines.join('\n'));
}

test('lease during the burst: histogram deltas give the renewals and the bucket bound of the p99; renewTime gaps from the API view', () => {
  const before = leaseScrape({ '0.01': 2, '0.025': 2, '1': 2, '1.5': 2, '+Inf': 2 }, { '0.01': 2, '0.025': 2, '+Inf': 2 });
  // Three more renewals: two within 25 ms, one 1.2 s late (its request took 20 ms: the timer was late).
  const after = leaseScrape({ '0.01': 3, '0.025': 4, '1': 4, '1.5': 5, '+Inf': 5 }, { '0.01': 3, '0.025': 5, '+Inf': 5 });
  const renewTimes = ['2026-11-23T07:00:00.000000Z', '2026-11-23T07:00:10.005000Z', '2026-11-23T07:00:10.005000Z', '2026-11-23T07:00:21.200000Z', '2026-11-23T07:00:30.010000Z'];
  const server = (n: number): ParsedMetrics => parsePromText([
    '# TYPE apiserver_request_duration_seconds histogram',
    `apiserver_request_duration_seconds_bucket{resource="leases",verb="PUT",le="0.05"} ${n}`,
    `apiserver_request_duration_seconds_bucket{resource="leases",verb="PUT",le="0.1"} ${n + 1}`,
    `apiserver_request_duration_seconds_bucket{resource="leases",verb="PUT",le="+Inf"} ${n + 1}`,
    `apiserver_request_duration_seconds_bucket{resource="pods",verb="POST",le="0.05"} 0`,
    `apiserver_request_duration_seconds_bucket{resource="pods",verb="POST",le="+Inf"} ${10 * n}`,
  ].join('\n'));
  const l = leaseDuringBurst(before, after, renewTimes, { before: server(2), after: server(4) });
  assert.deepEqual(l, { renewals: 3, failed: 0, latenessP99AtMostS: 1.5, latenessMaxAtMostS: 1.5, requestP99AtMostS: 0.025, serverP99AtMostS: 0.05, apiRenewals: 4, apiMaxGapS: 11.195, pass: false, noneDue: false });
  assert.equal(leaseDuringBurst(before, after, renewTimes).serverP99AtMostS, null, 'no server scrape: not known');
  // Within the target: p99 in the 25 ms bucket.
  const good = leaseDuringBurst(before, leaseScrape({ '0.01': 3, '0.025': 5, '1': 5, '1.5': 5, '+Inf': 5 }, { '0.01': 3, '0.025': 5, '+Inf': 5 }), renewTimes.slice(0, 2));
  assert.equal(good.latenessP99AtMostS, 0.025);
  assert.equal(good.pass, true);
  // A failed renewal fails the target whatever its timing; no renewal at all is not a pass.
  assert.equal(leaseDuringBurst(before, leaseScrape({ '0.01': 3, '0.025': 5, '1': 5, '1.5': 5, '+Inf': 5 }, { '0.01': 3, '0.025': 5, '+Inf': 5 }, 1), []).pass, false);
  assert.equal(leaseDuringBurst(before, before, []).pass, false);
  // No renewal in a burst shorter than the wait for the next one: "none due", not a failure;
  // once the next renewal was due (interval + the lateness target) and none came: FAIL.
  const lastRenew = Date.parse('2026-11-23T07:00:00.000Z');
  const short = leaseDuringBurst(before, before, ['2026-11-23T07:00:00.000000Z'], null, lastRenew + 9_500);
  assert.equal(short.noneDue, true);
  assert.equal(leaseVerdict(short), 'none due');
  const overdue = leaseDuringBurst(before, before, ['2026-11-23T07:00:00.000000Z'], null, lastRenew + 11_500);
  assert.equal(leaseVerdict(overdue), 'FAIL');
  assert.equal(leaseVerdict(leaseDuringBurst(before, before, [], null, lastRenew)), 'FAIL', 'no renewTime known: FAIL, as before');
  assert.equal(leaseVerdict(good), 'PASS');
  assert.equal(bucketBoundAtQuantile([{ le: 1, count: 0 }, { le: Infinity, count: 2 }], 0.99), Infinity);
});

test('the lease table shows each session with PASS/FAIL against 1 s, in report.md and on the terminal', () => {
  const base = { pods: 1000, workers: 2, allRunningS: 20, createS: 8, startupMs: null, requests: {}, requestsPerPodStart: 1, notes: [] };
  const lease = (p99: number, pass: boolean) => ({ renewals: 2, failed: 0, latenessP99AtMostS: p99, latenessMaxAtMostS: p99, requestP99AtMostS: 0.025, serverP99AtMostS: 0.05, apiRenewals: 3, apiMaxGapS: 10.02, pass });
  const sessions = [
    { ...base, qps: 50, lease: lease(0.05, true), eventLoopDelayMaxMs: 120.4 },
    { ...base, qps: 0, lease: lease(2, false), eventLoopDelayMaxMs: 1900 },
    { ...base, qps: 50, serviceAccountVolume: true, lease: null, eventLoopDelayMaxMs: null },
  ] as unknown as ClusterSessionResult[];
  const t = leaseTable(sessions).join('\n');
  assert.match(t, /\| --kube-api-qps 50 \| 1000 \| 2 \(0\) \| ≤ 0\.05 \| ≤ 0\.05 \| ≤ 0\.025 \| ≤ 0\.05 \| 3 \| 10\.0 \| 120 \| PASS \|/);
  assert.match(t, /\| unthrottled \| 1000 \| 2 \(0\) \| ≤ 2 \| ≤ 2 \| ≤ 0\.025 \| ≤ 0\.05 \| 3 \| 10\.0 \| 1,900 \| FAIL \|/);
  assert.match(t, /\| --kube-api-qps 50 \+ kube-api-access volume \| 1000 \| – \| – \| – \| – \| – \| – \| – \| – \| not measured \|/);
  const md = clusterSection({ workloads: [], cluster: sessions } as unknown as BenchResults).join('\n');
  assert.ok(md.includes('### Node lease during the burst') && md.includes(t), 'report.md carries the same table');
});
