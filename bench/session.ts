/**
 * One session: a fresh agent process (its own manifest dir, root dir and port) against a CRI
 * endpoint the caller owns, taken through the workloads in order (workloads.ts), then stopped.
 * The agent's stderr goes to `<out>/logs/<label>.log` and feeds the `pod running` tracker.
 *
 * Errors: anything that breaks the session (agent did not start, exited, a request failed)
 * becomes a failure line naming the configuration; the results measured so far are kept.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Clock } from '../src/shared/clock/clock.js';
import { CriClient } from '../src/shared/cri/cri-client.js';
import { RunningLog } from './agent-observer.js';
import type { BenchConfig, SessionPlan } from './bench-config.js';
import { ManifestDir, type BenchPod } from './pod-manifests.js';
import { freePort, startAgent, type ManagedProcess } from './processes.js';
import { configLabel, type WorkloadResult } from './results.js';
import { burst, churn, massDelete, steady, type SessionContext } from './workloads.js';

export const BENCH_NODE_NAME = 'bench-node';

export interface SessionDeps {
  clock: Clock;
  cfg: BenchConfig;
  plan: SessionPlan;
  endpoint: string;
  runtimePid: number | null;
  /** Which workloads beyond burst and mass delete run in this session. */
  steady: boolean;
  churnPodsPerSec: number | null;
  onProgress: (phase: string, done: number, total: number) => void;
}

export interface SessionOutcome {
  results: WorkloadResult[];
  failures: string[];
}

export async function runSession(deps: SessionDeps): Promise<SessionOutcome> {
  const { clock, cfg, plan } = deps;
  const shape = plan.containersPerPod !== undefined && plan.containersPerPod > 1 ? { containersPerPod: plan.containersPerPod } : {};
  const label = configLabel({ runtime: plan.runtime, profile: plan.profile, workers: plan.workers, ...shape });
  const fileLabel = `${plan.runtime}-${plan.profile}-w${plan.workers}-n${plan.pods}${plan.containersPerPod !== undefined && plan.containersPerPod > 1 ? `-c${plan.containersPerPod}` : ''}`;
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-bench-'));
  const manifestDir = path.join(tmp, 'manifests');
  const rootDir = path.join(tmp, 'root');
  await fs.mkdir(manifestDir);
  await fs.mkdir(rootDir);
  await fs.mkdir(path.join(cfg.outDir, 'logs'), { recursive: true });
  const results: WorkloadResult[] = [];
  const failures: string[] = [];
  const log = new RunningLog(() => clock.monotonic());
  const cri = new CriClient({ endpoint: deps.endpoint, timeoutMs: 30_000 });
  let agent: ManagedProcess | undefined;
  let agentExit: number | string | undefined;
  try {
    const port = await freePort();
    let nodeArgs: string[] = [...cfg.agentNodeArgs];
    if (cfg.agentCpuProfDir !== undefined) {
      // Worker threads inherit execArgv, so each thread writes its own profile here when it exits.
      const dir = path.join(cfg.agentCpuProfDir, fileLabel);
      await fs.mkdir(dir, { recursive: true });
      nodeArgs = [...nodeArgs, '--cpu-prof', '--cpu-prof-dir', dir];
    }
    agent = await startAgent({
      clock,
      endpoint: deps.endpoint,
      manifestDir,
      rootDir,
      podLogsDir: path.join(tmp, 'pod-logs'),
      nodeName: BENCH_NODE_NAME,
      workers: plan.workers,
      maxPods: Math.max(110, plan.pods + 50),
      port,
      verbosity: 2,
      ...(cfg.agentScript !== undefined ? { agentScript: cfg.agentScript } : {}),
      nodeArgs,
      extraArgs: cfg.agentArgs,
      // --pin: sim sessions only (the real-containerd section runs containerd unpinned).
      ...(cfg.pin !== undefined && plan.runtime === 'sim' ? { cpus: cfg.pin.agent } : {}),
      onStderrLine: log.onLine,
      logFile: path.join(cfg.outDir, 'logs', `${fileLabel}.log`),
    });
    void agent.exited.then((c) => (agentExit = c));
    const ctx: SessionContext = {
      clock,
      config: { runtime: plan.runtime, profile: plan.profile, workers: plan.workers, ...shape },
      manifests: new ManifestDir(manifestDir, () => clock.monotonic(), undefined, plan.containersPerPod ?? 1),
      log,
      cri,
      agentPid: agent.pid,
      agentPort: port,
      runtimePid: deps.runtimePid,
      failures,
      onProgress: deps.onProgress,
      maxSamples: 2000,
      stallMs: cfg.stallTimeoutS * 1000,
      ...(plan.containersPerPod !== undefined ? { containersPerPod: plan.containersPerPod } : {}),
    };
    results.push(await burst(ctx, plan.pods));
    if (deps.steady) results.push(await steady(ctx, cfg.steadySeconds));
    let deleted: BenchPod[] = [];
    if (deps.churnPodsPerSec !== null) {
      const c = await churn(ctx, deps.churnPodsPerSec, cfg.churnSeconds);
      results.push(c.result);
      deleted = c.deleted;
    }
    results.push(await massDelete(ctx, deleted, cfg.removalTimeoutS * 1000));
    if (log.repeats > 0) failures.push(`agent logged "pod running" ${log.repeats} extra time(s) for pods already running (restarted or duplicated pods)`);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    failures.push(`session aborted: ${why}${agentExit !== undefined ? ` (agent exited: ${agentExit})` : ''}`);
  } finally {
    cri.close();
    if (agent) {
      if (agentExit !== undefined && agentExit !== 0) failures.push(`agent exited unexpectedly (${agentExit}); see logs/${fileLabel}.log`);
      await agent.stop();
    }
    if (!cfg.keepTemp) await fs.rm(tmp, { recursive: true, force: true });
  }
  // A pod that stays broken is named by every later audit of the session: report it once.
  return { results, failures: [...new Set(failures)].map((f) => `${label} @${plan.pods} pods: ${f}`) };
}
