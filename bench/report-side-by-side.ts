/**
 * The side-by-side table (shardlet beside a real kubelet, side-by-side.ts) as Markdown: one row
 * per round in run order, the raw-CRI ceiling before and after under it. Pure.
 */
import type { SideBySideResult } from './side-by-side.js';

const f = (v: number | null | undefined, digits = 0): string => (v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits));

export function sideBySideTable(r: SideBySideResult): string {
  const title = `${r.runtime === 'containerd' ? 'containerd' : `sim/${r.profile}`}, ${r.pods} static host-network busybox pods, shardlet --workers ${r.shardletWorkers} vs kubelet ${r.kubeletVersion}, alternating rounds`;
  const rows = [
    `${title}:`,
    '',
    '| round | agent | pods/s to all Running | first Running (s) | start p50 / p99 (ms) | agent CPU per pod (ms) | RSS idle / at N (MiB) | steady CPU (% of a core) |',
    '|---|---|---|---|---|---|---|---|',
    ...r.rounds.map(
      (x) =>
        `| ${x.round} | ${x.agent} | ${f(x.podsPerSec, 2)} | ${f(x.firstRunningS, 2)} | ${f(x.startMs?.p50)} / ${f(x.startMs?.p99)} | ${f(x.cpuMsPerPod, 1)} | ${f(x.rssIdleMiB)} / ${f(x.rssAtNMiB)} | ${f(x.steadyCpuPct, 1)} |`,
    ),
    '',
    `raw-CRI ceiling (no agent, same runtime, ${r.pods} pods): before ${f(r.ceilingBefore?.podsPerSec, 2)} pods/s (p50 ${f(r.ceilingBefore?.p50Ms)} ms), after ${f(r.ceilingAfter?.podsPerSec, 2)} pods/s (p50 ${f(r.ceilingAfter?.p50Ms)} ms)`,
  ];
  return rows.join('\n');
}
