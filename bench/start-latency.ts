#!/usr/bin/env node
/**
 * Per-pod start latency of one burst (issue 28): agent configurations compared in alternating
 * rounds on one runtime, a fresh agent per round. Per round:
 *   - idle RSS: the agent's VmRSS `--idle-s` seconds after it is ready, before any manifest;
 *   - the burst: N static host-network busybox pods written at once (the bench's manifests);
 *     first Running = the first pod's `pod running` line − the burst's start; start p50/p99 per
 *     pod = its `pod running` line − its manifest's write (the agent's own seen → Running in
 *     brackets); all Running = the last pod's line − the burst's start;
 *   - RSS with N running, `--idle-s` seconds after the last pod ran.
 * Then the agent stops and the runtime is emptied (sim: a fresh one per round; containerd: CRI
 * teardown of every sandbox) before the next round.
 *
 *   node dist/bench/start-latency.js --runtime sim-containerd --pods 200 --rounds 2 \
 *     --config 'unbounded=--max-parallel-pod-starts-per-thread=0' --config 'bound8='
 *
 * `--runtime containerd` starts a private containerd (root; the test harness's); `sim-zero` and
 * `sim-containerd` the simulated runtime with that profile. Prints one row per round, then the
 * medians per configuration. Writes nothing else.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { realClock } from '../src/shared/clock/clock.js';
import { RunningLog } from './agent-observer.js';
import { intFlag } from './int-flag.js';
import { readCpuSeconds, readMemory } from './measure.js';
import { BENCH_IMAGE, ManifestDir } from './pod-manifests.js';
import { waitRunning } from './pod-waits.js';
import { freePort, startAgent, startSimRuntime } from './processes.js';
import { percentile } from './stats.js';

const USAGE = `usage: node dist/bench/start-latency.js [--runtime sim-zero|sim-containerd|containerd] [--pods N] [--rounds R]
  [--workers W] [--idle-s S] [--logs DIR] [--agent-script NAME=PATH]... --config NAME=FLAGS ... (FLAGS: agent flags separated by spaces; empty = defaults)
`;

const clock = realClock;

interface Row {
  config: string;
  round: number;
  idleRssMiB: number | null;
  firstRunningS: number;
  p50S: number;
  p99S: number;
  seenP50S: number;
  seenP99S: number;
  allRunningS: number;
  cpuMsPerPod: number;
  rssMiB: number | null;
}

interface Runtime {
  /** A runtime for one round: its endpoint, and how to empty it (or stop it) afterwards. */
  round(): Promise<{ endpoint: string; done(): Promise<void> }>;
  /** Agent flags this runtime needs (containerd: the harness's own cgroup root, never the host's). */
  agentArgs: readonly string[];
  stop(): Promise<void>;
}

async function simRuntime(profile: string): Promise<Runtime> {
  return {
    async round() {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-startlat-sim-'));
      const socket = path.join(dir, 'cri.sock');
      const sim = await startSimRuntime({ clock, socket, profile, images: [BENCH_IMAGE], logFile: path.join(dir, 'sim.log') });
      return {
        endpoint: `unix://${socket}`,
        async done() {
          await sim.stop();
          await fs.rm(dir, { recursive: true, force: true });
        },
      };
    },
    agentArgs: [],
    async stop() {},
  };
}

async function containerdRuntime(): Promise<Runtime> {
  if (process.getuid?.() !== 0) throw new Error('--runtime containerd needs root (a private containerd)');
  const { startContainerd } = await import('../test/harness/containerd-harness.js');
  const { teardownAllPods } = await import('../test/harness/cri-teardown.js');
  const ctrd = await startContainerd();
  return {
    async round() {
      return {
        endpoint: ctrd.endpoint,
        async done() {
          // A loaded containerd sometimes fails one removal: retry the leftovers (bounded).
          let left = 0;
          for (let attempt = 0; attempt < 3; attempt++) {
            left = await teardownAllPods(ctrd.endpoint, { concurrency: 16, totalTimeoutMs: 300_000 });
            if (left === 0) break;
          }
          if (left > 0) throw new Error(`containerd: ${left} sandbox(es) not removed between rounds`);
        },
      };
    },
    agentArgs: ['--cgroup-root', ctrd.agentCgroupRoot],
    stop: () => ctrd.stop(),
  };
}

async function oneRound(rt: Runtime, name: string, flags: readonly string[], script: string | undefined, round: number, pods: number, workers: number, idleMs: number, logDir: string | undefined): Promise<Row> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-startlat-'));
  const manifestDir = path.join(tmp, 'manifests');
  await fs.mkdir(manifestDir);
  const r = await rt.round();
  const log = new RunningLog(() => clock.monotonic());
  const port = await freePort();
  try {
    const agent = await startAgent({
      clock, endpoint: r.endpoint, manifestDir, rootDir: path.join(tmp, 'root'), podLogsDir: path.join(tmp, 'pod-logs'), nodeName: 'startlat-node',
      workers, maxPods: pods + 50, port, verbosity: 2, readyTimeoutMs: 120_000, ...(script !== undefined ? { agentScript: script } : {}), onStderrLine: log.onLine, logFile: path.join(logDir ?? tmp, logDir === undefined ? 'agent.log' : `${name}-${round}.log`), extraArgs: [...rt.agentArgs, ...flags],
    });
    try {
      await clock.sleep(idleMs);
      const idleRssMiB = readMemory(agent.pid).rssMiB;
      const manifests = new ManifestDir(manifestDir, () => clock.monotonic());
      const cpu0 = readCpuSeconds(agent.pid);
      const t0 = clock.monotonic();
      const created = await manifests.create(pods);
      const w = await waitRunning(created, { clock, log, agentPort: port, onProgress: (d, t) => process.stderr.write(`\r${name} round ${round}: ${d}/${t} running `) }, { timeoutMs: 60_000 + pods * 1000, stallMs: 180_000 });
      process.stderr.write('\n');
      if (w.gaveUp !== null) throw new Error(`${name} round ${round}: ${w.gaveUp}`);
      const cpuMsPerPod = ((readCpuSeconds(agent.pid) - cpu0) * 1000) / pods;
      const fromWrite: number[] = [];
      const seen: number[] = [];
      let first = Infinity;
      let last = 0;
      for (const p of created) {
        const ev = log.get(p.uid);
        if (ev === undefined) continue;
        fromWrite.push(ev.atMs - p.writtenAtMs);
        if (ev.seenToRunningMs !== null) seen.push(ev.seenToRunningMs);
        first = Math.min(first, ev.atMs - t0);
        last = Math.max(last, ev.atMs - t0);
      }
      await clock.sleep(idleMs);
      const rssMiB = readMemory(agent.pid).rssMiB;
      return {
        config: name, round, idleRssMiB, firstRunningS: first / 1000, p50S: percentile(fromWrite, 50) / 1000, p99S: percentile(fromWrite, 99) / 1000,
        seenP50S: percentile(seen, 50) / 1000, seenP99S: percentile(seen, 99) / 1000, allRunningS: last / 1000, cpuMsPerPod, rssMiB,
      };
    } finally {
      await agent.stop();
    }
  } finally {
    await r.done();
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

function f(v: number | null, d = 2): string {
  return v === null || !Number.isFinite(v) ? '–' : v.toFixed(d);
}

const HEADER = '| config | round | first Running s | start p50 s | start p99 s | (seen→Running p50 / p99 s) | all Running s | agent CPU ms/pod | RSS idle MiB | RSS with N running MiB |\n| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |';

function line(r: Row, round: string): string {
  return `| ${r.config} | ${round} | ${f(r.firstRunningS)} | ${f(r.p50S)} | ${f(r.p99S)} | ${f(r.seenP50S)} / ${f(r.seenP99S)} | ${f(r.allRunningS)} | ${f(r.cpuMsPerPod)} | ${f(r.idleRssMiB, 0)} | ${f(r.rssMiB, 0)} |`;
}

function median(xs: readonly (number | null)[]): number | null {
  const v = xs.filter((x): x is number => x !== null && Number.isFinite(x));
  return v.length === 0 ? null : percentile(v, 50);
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { runtime: { type: 'string', default: 'sim-containerd' }, pods: { type: 'string' }, rounds: { type: 'string' }, workers: { type: 'string' }, 'idle-s': { type: 'string' }, logs: { type: 'string' }, 'agent-script': { type: 'string', multiple: true }, config: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const pods = intFlag(values.pods, 'pods', 200, 1, 20_000, USAGE);
  const rounds = intFlag(values.rounds, 'rounds', 2, 1, 20, USAGE);
  const workers = intFlag(values.workers, 'workers', 2, 0, 16, USAGE);
  const idleMs = intFlag(values['idle-s'], 'idle-s', 5, 1, 120, USAGE) * 1000;
  const configs = (values.config ?? ['defaults=']).map((c) => {
    const eq = c.indexOf('=');
    if (eq <= 0) throw new Error(`--config: NAME=FLAGS, got ${JSON.stringify(c)}\n${USAGE}`);
    const flags = c.slice(eq + 1).split(/\s+/).filter((x) => x !== '');
    for (const a of flags) if (!/^--[a-z0-9-]+(=[\w.,-]*)?$/.test(a)) throw new Error(`--config: agent flags as --flag or --flag=value, got ${JSON.stringify(a)}`);
    return { name: c.slice(0, eq), flags };
  });
  // --agent-script NAME=PATH: that configuration runs another build's dist/src/cli/main.js (a before/after pair in one run).
  const scripts = new Map<string, string>();
  for (const a of values['agent-script'] ?? []) {
    const eq = a.indexOf('=');
    if (eq <= 0 || !configs.some((c) => c.name === a.slice(0, eq))) throw new Error(`--agent-script: NAME=PATH naming a --config, got ${JSON.stringify(a)}\n${USAGE}`);
    scripts.set(a.slice(0, eq), a.slice(eq + 1));
  }
  const kind = values.runtime;
  const rt = kind === 'containerd' ? await containerdRuntime() : kind === 'sim-zero' ? await simRuntime('zero') : kind === 'sim-containerd' ? await simRuntime('containerd') : undefined;
  if (rt === undefined) throw new Error(`--runtime: sim-zero, sim-containerd or containerd, got ${JSON.stringify(kind)}\n${USAGE}`);
  const rows: Row[] = [];
  try {
    // Alternating: A B, then B A, … so neither configuration always runs first.
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? configs : [...configs].reverse();
      for (const c of order) {
        const row = await oneRound(rt, c.name, c.flags, scripts.get(c.name), i + 1, pods, workers, idleMs, values.logs);
        rows.push(row);
        process.stderr.write(`${line(row, String(row.round))}\n`);
      }
    }
  } finally {
    await rt.stop();
  }
  const out = [`${kind}, ${pods} pods, --workers ${workers}, ${rounds} round(s); load average (1 min) at the end ${os.loadavg()[0]?.toFixed(2)} on ${os.availableParallelism()} cores`, '', HEADER];
  for (const r of rows) out.push(line(r, String(r.round)));
  for (const c of configs) {
    const mine = rows.filter((r) => r.config === c.name);
    const m = (k: keyof Row): number | null => median(mine.map((r) => r[k] as number | null));
    out.push(line({ config: c.name, round: 0, idleRssMiB: m('idleRssMiB'), firstRunningS: m('firstRunningS') ?? NaN, p50S: m('p50S') ?? NaN, p99S: m('p99S') ?? NaN, seenP50S: m('seenP50S') ?? NaN, seenP99S: m('seenP99S') ?? NaN, allRunningS: m('allRunningS') ?? NaN, cpuMsPerPod: m('cpuMsPerPod') ?? NaN, rssMiB: m('rssMiB') }, 'median'));
  }
  process.stdout.write(out.join('\n') + '\n');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`start-latency: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
