/**
 * Scrape cost on the REAL agent, and what a scrape load does to pod starts:
 *
 *   node dist/bench/scrape-run.js [--pods 1000] [--burst 500] [--workers 4]
 *        [--connections 10] [--duration 10] [--paced-rate 1] [--profile zero] [--json FILE]
 *
 * 1. starts the simulated runtime and `shardlet agent --workers N` (separate processes), and
 *    brings `--pods` static pods to Running;
 * 2. scrape: autocannon against the agent's /metrics (`runScrapeBench`, gzip like Prometheus,
 *    `--connections` for `--duration` s): p50/p99 latency, requests/s, bytes per response;
 * 3. burst without scrape load: `--burst` new manifests at once; pods/s from the first manifest
 *    written to the last pod the agent logged `pod running`; then the burst pods are removed
 *    and the agent is back to `--pods` pods;
 * 4. burst under a Prometheus-like scrape load (one connection, `--paced-rate` scrapes/s),
 *    then removed again;
 * 5. burst under a saturating scrape load: autocannon as in 2 (as fast as the agent answers).
 *    Each scrape window is sized to cover its whole burst; the table says when it did not.
 * 6. the unloaded burst again, last: a control for order effects.
 * Prints a table and the exact command line. Everything runs on this machine, so the scrape
 * load (autocannon included) competes with the agent and the runtime for the same cores —
 * which is the question: what does a scraping Prometheus cost a busy node.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { realClock } from '../src/shared/clock/clock.js';
import { fetchPods, RunningLog } from './agent-observer.js';
import { ManifestDir, BENCH_IMAGE, type BenchPod } from './pod-manifests.js';
import { waitRunning } from './pod-waits.js';
import { freePort, startAgent, startSimRuntime, type ManagedProcess } from './processes.js';
import { runScrapeBench, type ScrapeBenchResult } from './scrape.js';
import { percentile } from './stats.js';

export interface ScrapeRunOptions {
  pods: number;
  burst: number;
  workers: number;
  connections: number;
  durationSec: number;
  profile: string;
  /** Scrapes per second of the Prometheus-like load (one connection). */
  pacedRate: number;
}

export interface BurstResult {
  label: string;
  pods: number;
  /** First manifest written → last pod logged running (ms). */
  wallMs: number;
  podsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Manifest written → agent saw the pod (ms, p50): wall-to-running minus the agent's own latency. */
  intakeP50Ms: number;
  missing: number;
  /** The burst under load: scrape results over the window, and whether it covered the burst. */
  scrape?: ScrapeBenchResult;
  scrapeCoveredBurst?: boolean;
}

export interface ScrapeRunResult {
  options: ScrapeRunOptions;
  initialStartMs: number;
  scrape: ScrapeBenchResult;
  bursts: BurstResult[];
}

const clock = realClock;

async function burst(label: string, dir: ManifestDir, log: RunningLog, port: number, count: number): Promise<BurstResult> {
  const pods: BenchPod[] = await dir.create(count);
  const w = await waitRunning(pods, { clock, log, agentPort: port }, { timeoutMs: 600_000, stallMs: 60_000 });
  const firstWritten = Math.min(...pods.map((p) => p.writtenAtMs));
  const lastRunning = Math.max(...w.runningAtMs.values());
  const wallMs = lastRunning - firstWritten;
  const lat = [...w.latencyMs.values()];
  const intake = pods.flatMap((p) => {
    const at = w.runningAtMs.get(p.uid);
    const l = w.latencyMs.get(p.uid);
    return at !== undefined && l !== undefined ? [at - p.writtenAtMs - l] : [];
  });
  return {
    label,
    pods: count,
    wallMs: Math.round(wallMs),
    podsPerSec: Number(((w.runningAtMs.size * 1000) / wallMs).toFixed(1)),
    latencyP50Ms: Math.round(percentile(lat, 50)),
    latencyP99Ms: Math.round(percentile(lat, 99)),
    intakeP50Ms: Math.round(percentile(intake, 50)),
    missing: w.missing.length,
  };
}

/** Removes the newest `count` pods and waits until /pods lists `remaining` pods again. */
async function removeBurst(dir: ManifestDir, port: number, count: number, remaining: number): Promise<void> {
  const live = dir.live();
  await dir.delete(live.slice(live.length - count));
  const deadline = clock.monotonic() + 300_000;
  for (;;) {
    const n = (await fetchPods(port, 30_000).catch(() => undefined))?.length;
    if (n === remaining) return;
    if (clock.monotonic() > deadline) throw new Error(`agent still lists ${n} pods, want ${remaining}`);
    await clock.sleep(500);
  }
}

export async function runScrapeRun(o: ScrapeRunOptions, progress: (msg: string) => void): Promise<ScrapeRunResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-scrape-run-'));
  const manifests = path.join(root, 'manifests');
  fs.mkdirSync(manifests);
  const dir = new ManifestDir(manifests, () => clock.monotonic());
  const log = new RunningLog(() => clock.monotonic());
  let sim: ManagedProcess | undefined;
  let agent: ManagedProcess | undefined;
  try {
    sim = await startSimRuntime({ socket: path.join(root, 'sim.sock'), profile: o.profile, images: [BENCH_IMAGE], clock, logFile: path.join(root, 'sim.log') });
    const port = await freePort();
    agent = await startAgent({
      endpoint: `unix://${path.join(root, 'sim.sock')}`, manifestDir: manifests, rootDir: path.join(root, 'agent'), nodeName: 'scrape-run',
      workers: o.workers, maxPods: o.pods + o.burst + 64, port, verbosity: 2, clock, onStderrLine: log.onLine, logFile: path.join(root, 'agent.log'),
    });
    progress(`agent up on :${port}; starting ${o.pods} pods`);
    const initial = await burst('initial', dir, log, port, o.pods);
    if (initial.missing > 0) throw new Error(`${initial.missing} of the initial ${o.pods} pods never ran`);
    const url = `http://127.0.0.1:${port}/metrics`;

    progress(`${o.pods} pods running (${initial.podsPerSec} pods/s); scraping /metrics for ${o.durationSec} s with ${o.connections} connections`);
    const scrape = await runScrapeBench({ url, connections: o.connections, durationSec: o.durationSec });

    progress(`burst of ${o.burst} pods, no scrape load`);
    const quiet = await burst('burst, no scrape load', dir, log, port, o.burst);
    progress(`${quiet.podsPerSec} pods/s; removing the burst`);
    await removeBurst(dir, port, o.burst, o.pods);

    // Each loaded burst runs inside one scrape window, sized to cover it even if it runs 10×
    // slower than the unloaded one (the table says when it did not).
    const windowSec = Math.max(o.durationSec, Math.ceil((10 * quiet.wallMs) / 1000) + 10);
    const underLoad = async (label: string, load: { connections: number; overallRate?: number }): Promise<BurstResult> => {
      progress(`burst of ${o.burst} pods under scrape load: ${label} (window ${windowSec} s)`);
      const t0 = clock.monotonic();
      const scraping = runScrapeBench({ url, connections: load.connections, durationSec: windowSec, ...(load.overallRate !== undefined ? { overallRate: load.overallRate } : {}) });
      const b = await burst(`burst, ${label}`, dir, log, port, o.burst);
      const burstEnd = clock.monotonic();
      b.scrape = await scraping;
      b.scrapeCoveredBurst = burstEnd - t0 <= windowSec * 1000;
      return b;
    };
    const paced = await underLoad(`Prometheus-like scrape (1 conn, ${o.pacedRate}/s)`, { connections: 1, overallRate: o.pacedRate });
    progress(`${paced.podsPerSec} pods/s; removing the burst`);
    await removeBurst(dir, port, o.burst, o.pods);
    const saturating = await underLoad(`saturating scrape (${o.connections} conns, unbounded)`, { connections: o.connections });
    progress(`${saturating.podsPerSec} pods/s; removing the burst`);
    await removeBurst(dir, port, o.burst, o.pods);
    // Control for order effects (leftover teardown work from the removals, a warmer process):
    // the unloaded burst once more, last.
    progress(`burst of ${o.burst} pods, no scrape load (control, last)`);
    const control = await burst('burst, no scrape load (control, run last)', dir, log, port, o.burst);
    return { options: o, initialStartMs: initial.wallMs, scrape, bursts: [quiet, paced, saturating, control] };
  } finally {
    await agent?.stop();
    await sim?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export function formatScrapeRun(r: ScrapeRunResult, command: string): string {
  const o = r.options;
  const s = r.scrape;
  const rows: string[] = [];
  rows.push(`shardlet scrape-run: ${o.pods} running pods, --workers ${o.workers}, sim profile ${o.profile}, ${os.cpus().length} cores`);
  rows.push(`command: ${command}`);
  rows.push('');
  rows.push(`| /metrics scrape (${s.connections} conns, ${s.durationSec} s, gzip) | req/s | p50 ms | p99 ms | max ms | bytes/resp | non2xx | errors |`);
  rows.push('|---|---|---|---|---|---|---|---|');
  rows.push(`| ${o.pods} pods, idle | ${s.requestsPerSec.toFixed(0)} | ${s.latencyP50Ms} | ${s.latencyP99Ms} | ${s.latencyMaxMs} | ${s.bytesPerResponse} | ${s.non2xx} | ${s.errors} |`);
  for (const b of r.bursts) {
    const l = b.scrape;
    if (l === undefined) continue;
    rows.push(`| during a ${b.pods}-pod ${b.label} (${l.connections} conns, ${l.durationSec} s window) | ${l.requestsPerSec.toFixed(1)} | ${l.latencyP50Ms} | ${l.latencyP99Ms} | ${l.latencyMaxMs} | ${l.bytesPerResponse} | ${l.non2xx} | ${l.errors} |`);
  }
  rows.push('');
  rows.push('| pod-start burst (on top of the running pods) | pods | wall s | pods/s | seen→running p50 ms | seen→running p99 ms | written→seen p50 ms | missing |');
  rows.push('|---|---|---|---|---|---|---|---|');
  for (const b of r.bursts) {
    const note = b.scrapeCoveredBurst === false ? ' (scrape window ended before the burst did)' : '';
    rows.push(`| ${b.label}${note} | ${b.pods} | ${(b.wallMs / 1000).toFixed(1)} | ${b.podsPerSec} | ${b.latencyP50Ms} | ${b.latencyP99Ms} | ${b.intakeP50Ms} | ${b.missing} |`);
  }
  const quiet = r.bursts[0];
  if (quiet) for (const b of r.bursts.slice(1)) rows.push(`${b.label}: ${((100 * b.podsPerSec) / quiet.podsPerSec).toFixed(0)}% of the unloaded burst's pods/s`);
  rows.push(`(burst order: unloaded, paced, saturating, unloaded control, each on ${o.pods} running pods; initial ${o.pods} pods reached Running in ${(r.initialStartMs / 1000).toFixed(1)} s; seen→running = the agent's seenToRunningMs; written→seen = manifest write to the agent seeing it, incl. log delivery)`);
  return rows.join('\n') + '\n';
}

const SCRAPE_RUN_USAGE = `usage: node dist/bench/scrape-run.js [--pods 1000] [--burst 500] [--workers 4]
         [--connections 10] [--duration 10] [--paced-rate 1] [--profile zero] [--json FILE]
Scrape cost on the real agent (autocannon on /metrics) and pod bursts with and without scrape load.
`;

async function cli(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(SCRAPE_RUN_USAGE);
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({
    args: argv,
    options: {
      pods: { type: 'string', default: '1000' }, burst: { type: 'string', default: '500' }, workers: { type: 'string', default: '4' },
      connections: { type: 'string', default: '10' }, duration: { type: 'string', default: '10' }, profile: { type: 'string', default: 'zero' },
      json: { type: 'string' }, 'paced-rate': { type: 'string', default: '1' },
    },
  });
  } catch (err) {
    process.stderr.write(`scrape-run: ${err instanceof Error ? err.message : String(err)}\n${SCRAPE_RUN_USAGE}`);
    return 2;
  }
  const { values } = parsed;
  const o: ScrapeRunOptions = {
    pods: Number(values.pods), burst: Number(values.burst), workers: Number(values.workers),
    connections: Number(values.connections), durationSec: Number(values.duration), profile: values.profile,
    pacedRate: Number(values['paced-rate']),
  };
  for (const [k, v] of Object.entries(o)) {
    if (typeof v === 'number' && (!Number.isInteger(v) || v < 1)) {
      process.stderr.write(`scrape-run: --${k === 'durationSec' ? 'duration' : k === 'pacedRate' ? 'paced-rate' : k} must be a positive integer\n`);
      return 2;
    }
  }
  const r = await runScrapeRun(o, (m) => process.stderr.write(`[scrape-run] ${m}\n`));
  const command = `node dist/bench/scrape-run.js ${argv.join(' ')}`.trim();
  process.stdout.write(formatScrapeRun(r, command));
  if (values.json !== undefined) fs.writeFileSync(values.json, JSON.stringify({ command, ...r }, null, 2) + '\n');
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  cli(process.argv.slice(2)).then((c) => { process.exitCode = c; }, (e: unknown) => { process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`); process.exitCode = 1; });
}
