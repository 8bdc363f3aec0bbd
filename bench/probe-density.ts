/**
 * Probe density (issue 28 item 4): N pods on one simulated runtime, each with an exec readiness
 * probe and an HTTP liveness probe at the same period, run by shardlet and then by a real kubelet
 * (v1.20) on the same runtime, one agent at a time. The probes are counted where they land, not
 * where the agent says it sent them:
 *   - exec: the sim-runtime's ExecSync log (`--exec-log`, sim-exec-log.ts); each pod's command is
 *     `echo <key>`, the key naming the agent and the pod;
 *   - HTTP: a server in this process on 127.0.0.1 (the probe's `host`, so both agents reach it
 *     whatever they think a host-network pod's IP is), path `/probe/<key>`.
 * One round: start the agent, write the N manifests, wait until all Running, let every probe loop
 * start (1.5 periods), then a window of `windowS`: agent and runtime CPU over it, arrivals in it
 * analysed by probe-timeline.ts (lateness = gap − period, missed, doubled). Then the agent stops and
 * the pods are torn down through CRI.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Clock } from '../src/shared/clock/clock.js';
import { parseExecLogLine } from '../src/simruntime/sim-exec-log.js';
import { teardownAllPods } from '../test/harness/cri-teardown.js';
import { RunningLog } from './agent-observer.js';
import { KubeletRunningLog } from './kubelet-observer.js';
import { removePodLogs, startKubelet } from './kubelet-process.js';
import { readCpuSeconds, readMemory } from './measure.js';
import { BENCH_IMAGE, BENCH_NAMESPACE, ManifestDir, podManifest, type BenchPod } from './pod-manifests.js';
import { analyseProbeTimes, type ProbeTimelineStats } from './probe-timeline.js';
import { freePort, startAgent, startSimRuntime, type ManagedProcess } from './processes.js';
import { BENCH_NODE_NAME } from './session.js';
import type { RunningView } from './side-by-side-types.js';

export interface ProbeDensityPlan {
  pods: number;
  periodS: number;
  windowS: number;
  simProfile: 'zero' | 'containerd';
  shardletWorkers: number;
  shardletArgs: readonly string[];
  shardletNodeArgs: readonly string[];
  burstTimeoutS: number;
}

export interface ProbeDensityRound {
  agent: 'shardlet' | 'kubelet';
  pods: number;
  periodS: number;
  windowS: number;
  exec: ProbeTimelineStats;
  http: ProbeTimelineStats;
  /** Over the window, % of one core. */
  agentCpuPct: number;
  runtimeCpuPct: number;
  rssMiB: number | null;
}

export interface ProbeDensityDeps {
  clock: Clock;
  plan: ProbeDensityPlan;
  /** undefined: shardlet only (no kubelet binary, or not root). */
  kubelet: string | undefined;
  logDir: string;
  log: (line: string) => void;
  onProgress: (phase: string, done: number, total: number) => void;
}

/** The bench pod with the two probes; `key` names the agent and the pod in both probes. */
export function probePodManifest(name: string, uid: string, key: string, httpPort: number, periodS: number): object {
  const pod = podManifest(name, uid) as { spec: { containers: Array<Record<string, unknown>> } };
  const c = pod.spec.containers[0] as Record<string, unknown>;
  // Timeouts of 5 s and a liveness threshold of 6: what is measured is when probes are sent, and a
  // loaded bench machine answering late must not turn into liveness kills (restarts re-phase the
  // probes and would read as missed and doubled ones). Seen at 1,000 pods, load average 30, 1 s.
  c['readinessProbe'] = { exec: { command: ['echo', key] }, periodSeconds: periodS, timeoutSeconds: 5, failureThreshold: 3 };
  c['livenessProbe'] = { httpGet: { host: '127.0.0.1', port: httpPort, path: `/probe/${key}` }, periodSeconds: periodS, timeoutSeconds: 5, failureThreshold: 6 };
  return pod;
}

/** Records the wall-clock arrival of every `/probe/<key>` request; answers 200 to it, 404 otherwise. */
class ProbeHttpServer {
  readonly arrivals = new Map<string, number[]>();
  readonly #server: http.Server;
  constructor(now: () => number) {
    this.#server = http.createServer((req, res) => {
      const m = /^\/probe\/([A-Za-z0-9_-]{1,100})$/.exec(req.url ?? '');
      if (m?.[1] === undefined) {
        res.writeHead(404).end();
        return;
      }
      const t = now();
      const list = this.arrivals.get(m[1]);
      if (list) list.push(t);
      else this.arrivals.set(m[1], [t]);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  }
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, '127.0.0.1', () => {
        const a = this.#server.address();
        resolve(typeof a === 'object' && a !== null ? a.port : 0);
      });
    });
  }
  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

async function readExecArrivals(file: string): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const e = parseExecLogLine(line);
    const key = e?.cmd[0] === 'echo' ? e.cmd[1] : undefined;
    if (e === null || key === undefined) continue;
    const list = out.get(key);
    if (list) list.push(e.atMs);
    else out.set(key, [e.atMs]);
  }
  return out;
}

export async function runProbeDensity(d: ProbeDensityDeps): Promise<{ rounds: ProbeDensityRound[]; failures: string[] }> {
  const { clock, plan } = d;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-probes-'));
  const socket = path.join(dir, 'cri.sock');
  const execLog = path.join(dir, 'exec.log');
  const server = new ProbeHttpServer(() => clock.now());
  const failures: string[] = [];
  const rounds: ProbeDensityRound[] = [];
  const cgroupRoot = `/shardlet-e2e-probes-${process.pid}`;
  let sim: ManagedProcess | undefined;
  try {
    const port = await server.listen();
    sim = await startSimRuntime({ clock, socket, profile: plan.simProfile, images: [BENCH_IMAGE], logFile: path.join(dir, 'sim.log'), extraArgs: ['--exec-log', execLog] });
    const agents: Array<'shardlet' | 'kubelet'> = d.kubelet !== undefined ? ['shardlet', 'kubelet'] : ['shardlet'];
    for (const agent of agents) {
      try {
        const r = await runRound(d, agent, `unix://${socket}`, sim.pid, port, execLog, server, cgroupRoot);
        rounds.push(r);
        d.log(
          `  probes ${agent.padEnd(8)} ${r.pods} pods: exec lateness p99 ${f(r.exec.latenessMs?.p99)} ms, missed ${r.exec.missed}, doubled ${r.exec.doubled}; http lateness p99 ${f(r.http.latenessMs?.p99)} ms, missed ${r.http.missed}, doubled ${r.http.doubled}; agent CPU ${f(r.agentCpuPct, 1)} %`,
        );
      } catch (err) {
        failures.push(`probe density ${agent}: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        const left = await teardownAllPods(`unix://${socket}`, { totalTimeoutMs: 120_000 });
        if (left > 0) failures.push(`probe density ${agent}: ${left} sandboxes could not be torn down`);
      }
    }
  } finally {
    await sim?.stop();
    await server.close();
    if (d.kubelet !== undefined) {
      const { removeTestCgroupRoot } = await import('../test/harness/test-cgroups.js');
      const left = removeTestCgroupRoot(cgroupRoot);
      if (left.length > 0) failures.push(`probe density: cgroups left behind: ${left.join(', ')}`);
    }
    await fs.rm(dir, { recursive: true, force: true });
  }
  return { rounds, failures };
}

async function runRound(d: ProbeDensityDeps, agent: 'shardlet' | 'kubelet', endpoint: string, simPid: number, port: number, execLog: string, server: ProbeHttpServer, cgroupRoot: string): Promise<ProbeDensityRound> {
  const { clock, plan } = d;
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), `shardlet-probes-${agent}-`));
  const manifestDir = path.join(tmp, 'manifests');
  await fs.mkdir(manifestDir);
  const now = (): number => clock.monotonic();
  const logFile = path.join(d.logDir, `probe-density-${agent}.log`);
  let proc: ManagedProcess | undefined;
  let view: RunningView & { onLine: (l: string) => void };
  let pods: BenchPod[] = [];
  try {
    if (agent === 'shardlet') {
      const log = new RunningLog(now);
      view = log;
      proc = await startAgent({
        clock,
        endpoint,
        manifestDir,
        rootDir: path.join(tmp, 'root'),
        podLogsDir: path.join(tmp, 'pod-logs'),
        nodeName: BENCH_NODE_NAME,
        workers: plan.shardletWorkers,
        maxPods: plan.pods + 50,
        port: await freePort(),
        verbosity: 2,
        nodeArgs: plan.shardletNodeArgs,
        extraArgs: [...plan.shardletArgs],
        onStderrLine: log.onLine,
        logFile,
        // A loaded 2-core machine can take over 30 s to start an agent.
        readyTimeoutMs: 120_000,
      });
    } else {
      const log = new KubeletRunningLog(now);
      view = log;
      proc = await startKubelet({
        clock,
        kubelet: d.kubelet as string,
        endpoint,
        dir: tmp,
        manifestDir,
        nodeName: BENCH_NODE_NAME,
        cgroupRoot,
        maxPods: plan.pods + 50,
        healthzPort: await freePort(),
        port: await freePort(),
        onStderrLine: log.onLine,
        logFile,
        // A loaded 2-core machine can take over 30 s to start an agent.
        readyTimeoutMs: 120_000,
      });
    }
    let exited: number | string | undefined;
    void proc.exited.then((c) => (exited = c));
    const manifests = new ManifestDir(manifestDir, now, (name, uid) => probePodManifest(name, uid, `${agent}-${name}`, port, plan.periodS));
    pods = await manifests.create(plan.pods);
    const deadline = now() + plan.burstTimeoutS * 1000;
    for (;;) {
      const done = pods.filter((p) => view.get(p.uid) !== undefined).length;
      d.onProgress(`probes: ${agent} starting pods`, done, plan.pods);
      if (done === plan.pods) break;
      if (exited !== undefined) throw new Error(`${agent} exited (${exited}) with ${done}/${plan.pods} pods Running`);
      if (now() > deadline) throw new Error(`${done}/${plan.pods} pods Running after ${plan.burstTimeoutS} s`);
      await clock.sleep(250);
    }
    // Every probe loop has started (the kubelet delays each worker's first probe by up to one period).
    d.onProgress(`probes: ${agent} warming up`, 0, 1);
    await clock.sleep(plan.periodS * 1500);
    const cpuA0 = readCpuSeconds(proc.pid);
    const cpuR0 = readCpuSeconds(simPid);
    const w0 = clock.now();
    const m0 = now();
    d.onProgress(`probes: ${agent} measuring ${plan.windowS} s`, 0, 1);
    await clock.sleep(plan.windowS * 1000);
    const w1 = clock.now();
    const secs = (now() - m0) / 1000;
    const agentCpuPct = ((readCpuSeconds(proc.pid) - cpuA0) / secs) * 100;
    const runtimeCpuPct = ((readCpuSeconds(simPid) - cpuR0) / secs) * 100;
    const rssMiB = readMemory(proc.pid).rssMiB;
    if (exited !== undefined) throw new Error(`${agent} exited (${exited}) during the window`);
    const keys = pods.map((p) => `${agent}-${p.name}`);
    const periodMs = plan.periodS * 1000;
    return {
      agent,
      pods: plan.pods,
      periodS: plan.periodS,
      windowS: plan.windowS,
      exec: analyseProbeTimes(await readExecArrivals(execLog), keys, periodMs, w0, w1),
      http: analyseProbeTimes(server.arrivals, keys, periodMs, w0, w1),
      agentCpuPct,
      runtimeCpuPct,
      rssMiB,
    };
  } finally {
    await proc?.stop(10_000);
    if (agent === 'kubelet' && pods.length > 0) removePodLogs(BENCH_NAMESPACE, new Set(pods.map((p) => p.uid)));
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

function f(v: number | null | undefined, digits = 0): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits);
}

/** The probe-density table as Markdown. Pure. */
export function probeDensityTable(rounds: readonly ProbeDensityRound[]): string {
  const r0 = rounds[0];
  if (!r0) return '(probe density: no round measured)';
  return [
    `Probe density: ${r0.pods} pods on the simulated runtime, each an exec readiness and an HTTP liveness probe every ${r0.periodS} s; ${r0.windowS} s window after all Running; counted where the probes land (sim ExecSync log, HTTP server):`,
    '',
    '| agent | exec lateness p50 / p99 / max (ms) | exec missed / doubled | HTTP lateness p50 / p99 / max (ms) | HTTP missed / doubled | agent CPU (% of a core) | runtime CPU (%) | agent RSS (MiB) |',
    '|---|---|---|---|---|---|---|---|',
    ...rounds.map(
      (r) =>
        `| ${r.agent} | ${f(r.exec.latenessMs?.p50)} / ${f(r.exec.latenessMs?.p99)} / ${f(r.exec.latenessMs?.max)} | ${r.exec.missed} / ${r.exec.doubled} (${r.exec.probes} probes) | ${f(r.http.latenessMs?.p50)} / ${f(r.http.latenessMs?.p99)} / ${f(r.http.latenessMs?.max)} | ${r.http.missed} / ${r.http.doubled} (${r.http.probes} probes) | ${f(r.agentCpuPct, 1)} | ${f(r.runtimeCpuPct, 1)} | ${f(r.rssMiB)} |`,
    ),
  ].join('\n');
}
