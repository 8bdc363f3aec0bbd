/**
 * Renders `report.md` from a BenchResults: the machine, the matrix, failures and skipped
 * sections first (a reader must not miss them), then the raw-CRI ceilings and one table per
 * workload. Pure: results in, Markdown out. Missing values print as "–", never as 0.
 */
import { clusterSection } from './report-cluster.js';
import { memoryTable } from './report-memory.js';
import { configLabel, type BenchResults, type CeilingResult, type WorkloadKind, type WorkloadResult } from './results.js';

const WORKLOAD_TITLES: Readonly<Record<WorkloadKind, string>> = Object.freeze({
  burst: 'Burst create (all manifests written at once → all pods running)',
  steady: 'Steady state (all pods running, nothing changing)',
  churn: 'Steady churn (create + delete at a fixed rate)',
  'mass-delete': 'Mass delete (all manifests removed → all pods gone from the runtime)',
});

const WORKLOAD_ORDER: readonly WorkloadKind[] = ['burst', 'steady', 'churn', 'mass-delete'];

export function fmt(v: number | null | undefined, digits = 1): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  return v.toFixed(digits);
}

function pct(v: number | null): string {
  return v === null || !Number.isFinite(v) ? '–' : `${(v * 100).toFixed(0)}%`;
}

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const esc = (c: string): string => c.replace(/\|/g, '\\|');
  const lines = [`| ${header.map(esc).join(' | ')} |`, `|${header.map((_h, i) => (i === 0 ? ' :--- ' : ' ---: ')).join('|')}|`];
  for (const r of rows) lines.push(`| ${r.map(esc).join(' | ')} |`);
  return lines.join('\n');
}

function sortRows(rows: readonly WorkloadResult[]): WorkloadResult[] {
  return [...rows].sort(
    (a, b) => a.runtime.localeCompare(b.runtime) || a.profile.localeCompare(b.profile) || a.podCount - b.podCount || a.workers - b.workers,
  );
}

/** Main-thread PLEG handling per relist, with its share of the relist time: "2.50 (1%)". */
function plegMain(r: WorkloadResult | undefined): string {
  const ms = r?.relist?.mainThreadMsPerRelist;
  if (ms === null || ms === undefined) return '–';
  return `${fmt(ms, 2)} (${pct(r?.relist?.mainThreadShare ?? null)})`;
}

export function workloadTable(kind: WorkloadKind, rows: readonly WorkloadResult[]): string {
  const sorted = sortRows(rows);
  if (kind === 'steady') {
    return table(
      ['configuration', 'pods', 'CPU cores', 'ELD p50 ms', 'ELD p99 ms', 'ELD max ms', 'relist mean ms', 'relist p50 ms', 'relist p99 ms', 'main-thread PLEG ms/relist', 'main-thread share', 'RSS MiB'],
      sorted.map((r) => [
        configLabel(r), String(r.podCount), fmt(r.cpuCores, 3), fmt(r.eventLoopDelayMs?.p50), fmt(r.eventLoopDelayMs?.p99), fmt(r.eventLoopDelayMs?.max),
        fmt(r.relist?.meanMs), fmt(r.relist?.p50Ms ?? null), fmt(r.relist?.p99Ms), fmt(r.relist?.mainThreadMsPerRelist, 2), pct(r.relist?.mainThreadShare ?? null), fmt(r.rssMiB),
      ]),
    );
  }
  if (kind === 'mass-delete') {
    // No per-pod latency (nothing logs a pod's stop) and no ceiling share: the rate is to
    // *stopped*, while the ceiling's teardown stops and removes (a share over 100% misled).
    return table(
      ['configuration', 'pods', 'pods/s to stopped', 'ELD p99 ms', 'relist mean ms', 'main-thread PLEG ms/relist', 'CPU ms/pod', 'CRI calls/pod', 'RSS MiB'],
      sorted.map((r) => [
        configLabel(r), String(r.pods), fmt(r.podsPerSec), fmt(r.eventLoopDelayMs?.p99), fmt(r.relist?.meanMs), plegMain(r), fmt(r.cpuMsPerPod, 2), fmt(r.criCallsPerPod, 2), fmt(r.rssMiB),
      ]),
    );
  }
  return table(
    ['configuration', 'pods', 'pods/s', 'of ceiling', 'p50 ms', 'p90 ms', 'p99 ms', 'ELD p99 ms', 'relist mean ms', 'main-thread PLEG ms/relist', 'CPU ms/pod', 'CRI calls/pod', 'RSS MiB'],
    sorted.map((r) => [
      configLabel(r), kind === 'churn' ? `${r.podCount} (+${r.pods})` : String(r.pods), fmt(r.podsPerSec), pct(r.ceilingFraction),
      fmt(r.startupMs?.p50), fmt(r.startupMs?.p90), fmt(r.startupMs?.p99), fmt(r.eventLoopDelayMs?.p99), fmt(r.relist?.meanMs), plegMain(r), fmt(r.cpuMsPerPod, 2), fmt(r.criCallsPerPod, 2), fmt(r.rssMiB),
    ]),
  );
}

/**
 * One row per configuration and pod count, the key column of each workload side by side (the
 * table the README's Performance section quotes).
 */
export function summaryTable(results: readonly WorkloadResult[]): string {
  const rows = new Map<string, Partial<Record<WorkloadKind, WorkloadResult>>>();
  for (const r of sortRows(results)) {
    const k = `${configLabel(r)}|${r.podCount}`;
    const row = rows.get(k) ?? {};
    row[r.workload] = r;
    rows.set(k, row);
  }
  return table(
    ['configuration', 'pods', 'burst pods/s', 'of ceiling', 'startup p99 ms', 'burst ELD p99 ms', 'burst CPU ms/pod', 'burst CRI calls/pod', 'burst relist mean ms', 'main-thread PLEG ms/relist (share)', 'steady CPU cores', 'steady relist p50 / p99 ms', 'churn pods/s', 'churn p99 ms', 'delete pods/s (to stopped)', 'RSS MiB'],
    [...rows.entries()].map(([k, w]) => {
      const [label = '', pods = ''] = k.split('|');
      return [
        label, pods, fmt(w.burst?.podsPerSec), pct(w.burst?.ceilingFraction ?? null), fmt(w.burst?.startupMs?.p99),
        fmt(w.burst?.eventLoopDelayMs?.p99), fmt(w.burst?.cpuMsPerPod, 2), fmt(w.burst?.criCallsPerPod, 2), fmt(w.burst?.relist?.meanMs), plegMain(w.burst), fmt(w.steady?.cpuCores, 3),
        w.steady?.relist ? `${fmt(w.steady.relist.p50Ms ?? null)} / ${fmt(w.steady.relist.p99Ms)}` : '–',
        fmt(w.churn?.podsPerSec), fmt(w.churn?.startupMs?.p99), fmt(w['mass-delete']?.podsPerSec), fmt((w.steady ?? w.burst)?.rssMiB),
      ];
    }),
  );
}

/**
 * CRI calls per pod by method, from the runtime's own counters (sim runtime only): what each
 * workload cost the runtime, whoever in the agent made the calls (pod workers, PLEG, probes).
 */
export function criCallsTable(results: readonly WorkloadResult[]): string | null {
  const rows = sortRows(results).filter((r) => r.criCalls !== null && r.workload !== 'steady' && r.pods > 0);
  if (rows.length === 0) return null;
  const methods = [...new Set(rows.flatMap((r) => Object.keys(r.criCalls ?? {})))].sort();
  return table(
    ['configuration', 'pods', 'workload', 'total', ...methods],
    rows.map((r) => [
      configLabel(r), String(r.pods), r.workload, fmt(r.criCallsPerPod, 2),
      ...methods.map((m) => { const n = r.criCalls?.[m]; return n === undefined ? '–' : fmt(n / r.pods, 2); }),
    ]),
  );
}

function ceilingTable(rows: readonly CeilingResult[]): string {
  return table(
    ['runtime', 'pods', 'measured right before', 'concurrency', 'pods/s', 'p50 ms', 'p99 ms', 'teardown pods/s', 'client CPU ms/pod'],
    rows.map((c) => [
      c.runtime === 'sim' ? `sim/${c.profile}` : 'containerd', `${c.pods}${(c.containersPerPod ?? 1) > 1 ? ` ×${c.containersPerPod} ctr` : ''}`, c.before ?? '–', String(c.concurrency), fmt(c.podsPerSec), fmt(c.p50Ms), fmt(c.p99Ms),
      fmt(c.teardownPodsPerSec), fmt(c.clientCpuMsPerPod, 2),
    ]),
  );
}

export function renderReport(r: BenchResults, charts: readonly { file: string; title: string }[] = []): string {
  const m = r.machine;
  const out: string[] = [];
  out.push(`# shardlet density benchmark (${r.profile} profile)`, '');
  out.push(`Started ${r.startedAt}, took ${fmt(r.durationS, 0)} s. **${r.failures.length === 0 ? 'PASS' : `FAIL (${r.failures.length} correctness failure${r.failures.length === 1 ? '' : 's'})`}**`, '');
  // The end figure includes the benchmark's own processes (agent threads, runtime, containerd);
  // only the start figure says whether other work was sharing the machine.
  const load = r.loadAverage1m
    ? ` Load average (1 min) ${fmt(r.loadAverage1m.start)} at the start, ${fmt(r.loadAverage1m.end)} at the end (the end includes the benchmark's own processes)${r.loadAverage1m.start > m.cores / 2 ? ' — other work was already running at the start: figures are noisy' : ''}.`
    : '';
  out.push(`Machine: ${m.cpuModel}, ${m.cores} cores, ${fmt(m.memoryGiB)} GiB memory, Node ${m.node}, ${m.platform} ${m.kernel}.${load}`, '');
  out.push(
    `Matrix: workers ${r.matrix.workers.join(', ')}; pod counts ${r.matrix.podCounts.join(', ')}; sim profiles ${r.matrix.profiles.join(', ')}; ` +
      `churn ${r.matrix.churnPodsPerSec} pods/s (sim/zero) and ${r.matrix.slowChurnPodsPerSec} pods/s (sim/containerd) for ${r.matrix.churnSeconds} s; steady window ${r.matrix.steadySeconds} s.` +
      (r.matrix.agentArgs !== undefined && r.matrix.agentArgs.length > 0 ? ` Every agent ran with ${r.matrix.agentArgs.map((a) => `\`${a}\``).join(' ')}.` : '') +
      (r.matrix.pin !== undefined ? ` CPU pinning (\`--pin\`): the sim runtime on CPUs ${r.matrix.pin.runtime}; each agent, and the ceiling's client, on CPUs ${r.matrix.pin.agent} (sim sections only).` : ''),
    '',
  );
  if (r.failures.length > 0) {
    out.push('## Correctness failures', '');
    for (const f of r.failures) out.push(`- ${f}`);
    out.push('');
  }
  if (r.skipped.length > 0) {
    out.push('## Not run', '');
    for (const s of r.skipped) out.push(`- ${s}`);
    out.push('');
  }
  if (r.workloads.length > 0) {
    out.push('## Summary (key column of each workload; "–" = not run or not reached)', '');
    out.push(summaryTable(r.workloads), '');
  }
  const calls = criCallsTable(r.workloads);
  if (calls !== null) out.push('## CRI calls per pod (the runtime\'s own per-method counters, all agent threads)', '', calls, '');
  out.push(...clusterSection(r));
  out.push('## Raw-CRI ceiling (same runtime and profile, no agent)', '');
  out.push(r.ceilings.length > 0 ? ceilingTable(r.ceilings) : '_No ceiling measured._', '');
  for (const kind of WORKLOAD_ORDER) {
    const rows = r.workloads.filter((w) => w.workload === kind);
    if (rows.length === 0) continue;
    out.push(`## ${WORKLOAD_TITLES[kind]}`, '');
    out.push(workloadTable(kind, rows), '');
    const sources = [...new Set(rows.map((w) => w.startupSource).filter((s) => s !== null))];
    if (sources.length > 0) out.push(`Startup latency source: ${sources.join(', ')}.`, '');
    const notes = rows.flatMap((w) => w.notes.map((n) => `${configLabel(w)} @${w.podCount}: ${n}`));
    for (const n of notes) out.push(`- ${n}`);
    if (notes.length > 0) out.push('');
  }
  const mem = memoryTable(r.workloads);
  if (mem !== null) {
    out.push('## Memory and relist at each size (end of the steady-state window; the agent process only)', '', mem, '');
    out.push('Threads: main, pleg (the PLEG thread), wN (pod-worker thread N). committed = V8 heap pages resident; used = objects (live and not yet collected); external = ArrayBuffers and other off-heap memory V8 tracks. RSS beyond the committed heaps is code, native (gRPC/HTTP/2, libuv) and allocator memory. The pod cache SharedArrayBuffer is counted once, in RSS, as its pages are touched.', '');
  }
  if (charts.length > 0) {
    out.push('## Charts', '');
    for (const c of charts) out.push(`- [${c.title}](${c.file})`);
    out.push('');
  }
  out.push(
    'Columns: startup = manifest seen → pod Running in the agent status; ELD = main-thread event-loop delay; ' +
      'CPU = agent process utime+stime (all threads) from /proc; RSS = agent VmRSS at the end of the workload; ' +
      'relist = kubelet_pleg_relist_duration_seconds (runs on the PLEG thread); main-thread PLEG = shardlet_pleg_events_main_thread_seconds_total ' +
      '(the main thread queueing and handling the relist\'s event batches), per relist and as a share of relist time.',
    '',
  );
  return out.join('\n');
}
