/**
 * shardlet beside a real kubelet (v1.20, kubelet-process.ts) on ONE runtime the caller owns (the
 * bench's private containerd, or a simulated runtime), with the same static host-network busybox
 * pods (pod-manifests.ts), in alternating rounds: shardlet, kubelet, shardlet, kubelet, … and a
 * raw-CRI ceiling on the same runtime before the first round and after the last.
 *
 * One round, one agent process (nothing else of the bench runs meanwhile):
 *   1. start it on a fresh manifest dir and root dir; wait until it answers /healthz;
 *   2. idle `idleSeconds`, then RSS idle;
 *   3. write the N manifests at once (t0) and wait, bounded, until the agent reports every pod
 *      Running (shardlet: its `pod running` log line; the kubelet: its PLEG log line for the pod's
 *      second started container id, sandbox and app — see kubelet-observer.ts), each at the
 *      bench time the line arrived;
 *   4. burst figures: pods/s = N / (last Running − t0); first Running − t0; start latency per pod
 *      = its Running − its manifest's landing; agent CPU (user+system, all threads) t0 → last
 *      Running, per pod;
 *   5. steady window of `steadySeconds` with all N running: agent CPU % of one core, RSS at its end;
 *   6. stop the agent (SIGTERM) and tear every pod down through CRI (the kubelet's /var/log/pods
 *      entries for these pods removed too), so the next round starts on an empty runtime.
 * Both agents get the same --cgroup-root (each round's pods are new UIDs).
 *
 * Errors: a round that fails (agent did not start or exited, pods not Running in time) becomes a
 * failure line naming the round; the rounds measured so far are kept and the next round runs.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Clock } from '../src/shared/clock/clock.js';
import { teardownAllPods } from '../test/harness/cri-teardown.js';
import { RunningLog } from './agent-observer.js';
import { measureCeiling } from './cri-ceiling-source.js';
import { KubeletRunningLog } from './kubelet-observer.js';
import { removePodLogs, startKubelet } from './kubelet-process.js';
import { readCpuSeconds, readMemory } from './measure.js';
import { BENCH_NAMESPACE, ManifestDir, type BenchPod } from './pod-manifests.js';
import { freePort, startAgent, type ManagedProcess } from './processes.js';
import type { CeilingResult } from './results.js';
import { BENCH_NODE_NAME } from './session.js';
import type { RunningView } from './side-by-side-types.js';
import { summarize, type Summary } from './stats.js';

export type SideAgent = 'shardlet' | 'kubelet';

export interface RoundResult {
  agent: SideAgent;
  /** 1-based, per agent. */
  round: number;
  pods: number;
  /** Pods the agent reported Running (N when the round passed). */
  running: number;
  podsPerSec: number | null;
  firstRunningS: number | null;
  startMs: Summary | null;
  cpuMsPerPod: number | null;
  rssIdleMiB: number | null;
  rssAtNMiB: number | null;
  /** Agent CPU over the steady window, % of one core. */
  steadyCpuPct: number | null;
}

export interface SideBySideResult {
  runtime: 'containerd' | 'sim';
  profile: string;
  pods: number;
  shardletWorkers: number;
  kubeletVersion: string;
  ceilingBefore: CeilingResult | null;
  ceilingAfter: CeilingResult | null;
  rounds: RoundResult[];
}

export interface SideBySidePlan {
  runtime: 'containerd' | 'sim';
  profile: string;
  pods: number;
  /** Rounds per agent (2: shardlet, kubelet, shardlet, kubelet). */
  rounds: number;
  shardletWorkers: number;
  /** Extra `shardlet agent` flags (--agent-arg). */
  shardletArgs: readonly string[];
  shardletNodeArgs: readonly string[];
  idleSeconds: number;
  steadySeconds: number;
  /** Bound on one burst (manifests → all Running). */
  burstTimeoutS: number;
  ceilingConcurrency: number;
}

export interface SideBySideDeps {
  clock: Clock;
  plan: SideBySidePlan;
  endpoint: string;
  kubelet: string;
  kubeletVersion: string;
  /** A cgroup path under the hierarchy roots that both agents use as --cgroup-root (the caller removes it). */
  cgroupRoot: string;
  /** Agent logs go to `<logDir>/side-by-side-<runtime>-<agent>-<round>.log`. */
  logDir: string;
  onProgress: (phase: string, done: number, total: number) => void;
  log: (line: string) => void;
}

export async function runSideBySide(d: SideBySideDeps): Promise<{ result: SideBySideResult; failures: string[] }> {
  const { plan } = d;
  const failures: string[] = [];
  const ceiling = async (when: string): Promise<CeilingResult | null> => {
    try {
      return await measureCeiling(plan.runtime, plan.profile, { endpoint: d.endpoint, pods: plan.pods, concurrency: plan.ceilingConcurrency, hostNetwork: true });
    } catch (err) {
      failures.push(`side-by-side ${plan.runtime}: ceiling ${when}: ${errorText(err)}`);
      return null;
    }
  };
  const ceilingBefore = await ceiling('before');
  const rounds: RoundResult[] = [];
  for (let i = 1; i <= plan.rounds; i++) {
    for (const agent of ['shardlet', 'kubelet'] as const) {
      try {
        const r = await runRound(d, agent, i);
        rounds.push(r);
        d.log(`  ${plan.runtime} ${agent.padEnd(8)} round ${i}: ${fmt(r.podsPerSec)} pods/s, first Running ${fmt(r.firstRunningS, 2)} s, start p50/p99 ${fmt(r.startMs?.p50)}/${fmt(r.startMs?.p99)} ms, CPU ${fmt(r.cpuMsPerPod, 1)} ms/pod, RSS ${fmt(r.rssIdleMiB)}/${fmt(r.rssAtNMiB)} MiB, steady ${fmt(r.steadyCpuPct, 1)} %`);
      } catch (err) {
        failures.push(`side-by-side ${plan.runtime} ${agent} round ${i}: ${errorText(err)}`);
        d.log(`  FAIL side-by-side ${plan.runtime} ${agent} round ${i}: ${errorText(err)}`);
      } finally {
        const left = await teardownAllPods(d.endpoint, { totalTimeoutMs: 180_000 });
        if (left > 0) failures.push(`side-by-side ${plan.runtime} ${agent} round ${i}: ${left} sandboxes could not be torn down`);
      }
    }
  }
  const ceilingAfter = await ceiling('after');
  return {
    result: { runtime: plan.runtime, profile: plan.profile, pods: plan.pods, shardletWorkers: plan.shardletWorkers, kubeletVersion: d.kubeletVersion, ceilingBefore, ceilingAfter, rounds },
    failures,
  };
}

async function runRound(d: SideBySideDeps, agent: SideAgent, round: number): Promise<RoundResult> {
  const { clock, plan } = d;
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), `shardlet-sbs-${agent}-`));
  const manifestDir = path.join(tmp, 'manifests');
  await fs.mkdir(manifestDir);
  const logFile = path.join(d.logDir, `side-by-side-${plan.runtime}-${agent}-${round}.log`);
  const now = (): number => clock.monotonic();
  let view: RunningView & { onLine: (l: string) => void };
  let proc: ManagedProcess | undefined;
  let pods: BenchPod[] = [];
  try {
    if (agent === 'shardlet') {
      const log = new RunningLog(now);
      view = log;
      proc = await startAgent({
        clock,
        endpoint: d.endpoint,
        manifestDir,
        rootDir: path.join(tmp, 'root'),
        podLogsDir: path.join(tmp, 'pod-logs'),
        nodeName: BENCH_NODE_NAME,
        workers: plan.shardletWorkers,
        maxPods: Math.max(110, plan.pods + 50),
        port: await freePort(),
        verbosity: 2,
        nodeArgs: plan.shardletNodeArgs,
        extraArgs: ['--cgroup-root', d.cgroupRoot, ...plan.shardletArgs],
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
        kubelet: d.kubelet,
        endpoint: d.endpoint,
        dir: tmp,
        manifestDir,
        nodeName: BENCH_NODE_NAME,
        cgroupRoot: d.cgroupRoot,
        maxPods: Math.max(110, plan.pods + 50),
        healthzPort: await freePort(),
        port: await freePort(),
        onStderrLine: log.onLine,
        logFile,
        // A loaded 2-core machine can take over 30 s to start an agent.
        readyTimeoutMs: 120_000,
      });
    }
    const pid = proc.pid;
    let exited: number | string | undefined;
    void proc.exited.then((c) => (exited = c));
    await clock.sleep(plan.idleSeconds * 1000);
    const rssIdleMiB = readMemory(pid).rssMiB;

    // ---- burst
    const manifests = new ManifestDir(manifestDir, now);
    const cpu0 = readCpuSeconds(pid);
    const t0 = now();
    pods = await manifests.create(plan.pods);
    const deadline = t0 + plan.burstTimeoutS * 1000;
    for (;;) {
      const done = pods.filter((p) => view.get(p.uid) !== undefined).length;
      d.onProgress(`${agent} round ${round}`, done, plan.pods);
      if (done === plan.pods) break;
      if (exited !== undefined) throw new Error(`${agent} exited (${exited}) with ${done}/${plan.pods} pods Running; last stderr:\n    ${proc.tail().slice(-5).join('\n    ')}`);
      if (now() > deadline) throw new Error(`${done}/${plan.pods} pods Running after ${plan.burstTimeoutS} s`);
      await clock.sleep(100);
    }
    const cpu1 = readCpuSeconds(pid);
    const at = pods.map((p) => (view.get(p.uid) as { atMs: number }).atMs);
    const last = Math.max(...at);
    const first = Math.min(...at);
    const start = pods.map((p) => (view.get(p.uid) as { atMs: number }).atMs - p.writtenAtMs);

    // ---- steady window
    const cpuS0 = readCpuSeconds(pid);
    const tS0 = now();
    await clock.sleep(plan.steadySeconds * 1000);
    const steadyCpuPct = ((readCpuSeconds(pid) - cpuS0) / ((now() - tS0) / 1000)) * 100;
    const rssAtNMiB = readMemory(pid).rssMiB;
    if (exited !== undefined) throw new Error(`${agent} exited (${exited}) during the steady window`);
    return {
      agent,
      round,
      pods: plan.pods,
      running: view.size,
      podsPerSec: last > t0 ? plan.pods / ((last - t0) / 1000) : null,
      firstRunningS: (first - t0) / 1000,
      startMs: summarize(start),
      cpuMsPerPod: ((cpu1 - cpu0) * 1000) / plan.pods,
      rssIdleMiB,
      rssAtNMiB,
      steadyCpuPct,
    };
  } finally {
    await proc?.stop(10_000);
    if (agent === 'kubelet' && pods.length > 0) removePodLogs(BENCH_NAMESPACE, new Set(pods.map((p) => p.uid)));
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

function fmt(v: number | null | undefined, digits = 0): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
