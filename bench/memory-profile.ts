#!/usr/bin/env node
/**
 * What a pod and a thread cost in memory (issue 15). One sim-runtime (zero profile) and one
 * agent per worker count; for each pod count, in order: write manifests up to that count, wait
 * until every pod runs, let the PLEG relist `--settle-s` seconds, then read
 *   - the agent's VmRSS (all threads; the sim-runtime is another process and is not counted),
 *   - each thread's V8 isolate (shardlet_thread_heap_bytes: committed, used, external),
 *   - the relist duration p50/p99 over that settle window (kubelet_pleg_relist_duration_seconds),
 * and with `--snapshots DIR` one heap snapshot per thread (the agent's SIGUSR2 diagnostic,
 * src/cli/heap-snapshots.ts; summarise with bench/heap-summary.ts).
 *
 *   node dist/bench/memory-profile.js --workers 0,2 --pods 0,1000,5000 [--snapshots DIR]
 *
 * Per pod = ΔRSS / Δpods between two counts of one agent; per thread = ΔRSS at 0 pods between
 * worker counts. Prints one table; writes nothing else (snapshots aside).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { realClock } from '../src/shared/clock/clock.js';
import { RunningLog, fetchMetricsText } from './agent-observer.js';
import { readCpuSeconds, readMemory, RELIST_METRIC } from './measure.js';
import { BENCH_IMAGE, ManifestDir } from './pod-manifests.js';
import { waitRunning } from './pod-waits.js';
import { freePort, startAgent, startSimRuntime } from './processes.js';
import { histogramBuckets, parsePromText, sampleSum, type ParsedMetrics } from './prom-text.js';
import { bucketDelta, histogramQuantile } from './stats.js';
import { threadMemory, totalMiB, type ThreadMemoryRow } from './thread-memory.js';
import { HEAP_SNAPSHOT_DIR_ENV } from '../src/cli/heap-snapshots.js';

const USAGE = `usage: node dist/bench/memory-profile.js [--workers 0,2] [--pods 0,1000,5000] [--settle-s 8] [--snapshots DIR] [--node-arg FLAG]... [--agent-arg FLAG]...
  one agent per worker count on a fresh sim-runtime (zero profile); at each pod count (ascending):
  agent RSS, each thread's V8 heap (committed/used/external MiB), relist p50/p99 and the agent's
  CPU (cores) over a window of --settle-s seconds that opens --settle-s seconds after the pods run; --snapshots DIR: one heap snapshot per thread per step;
  --node-arg: a flag for the agent's node process (V8 heap experiments, e.g. --max-semi-space-size=2);
  --agent-arg: a flag for shardlet agent itself (e.g. --optimize-for-size)
`;

const clock = realClock;

interface Step {
  workers: number;
  pods: number;
  rssMiB: number | null;
  threads: ThreadMemoryRow[];
  relistP50Ms: number | null;
  relistP99Ms: number | null;
  relists: number;
  /** Agent CPU seconds (all threads) from the previous step's end to this one's: the burst plus both settle windows. */
  cpuSeconds: number;
  /** Agent CPU (all threads, cores) over the second settle window alone: the settled steady state. */
  windowCores: number;
}

async function scrape(port: number): Promise<ParsedMetrics> {
  return parsePromText(await fetchMetricsText(port));
}

function relistQuantiles(before: ParsedMetrics, after: ParsedMetrics): { p50: number | null; p99: number | null; n: number } {
  const d = bucketDelta(histogramBuckets(before, RELIST_METRIC), histogramBuckets(after, RELIST_METRIC));
  const n = (sampleSum(after, `${RELIST_METRIC}_count`) ?? 0) - (sampleSum(before, `${RELIST_METRIC}_count`) ?? 0);
  const q = (x: number): number | null => {
    const v = histogramQuantile(d, x);
    return n > 0 && Number.isFinite(v) ? v * 1000 : null;
  };
  return { p50: q(0.5), p99: q(0.99), n };
}

/** Waits (bounded) for the agent to finish writing snapshot round `round`. */
async function snapshots(dir: string, pid: number, round: number): Promise<void> {
  process.kill(pid, 'SIGUSR2');
  const done = path.join(dir, `done-${round}.json`);
  const deadline = clock.monotonic() + 300_000;
  for (;;) {
    try {
      await fs.access(done);
      return;
    } catch {
      if (clock.monotonic() > deadline) throw new Error(`no ${done} within 300 s`);
      await clock.sleep(500);
    }
  }
}

async function profileAgent(workers: number, podCounts: readonly number[], settleMs: number, snapDir: string | undefined, nodeArgs: readonly string[], agentArgs: readonly string[]): Promise<Step[]> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-memprof-'));
  const socket = path.join(tmp, 'cri.sock');
  const manifestDir = path.join(tmp, 'manifests');
  await fs.mkdir(manifestDir);
  const sim = await startSimRuntime({ clock, socket, profile: 'zero', images: [BENCH_IMAGE], logFile: path.join(tmp, 'sim.log') });
  const steps: Step[] = [];
  const agentSnapDir = snapDir === undefined ? undefined : path.join(snapDir, `w${workers}`);
  if (agentSnapDir !== undefined) await fs.mkdir(agentSnapDir, { recursive: true });
  if (agentSnapDir !== undefined) process.env[HEAP_SNAPSHOT_DIR_ENV] = agentSnapDir;
  else delete process.env[HEAP_SNAPSHOT_DIR_ENV];
  const log = new RunningLog(() => clock.monotonic());
  const port = await freePort();
  const agent = await startAgent({
    clock, endpoint: `unix://${socket}`, manifestDir, rootDir: path.join(tmp, 'root'), podLogsDir: path.join(tmp, 'pod-logs'), nodeName: 'memprof-node',
    workers, maxPods: Math.max(110, Math.max(...podCounts) + 50), port, verbosity: 2, onStderrLine: log.onLine, logFile: path.join(tmp, 'agent.log'), nodeArgs, extraArgs: agentArgs,
  });
  try {
    const manifests = new ManifestDir(manifestDir, () => clock.monotonic());
    let round = 0;
    let cpu0 = readCpuSeconds(agent.pid);
    for (const n of podCounts) {
      const add = n - manifests.live().length;
      if (add > 0) {
        const pods = await manifests.create(add);
        const w = await waitRunning(pods, { clock, log, agentPort: port, onProgress: (d, t) => process.stderr.write(`\rw=${workers} ${d}/${t} running `) }, { timeoutMs: 60_000 + add * 100, stallMs: 60_000 });
        process.stderr.write('\n');
        if (w.gaveUp !== null) throw new Error(`w=${workers} @${n}: ${w.gaveUp}`);
      }
      // Settle: past the burst's last relists and GCs, then the window the figures describe.
      await clock.sleep(settleMs);
      const before = await scrape(port);
      const windowCpu0 = readCpuSeconds(agent.pid);
      const windowT0 = clock.monotonic();
      await clock.sleep(settleMs);
      const cpu1 = readCpuSeconds(agent.pid);
      const windowCores = (cpu1 - windowCpu0) / ((clock.monotonic() - windowT0) / 1000);
      const after = await scrape(port);
      const r = relistQuantiles(before, after);
      steps.push({ workers, pods: n, rssMiB: readMemory(agent.pid).rssMiB, threads: threadMemory(after), relistP50Ms: r.p50, relistP99Ms: r.p99, relists: r.n, cpuSeconds: cpu1 - cpu0, windowCores });
      cpu0 = cpu1;
      if (agentSnapDir !== undefined) {
        await snapshots(agentSnapDir, agent.pid, ++round);
        await fs.writeFile(path.join(agentSnapDir, `step-${round}.json`), JSON.stringify({ round, pods: n }) + '\n');
      }
    }
  } finally {
    await agent.stop();
    await sim.stop();
    await fs.rm(tmp, { recursive: true, force: true });
  }
  return steps;
}

function f(v: number | null, d = 1): string {
  return v === null ? '–' : v.toFixed(d);
}

function render(steps: readonly Step[]): string {
  const lines = ['| workers | pods | agent RSS MiB | Δ RSS per pod KiB | heap committed MiB (all threads) | per thread: committed / used / external MiB | relist p50 / p99 ms (relists) | agent CPU s since previous step | agent CPU cores, second settle window |', '| ---: | ---: | ---: | ---: | ---: | :--- | ---: | ---: | ---: |'];
  for (const s of steps) {
    const prev = [...steps].reverse().find((p) => p.workers === s.workers && p.pods < s.pods);
    const perPod = prev && s.rssMiB !== null && prev.rssMiB !== null ? ((s.rssMiB - prev.rssMiB) * 1024) / (s.pods - prev.pods) : null;
    const threads = s.threads.map((t) => `${t.role === 'pod-worker' ? `w${t.thread}` : t.role} ${f(t.committedMiB)}/${f(t.usedMiB)}/${f(t.externalMiB)}`).join('; ');
    lines.push(`| ${s.workers} | ${s.pods} | ${f(s.rssMiB)} | ${f(perPod)} | ${f(totalMiB(s.threads, 'committedMiB'))} | ${threads} | ${f(s.relistP50Ms)} / ${f(s.relistP99Ms)} (${s.relists}) | ${f(s.cpuSeconds, 2)} | ${f(s.windowCores, 3)} |`);
  }
  return lines.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { workers: { type: 'string', default: '0,2' }, pods: { type: 'string', default: '0,1000,5000' }, 'settle-s': { type: 'string', default: '8' }, snapshots: { type: 'string' }, 'node-arg': { type: 'string', multiple: true }, 'agent-arg': { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const ints = (flag: string, v: string): number[] => {
    const out = v.split(',').map((x) => Number(x.trim()));
    if (out.length === 0 || out.some((x) => !Number.isInteger(x) || x < 0 || x > 20_000)) throw new Error(`--${flag}: comma-separated integers 0..20000, got ${JSON.stringify(v)}`);
    return out;
  };
  const workers = ints('workers', values.workers);
  const pods = [...new Set(ints('pods', values.pods))].sort((a, b) => a - b);
  const settle = Number(values['settle-s']);
  if (!(settle >= 1 && settle <= 600)) throw new Error('--settle-s: 1..600');
  const snapDir = values.snapshots === undefined ? undefined : path.resolve(values.snapshots);
  const steps: Step[] = [];
  const nodeArgs = values['node-arg'] ?? [];
  const agentArgs = values['agent-arg'] ?? [];
  for (const a of [...nodeArgs, ...agentArgs]) if (!/^--[a-z0-9-]+(=[\w.-]+)?$/.test(a)) throw new Error(`--node-arg/--agent-arg: one --flag or --flag=value, got ${JSON.stringify(a)}`);
  for (const w of workers) steps.push(...(await profileAgent(w, pods, settle * 1000, snapDir, nodeArgs, agentArgs)));
  process.stdout.write(`load average (1 min) at the end: ${os.loadavg()[0]?.toFixed(2)} on ${os.availableParallelism()} cores\n\n${render(steps)}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`memory-profile: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    process.exit(1);
  },
);
