/**
 * The memory table of report.md and the terminal (issue 15): per configuration and pod count,
 * at the end of the steady-state window (the burst's when the session ran no steady state):
 * the agent's RSS (all threads; the sim-runtime is its own process, shown beside it), each
 * thread's V8 isolate (committed / used / external MiB), and the relist p50/p99 at that size.
 * Pure: results in, Markdown out.
 */
import { configLabel, type WorkloadResult } from './results.js';
import { fmt } from './report-md.js';
import { totalMiB, type ThreadMemoryRow } from './thread-memory.js';

function threadCell(rows: readonly ThreadMemoryRow[] | undefined): string {
  if (rows === undefined || rows.length === 0) return '–';
  return rows.map((t) => `${t.role === 'pod-worker' ? `w${t.thread}` : t.role} ${fmt(t.committedMiB, 0)}/${fmt(t.usedMiB, 0)}/${fmt(t.externalMiB, 0)}`).join('; ');
}

/** null when no result carries memory figures. */
export function memoryTable(results: readonly WorkloadResult[]): string | null {
  const picked = new Map<string, WorkloadResult>();
  for (const r of results) {
    if (r.workload !== 'steady' && r.workload !== 'burst') continue;
    const k = `${configLabel(r)}|${r.podCount}`;
    const have = picked.get(k);
    if (have === undefined || (have.workload === 'burst' && r.workload === 'steady')) picked.set(k, r);
  }
  const rows = [...picked.values()].sort((a, b) => a.runtime.localeCompare(b.runtime) || a.profile.localeCompare(b.profile) || a.podCount - b.podCount || a.workers - b.workers);
  if (rows.length === 0) return null;
  const lines = [
    '| configuration | pods | at end of | agent RSS MiB | agent peak RSS MiB | runtime RSS MiB | V8 heaps committed MiB (all threads) | per thread: committed / used / external MiB | relist p50 / p99 ms |',
    '| :--- | ---: | :--- | ---: | ---: | ---: | ---: | :--- | ---: |',
  ];
  for (const r of rows) {
    lines.push(
      `| ${configLabel(r)} | ${r.podCount} | ${r.workload} | ${fmt(r.rssMiB)} | ${fmt(r.peakRssMiB)} | ${fmt(r.runtimeRssMiB ?? null)} | ${fmt(totalMiB(r.threads ?? [], 'committedMiB'))} | ${threadCell(r.threads)} | ${fmt(r.relist?.p50Ms ?? null)} / ${fmt(r.relist?.p99Ms ?? null)} |`,
    );
  }
  return lines.join('\n');
}
