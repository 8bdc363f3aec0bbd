/**
 * Runs the whole matrix in one process, in a fixed order so configurations are compared under
 * the same machine conditions: for each sim profile and pod count, the raw-CRI ceiling on a
 * fresh sim-runtime, then one session per worker count (each on its own fresh sim-runtime);
 * then the real-containerd section (root only) on one private containerd: its ceiling, then
 * its sessions (burst + mass delete).
 *
 * Returns results and failures as data; writing files and the exit code are the caller's.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Clock } from '../src/shared/clock/clock.js';
import type { BenchConfig, SessionPlan } from './bench-config.js';
import { applyCeilings, measureCeiling } from './cri-ceiling-source.js';
import { BENCH_IMAGE } from './pod-manifests.js';
import { withOwnAffinity } from './cpu-pinning.js';
import { startSimRuntime } from './processes.js';
import type { Progress } from './progress.js';
import { configLabel, type CeilingResult, type WorkloadResult } from './results.js';
import { runSession } from './session.js';
import { runClusterSession, type ClusterSessionPlan, type ClusterSessionResult } from './cluster-session.js';
import { leaseVerdict } from './lease-during-burst.js';
import { fmt } from './report-md.js';
import { kubeletSectionSteps, runKubeletSection } from './kubelet-section.js';
import type { SideBySideResult } from './side-by-side.js';
import type { ProbeDensityRound } from './probe-density.js';
import { runProbeSection } from './probe-section.js';

export interface SuiteOutcome {
  workloads: WorkloadResult[];
  ceilings: CeilingResult[];
  failures: string[];
  skipped: string[];
  cluster: ClusterSessionResult[];
  /** The kubelet side-by-side section (kubelet-section.ts), in run order. */
  sideBySide: SideBySideResult[];
  /** The probe-density section (probe-density.ts): one round per agent. */
  probeDensity: ProbeDensityRound[];
}

/**
 * Churn rate per session (null: the session runs no churn): the zero profile takes far more than containerd's CPU-bound ~10
 * create+delete pairs/s; the real-containerd section runs burst + mass delete only.
 */
export function churnRateFor(cfg: BenchConfig, plan: SessionPlan): number | null {
  if (!plan.churn || plan.runtime === 'containerd') return null;
  return plan.profile === 'zero' ? cfg.churnPodsPerSec : cfg.slowChurnPodsPerSec;
}

export function totalSteps(cfg: BenchConfig): number {
  // +1: starting the private containerd is a step of its own.
  // A sim ceiling before each sim session of its size (one for a size without sessions).
  const simCeilings = cfg.ceilings.filter((c) => c.runtime === 'sim').reduce((n, c) => n + Math.max(1, simSessionsAt(cfg, c).length), 0);
  const otherCeilings = cfg.ceilings.filter((c) => c.runtime !== 'sim').length;
  return kubeletSectionSteps(cfg) + (cfg.kubelet ? 1 : 0) + (cfg.probes ? 1 : 0) + cfg.sessions.length + simCeilings + otherCeilings + (cfg.sessions.some((s) => s.runtime === 'containerd') ? 1 : 0) + (cfg.cluster ? cfg.cluster.qps.length + 2 : 0);
}

export async function runSuite(cfg: BenchConfig, clock: Clock, progress: Progress): Promise<SuiteOutcome> {
  const out: SuiteOutcome = { workloads: [], ceilings: [], failures: [], skipped: [], cluster: [], sideBySide: [], probeDensity: [] };
  const report = (r: SuiteOutcome['workloads'][number]): void =>
    progress.log(`  ${configLabel(r).padEnd(22)} ${r.workload.padEnd(11)} n=${String(r.podCount).padEnd(5)} ${fmt(r.podsPerSec)} pods/s  p99 ${fmt(r.startupMs?.p99)} ms  ELD p99 ${fmt(r.eventLoopDelayMs?.p99)} ms  CPU ${fmt(r.cpuMsPerPod, 2)} ms/pod  RSS ${fmt(r.rssMiB)} MiB`);

  for (const c of cfg.ceilings.filter((c) => c.runtime === 'sim')) {
    const plans = simSessionsAt(cfg, c);
    // A ceiling right before each session of this size (see CeilingResult.before); one alone
    // when no session runs at this size.
    for (const plan of plans.length > 0 ? plans : [undefined]) {
      await simCeiling(cfg, clock, progress, out, c, plan === undefined ? undefined : configLabel(plan));
      if (plan === undefined) continue;
      progress.step(`${configLabel(plan)} ${plan.pods} pods`);
      try {
        await withSim(clock, plan.profile, cfg.pin?.runtime, async (endpoint, pid) => {
          const o = await runSession({ clock, cfg, plan, endpoint, runtimePid: pid, steady: plan.steady, churnPodsPerSec: churnRateFor(cfg, plan), onProgress: (p, d, t) => progress.update(p, d, t) });
          out.workloads.push(...o.results);
          out.failures.push(...o.failures);
          o.results.forEach(report);
          for (const f of o.failures) progress.log(`  FAIL ${f}`);
        });
      } catch (err) {
        // The sim-runtime did not start or stop: the configuration was not measured, which fails the run.
        const f = `${configLabel(plan)} @${plan.pods} pods: sim-runtime: ${errorText(err)}`;
        out.failures.push(f);
        progress.log(`  FAIL ${f}`);
      }
    }
  }
  if (cfg.real) await realSection(cfg, clock, progress, out, report);
  else out.skipped.push('real containerd section: disabled by --no-real');
  const k = await runKubeletSection(cfg, clock, progress);
  out.sideBySide.push(...k.results);
  out.failures.push(...k.failures);
  out.skipped.push(...k.skipped);
  const pd = await runProbeSection(cfg, clock, progress);
  out.probeDensity.push(...pd.rounds);
  out.failures.push(...pd.failures);
  out.skipped.push(...pd.skipped);
  if (cfg.cluster) await clusterSection(cfg, clock, progress, out);
  else out.skipped.push('cluster-mode section: disabled by --no-cluster');
  applyCeilings(out.workloads, out.ceilings);
  return out;
}

/** The sim sessions compared with ceiling `c` (same profile and pod count), in run order. */
function simSessionsAt(cfg: BenchConfig, c: BenchConfig['ceilings'][number]): SessionPlan[] {
  return cfg.sessions.filter((s) => s.runtime === 'sim' && s.profile === c.profile && s.pods === c.pods && (s.containersPerPod ?? 1) === (c.containersPerPod ?? 1));
}

/** One raw-CRI ceiling on a fresh sim-runtime, recorded as measured before `before` (a session label). */
async function simCeiling(cfg: BenchConfig, clock: Clock, progress: Progress, out: SuiteOutcome, c: BenchConfig['ceilings'][number], before: string | undefined): Promise<void> {
  progress.step(`ceiling sim/${c.profile} ${c.pods} pods${(c.containersPerPod ?? 1) > 1 ? ` ×${c.containersPerPod} ctr` : ''}${before !== undefined ? ` (before ${before})` : ''}`);
  try {
    await withSim(clock, c.profile, cfg.pin?.runtime, async (endpoint) => {
      const concurrency = c.profile === 'zero' ? cfg.zeroCeilingConcurrency : cfg.ceilingConcurrency;
      // With --pin the ceiling's client (this process) gets the agent's CPUs, as an agent would.
      const r = await withOwnAffinity(cfg.pin?.agent, () => measureCeiling('sim', c.profile, { endpoint, pods: c.pods, concurrency, hostNetwork: true, ...(c.containersPerPod !== undefined ? { containersPerPod: c.containersPerPod } : {}) }));
      out.ceilings.push(before !== undefined ? { ...r, before } : r);
    });
  } catch (err) {
    // Every agent rate is read against the ceiling: a ceiling that was not measured fails the run.
    const f = `ceiling sim/${c.profile} @${c.pods}${before !== undefined ? ` (before ${before})` : ''}: ${errorText(err)}`;
    out.failures.push(f);
    progress.log(`  FAIL ${f}`);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function withSim(clock: Clock, profile: string, cpus: string | undefined, fn: (endpoint: string, pid: number) => Promise<void>): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-bench-sim-'));
  const socket = path.join(dir, 'cri.sock');
  // The bench image is present from the start, as it is imported into the private containerd.
  const sim = await startSimRuntime({ clock, socket, profile, images: [BENCH_IMAGE], logFile: path.join(dir, 'sim.log'), ...(cpus !== undefined ? { cpus } : {}) });
  try {
    await fn(`unix://${socket}`, sim.pid);
  } finally {
    await sim.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function realSection(cfg: BenchConfig, clock: Clock, progress: Progress, out: SuiteOutcome, report: (r: WorkloadResult) => void): Promise<void> {
  const plans = cfg.sessions.filter((s) => s.runtime === 'containerd');
  const ceilings = cfg.ceilings.filter((c) => c.runtime === 'containerd');
  if (plans.length === 0) return;
  if (process.getuid?.() !== 0) {
    out.skipped.push('real containerd section (burst 50 and 100 + raw ceiling): skipped because the bench is not running as root (a private containerd needs root)');
    return;
  }
  progress.step('starting a private containerd');
  const { startContainerd } = await import('../test/harness/containerd-harness.js');
  let ctrd;
  try {
    ctrd = await startContainerd();
  } catch (err) {
    out.failures.push(`real containerd section: containerd did not start: ${errorText(err)}`);
    return;
  }
  try {
    for (const c of ceilings) {
      progress.step(`ceiling containerd ${c.pods} pods`);
      try {
        out.ceilings.push(await measureCeiling('containerd', 'real', { endpoint: ctrd.endpoint, pods: c.pods, concurrency: cfg.ceilingConcurrency, hostNetwork: true }));
      } catch (err) {
        const f = `ceiling containerd @${c.pods}: ${errorText(err)}`;
        out.failures.push(f);
        progress.log(`  FAIL ${f}`);
      }
    }
    for (const plan of plans) {
      progress.step(`${configLabel(plan)} ${plan.pods} pods`);
      const o = await runSession({ clock, cfg, plan, endpoint: ctrd.endpoint, runtimePid: ctrd.pid, steady: plan.steady, churnPodsPerSec: churnRateFor(cfg, plan), onProgress: (p, d, t) => progress.update(p, d, t) });
      out.workloads.push(...o.results);
      out.failures.push(...o.failures);
      o.results.forEach(report);
      for (const f of o.failures) progress.log(`  FAIL ${f}`);
    }
  } finally {
    await ctrd.stop();
  }
}

/** The cluster-mode section: one private control plane, one session per --kube-api-qps value. */
async function clusterSection(cfg: BenchConfig, clock: Clock, progress: Progress, out: SuiteOutcome): Promise<void> {
  const c = cfg.cluster;
  if (!c) return;
  progress.step('starting a private kube-apiserver');
  const { startControlPlane } = await import('../test/harness/apiserver-harness.js');
  let cp;
  try {
    cp = await startControlPlane();
  } catch (err) {
    out.failures.push(`cluster-mode section: the control plane did not start: ${errorText(err)}`);
    return;
  }
  try {
    // Each --kube-api-qps value, then QPS 50 with the default service-account volume on every pod (issue 13).
    const plans: ClusterSessionPlan[] = [...c.qps.map((qps) => ({ qps, pods: c.pods, workers: c.workers })), { qps: 50, pods: c.pods, workers: c.workers, serviceAccountVolume: true }];
    for (const plan of plans) {
      const label = `${plan.qps === 0 ? 'unthrottled' : `--kube-api-qps ${plan.qps}`}${plan.serviceAccountVolume ? ' + SA volume' : ''}`;
      progress.step(`cluster mode ${label} ${c.pods} pods`);
      try {
        const profDir = cfg.agentCpuProfDir === undefined ? undefined : path.join(cfg.agentCpuProfDir, `cluster-${plan.qps === 0 ? 'unthrottled' : `qps${plan.qps}`}${plan.serviceAccountVolume ? '-sa' : ''}`);
        const o = await runClusterSession({ clock, cp, plan, stallTimeoutS: cfg.stallTimeoutS, onProgress: (p, d, t) => progress.update(p, d, t), keepTemp: cfg.keepTemp, ...(profDir ? { agentNodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir] } : {}) });
        out.cluster.push(o.result);
        out.failures.push(...o.failures);
        const r = o.result;
        progress.log(`  cluster ${label.padEnd(18)} n=${c.pods} all Running in ${fmt(r.allRunningS)} s  p50 ${fmt(r.startupMs?.p50)} ms  p99 ${fmt(r.startupMs?.p99)} ms  ${fmt(r.requestsPerPodStart, 2)} req/pod start  lease: ${r.lease ? `${r.lease.renewals} renewals, lateness p99 ≤ ${r.lease.latenessP99AtMostS ?? '–'} s ${leaseVerdict(r.lease)}` : 'not measured'}`);
        for (const f of o.failures) progress.log(`  FAIL ${f}`);
      } catch (err) {
        const f = `cluster mode ${label}: ${errorText(err)}`;
        out.failures.push(f);
        progress.log(`  FAIL ${f}`);
      }
    }
  } finally {
    await cp.stop();
  }
}
