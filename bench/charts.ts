/**
 * Which charts the bench draws, built from BenchResults with svg-chart.ts:
 *   - startup-latency CDF, one chart per runtime/profile and pod count, one series per config;
 *   - burst throughput vs pod count, one series per configuration;
 *   - burst throughput vs workers, one series per runtime/profile and pod count (reads best for
 *     the quick matrix, where most configurations run at one pod count);
 *   - main-thread event-loop delay p99 (burst) vs workers, one series per profile and pod count;
 *   - agent RSS vs pod count, one series per configuration.
 * Pure: returns file names and SVG text; the runner writes them.
 */
import { cdfPoints } from './stats.js';
import { configLabel, type BenchResults, type WorkloadResult } from './results.js';
import { renderLineChart, type Series } from './svg-chart.js';

export interface ChartFile {
  file: string;
  title: string;
  svg: string;
}

function runtimeLabel(w: WorkloadResult): string {
  return w.runtime === 'sim' ? `sim/${w.profile}` : 'containerd';
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = m.get(k);
    if (list) list.push(it);
    else m.set(k, [it]);
  }
  return m;
}

function seriesOf(rows: readonly WorkloadResult[], key: (w: WorkloadResult) => string, point: (w: WorkloadResult) => [number, number] | null): Series[] {
  return [...groupBy(rows, key).entries()].map(([name, ws]) => ({
    name,
    points: ws
      .map(point)
      .filter((p): p is [number, number] => p !== null)
      .sort((a, b) => a[0] - b[0]),
  }));
}

export function buildCharts(r: BenchResults): ChartFile[] {
  const charts: ChartFile[] = [];
  const burst = r.workloads.filter((w) => w.workload === 'burst');
  for (const [key, rows] of groupBy(burst, (w) => `${runtimeLabel(w)}|${w.podCount}`)) {
    const [rt, n] = key.split('|') as [string, string];
    const title = `Startup latency CDF, burst of ${n} pods, ${rt}`;
    charts.push({
      file: `startup-cdf-${rt.replace('/', '-')}-${n}.svg`,
      title,
      svg: renderLineChart({
        title,
        xLabel: 'manifest seen → running (ms)',
        yLabel: 'fraction of pods',
        step: true,
        series: rows.sort((a, b) => a.workers - b.workers).map((w) => ({ name: configLabel(w), points: cdfPoints(w.startupSamplesMs) })),
      }),
    });
  }
  if (burst.length > 0) {
    const title = 'Burst throughput vs pod count';
    charts.push({
      file: 'throughput-vs-pods.svg',
      title,
      svg: renderLineChart({
        title,
        xLabel: 'pods (log scale)',
        yLabel: 'pods/s to running',
        xScale: 'log',
        series: seriesOf(burst, configLabel, (w) => (w.podsPerSec === null ? null : [w.podCount, w.podsPerSec])),
      }),
    });
    const titleW = 'Burst throughput vs worker threads';
    charts.push({
      file: 'throughput-vs-workers.svg',
      title: titleW,
      svg: renderLineChart({
        title: titleW,
        xLabel: 'worker threads (0 = inline)',
        yLabel: 'pods/s to running',
        series: seriesOf(burst, (w) => `${runtimeLabel(w)} ${w.podCount} pods`, (w) => (w.podsPerSec === null ? null : [w.workers, w.podsPerSec])),
      }),
    });
    const title2 = 'Main-thread event-loop delay p99 during burst vs workers';
    charts.push({
      file: 'eld-vs-workers.svg',
      title: title2,
      svg: renderLineChart({
        title: title2,
        xLabel: 'worker threads (0 = inline)',
        yLabel: 'event-loop delay p99 (ms)',
        series: seriesOf(burst, (w) => `${runtimeLabel(w)} ${w.podCount} pods`, (w) =>
          w.eventLoopDelayMs?.p99 == null ? null : [w.workers, w.eventLoopDelayMs.p99],
        ),
      }),
    });
  }
  // RSS: the steady-state sample (all pods running, settled); burst's end where steady did not run.
  const steady = r.workloads.filter((w) => w.workload === 'steady');
  const rssRows = steady.length > 0 ? steady : burst;
  if (rssRows.length > 0) {
    const title = 'Agent RSS vs pod count';
    charts.push({
      file: 'rss-vs-pods.svg',
      title,
      svg: renderLineChart({
        title,
        xLabel: 'pods running (log scale)',
        yLabel: 'agent RSS (MiB, all threads)',
        xScale: 'log',
        series: seriesOf(rssRows, configLabel, (w) => (w.rssMiB === null ? null : [w.podCount, w.rssMiB])),
      }),
    });
  }
  return charts;
}
