import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderReport, workloadTable } from '../../../bench/report-md.js';
import { buildCharts } from '../../../bench/charts.js';
import { applyCeilings } from '../../../bench/cri-ceiling-source.js';
import type { BenchResults, WorkloadResult } from '../../../bench/results.js';

function row(over: Partial<WorkloadResult>): WorkloadResult {
  return {
    runtime: 'sim', profile: 'zero', workers: 0, workload: 'burst', pods: 100, podCount: 100, podsPerSec: 250, ceilingFraction: 0.5,
    startupMs: { count: 100, min: 1, mean: 10, p50: 9, p90: 20, p99: 31.25, max: 40 }, startupSource: 'agent-log', startupSamplesMs: [1, 9, 20, 40],
    eventLoopDelayMs: { p50: 1, p99: 12.5, max: 30, metric: 'm' }, relist: null, agentCpuSeconds: 1, cpuMsPerPod: 10, cpuCores: 0.5,
    runtimeCpuSeconds: 0.2, rssMiB: 80, peakRssMiB: 90, criCalls: null, criCallsPerPod: null, durationS: 2, notes: [], ...over,
  };
}

function results(over: Partial<BenchResults> = {}): BenchResults {
  return {
    profile: 'quick', startedAt: '2025-01-01T00:00:00.000Z', durationS: 120,
    machine: { cpuModel: 'Test CPU', cores: 2, memoryGiB: 8, node: 'v20.0.0', platform: 'linux', kernel: '6.1' },
    matrix: { workers: [0, 2], podCounts: [100, 1000], profiles: ['zero'], churnPodsPerSec: 20, slowChurnPodsPerSec: 5, steadySeconds: 5, churnSeconds: 5 },
    workloads: [
      row({ workers: 2, podCount: 1000, pods: 1000, podsPerSec: 400 }),
      row({ relist: { count: 5, meanMs: 40, p99Ms: 90, mainThreadMsPerRelist: 2, mainThreadShare: 0.05, mainThreadMetric: 'x' } }),
      row({ workload: 'steady', podsPerSec: null, cpuMsPerPod: null, relist: { count: 10, meanMs: 3, p99Ms: 8, mainThreadMsPerRelist: 0.75, mainThreadShare: 0.25, mainThreadMetric: 'x' } }),
      row({ workload: 'mass-delete', podsPerSec: 300, startupMs: null, startupSource: null }),
    ],
    ceilings: [{ runtime: 'sim', profile: 'zero', pods: 100, concurrency: 16, podsPerSec: 500, p50Ms: 3, p99Ms: 9, teardownPodsPerSec: 600, clientCpuMsPerPod: 0.5 }],
    failures: [],
    skipped: ['real containerd: not root'],
    ...over,
  };
}

test('burst table: one row per configuration, sorted, with every column', () => {
  const t = workloadTable('burst', results().workloads.filter((w) => w.workload === 'burst'));
  const lines = t.split('\n');
  assert.equal(lines.length, 4);
  assert.equal(lines[0], '| configuration | pods | pods/s | of ceiling | p50 ms | p90 ms | p99 ms | ELD p99 ms | relist mean ms | main-thread PLEG ms/relist | CPU ms/pod | CRI calls/pod | RSS MiB |');
  assert.equal(lines[2], '| sim/zero w=0 (inline) | 100 | 250.0 | 50% | 9.0 | 20.0 | 31.3 | 12.5 | 40.0 | 2.00 (5%) | 10.00 | – | 80.0 |');
  assert.match(lines[3] ?? '', /^\| sim\/zero w=2 \| 1000 \| 400\.0 \|/);
});

test('missing values print as a dash, not zero', () => {
  const t = workloadTable('churn', [row({ workload: 'churn', startupMs: null, eventLoopDelayMs: null, rssMiB: null, ceilingFraction: null })]);
  assert.match(t.split('\n')[2] ?? '', /\| 250\.0 \| – \| – \| – \| – \| – \| – \| – \| 10\.00 \| – \| – \|$/);
});

test('mass delete: the rate to stopped, without the latency and ceiling-share columns it cannot fill', () => {
  const t = workloadTable('mass-delete', [row({ workload: 'mass-delete', startupMs: null, ceilingFraction: null, criCalls: { StopContainer: 100 }, criCallsPerPod: 1 })]);
  const [header = '', , line = ''] = t.split('\n');
  assert.match(header, /pods\/s to stopped/);
  assert.doesNotMatch(header, /of ceiling|\| p(50|90|99) ms/);
  assert.equal(line, '| sim/zero w=0 (inline) | 100 | 250.0 | 12.5 | – | – | 10.00 | 1.00 | 80.0 |');
});

test('CRI calls per pod by method, from the runtime counters; absent without counters', () => {
  const withCalls = results({ workloads: [row({ criCalls: { RunPodSandbox: 100, CreateContainer: 100, StartContainer: 100, PodSandboxStatus: 50 }, criCallsPerPod: 3.5 })] });
  const md = renderReport(withCalls);
  assert.match(md, /## CRI calls per pod/);
  assert.match(md, /\| configuration \| pods \| workload \| total \| CreateContainer \| PodSandboxStatus \| RunPodSandbox \| StartContainer \|/);
  assert.match(md, /\| sim\/zero w=0 \(inline\) \| 100 \| burst \| 3\.50 \| 1\.00 \| 0\.50 \| 1\.00 \| 1\.00 \|/);
  assert.doesNotMatch(renderReport(results()), /## CRI calls per pod/);
});

test('report has machine, verdict, skipped sections, ceilings, a table per workload and chart links', () => {
  const md = renderReport(results(), [{ file: 'x.svg', title: 'X chart' }]);
  assert.match(md, /Machine: Test CPU, 2 cores, 8\.0 GiB memory, Node v20\.0\.0/);
  assert.match(md, /\*\*PASS\*\*/);
  assert.match(md, /## Not run\n\n- real containerd: not root/);
  assert.match(md, /## Raw-CRI ceiling/);
  assert.match(md, /\| sim\/zero \| 100 \| – \| 16 \| 500\.0 \|/);
  for (const h of ['## Burst create', '## Steady state', '## Mass delete']) assert.ok(md.includes(h), h);
  assert.ok(!md.includes('## Steady churn'), 'no table for a workload that did not run');
  assert.match(md, /\| 0\.75 \| 25% \|/, 'main-thread PLEG ms per relist, then its share of relist time');
  assert.match(md, /- \[X chart\]\(x\.svg\)/);
});

test('summary: one row per configuration and pod count, each workload\'s key column side by side', () => {
  const md = renderReport(results());
  const summary = md.slice(md.indexOf('## Summary'), md.indexOf('## Raw-CRI ceiling'));
  const rows = summary.split('\n').filter((l) => l.startsWith('| sim/'));
  assert.equal(rows.length, new Set(results().workloads.map((w) => `${w.workers}|${w.podCount}`)).size);
  assert.ok(rows.includes('| sim/zero w=0 (inline) | 100 | 250.0 | 50% | 31.3 | 12.5 | 10.00 | – | 40.0 | 2.00 (5%) | 0.500 | – / 8.0 | – | – | 300.0 | 80.0 |'), rows.join('\n'));
  assert.ok(rows.includes('| sim/zero w=2 | 1000 | 400.0 | 50% | 31.3 | 12.5 | 10.00 | – | – | – | – | – | – | – | – | 80.0 |'), rows.join('\n'));
});

test('the load average is printed, with a warning when it exceeds the core count', () => {
  assert.match(renderReport(results({ loadAverage1m: { start: 0.5, end: 1.2 } })), /Load average \(1 min\) 0\.5 at the start, 1\.2 at the end \(the end includes the benchmark's own processes\)\./);
  // A busy end alone is the benchmark itself; a busy start means other work shared the CPUs.
  assert.doesNotMatch(renderReport(results({ loadAverage1m: { start: 0.3, end: 14 } })), /figures are noisy/);
  assert.match(renderReport(results({ loadAverage1m: { start: 9, end: 3 } })), /other work was already running at the start: figures are noisy/);
  assert.ok(!renderReport(results()).includes('Load average'));
});

test('failures turn the verdict to FAIL and are listed first', () => {
  const md = renderReport(results({ failures: ['pod default/p-1: two sandboxes'] }));
  assert.match(md, /\*\*FAIL \(1 correctness failure\)\*\*/);
  assert.ok(md.indexOf('## Correctness failures') < md.indexOf('## Raw-CRI ceiling'));
});

test('charts: a CDF per runtime and pod count, throughput, ELD and RSS', () => {
  const charts = buildCharts(results());
  assert.deepEqual(charts.map((c) => c.file).sort(), [
    'eld-vs-workers.svg', 'rss-vs-pods.svg', 'startup-cdf-sim-zero-100.svg', 'startup-cdf-sim-zero-1000.svg', 'throughput-vs-pods.svg',
    'throughput-vs-workers.svg',
  ]);
  const thr = charts.find((c) => c.file === 'throughput-vs-pods.svg')?.svg ?? '';
  assert.ok(thr.includes('>sim/zero w=0 (inline)<') && thr.includes('>sim/zero w=2<'));
  const thw = charts.find((c) => c.file === 'throughput-vs-workers.svg')?.svg ?? '';
  assert.ok(thw.includes('>sim/zero 100 pods<') && thw.includes('>sim/zero 1000 pods<'), 'one series per profile and pod count');
});

test('memory table: per configuration and size, the steady window (else the burst): agent and runtime RSS, each thread\'s heap, relist p50/p99', () => {
  const threads = [
    { thread: '0', role: 'main', committedMiB: 40, usedMiB: 30, externalMiB: 4 },
    { thread: 'pleg', role: 'pleg', committedMiB: 20, usedMiB: 15, externalMiB: 3 },
    { thread: '3', role: 'pod-worker', committedMiB: 18, usedMiB: 11, externalMiB: 3.6 },
  ];
  const md = renderReport(results({
    workloads: [
      row({ workers: 2, podCount: 5000, pods: 5000, rssMiB: 500, threads: [], runtimeRssMiB: 90 }),
      row({ workers: 2, podCount: 5000, pods: 5000, workload: 'steady', rssMiB: 520, peakRssMiB: 610, runtimeRssMiB: 95, threads, relist: { count: 9, meanMs: 30, p50Ms: 25, p99Ms: 48, mainThreadMsPerRelist: null, mainThreadShare: null, mainThreadMetric: null } }),
      row({ workers: 0, podCount: 100, rssMiB: 80 }),
    ],
  }));
  const section = md.slice(md.indexOf('## Memory and relist'));
  const rows = section.split('\n').filter((l) => l.startsWith('| sim/'));
  assert.deepEqual(rows, [
    '| sim/zero w=0 (inline) | 100 | burst | 80.0 | 90.0 | – | – | – | – / – |',
    '| sim/zero w=2 | 5000 | steady | 520.0 | 610.0 | 95.0 | 78.0 | main 40/30/4; pleg 20/15/3; w3 18/11/4 | 25.0 / 48.0 |',
  ]);
});

test('each session\'s rates are read against the ceiling measured right before it, and the report says which', () => {
  const ceiling = (podsPerSec: number, pods: number, before?: string): BenchResults['ceilings'][number] => ({
    runtime: 'sim', profile: 'zero', pods, concurrency: 64, podsPerSec, p50Ms: 1, p99Ms: 2, teardownPodsPerSec: 1, clientCpuMsPerPod: 0.3, ...(before !== undefined ? { before } : {}),
  });
  const ceilings = [ceiling(800, 1000, 'sim/zero w=0 (inline)'), ceiling(400, 1000, 'sim/zero w=2'), ceiling(1000, 5000, 'sim/zero w=2'), ceiling(500, 100)];
  const inline = row({ workers: 0, podCount: 1000, pods: 1000, podsPerSec: 200, ceilingFraction: null });
  const two = row({ workers: 2, podCount: 1000, pods: 1000, podsPerSec: 200, ceilingFraction: null });
  const churn = row({ workers: 2, workload: 'churn', podCount: 1000, pods: 100, podsPerSec: 40, ceilingFraction: null });
  const untagged = row({ workers: 4, podCount: 100, pods: 100, podsPerSec: 100, ceilingFraction: null });
  applyCeilings([inline, two, churn, untagged], ceilings);
  assert.equal(inline.ceilingFraction, 0.25, 'its own ceiling (800), not the later 400');
  assert.equal(two.ceilingFraction, 0.5, 'its own ceiling (400), not the same label\'s at 5,000 pods');
  assert.equal(churn.ceilingFraction, 0.1, 'a later workload of the session: the same ceiling');
  assert.equal(untagged.ceilingFraction, 0.2, 'no ceiling before its session: the one at its pod count');
  const md = renderReport(results({ ceilings }));
  assert.match(md, /\| sim\/zero \| 1000 \| sim\/zero w=2 \| 64 \| 400\.0 \|/);
});
