/**
 * The bench's kubelet section (issue 28): shardlet beside a real kubelet v1.20.2, in alternating
 * rounds (side-by-side.ts), on
 *   - the bench's private containerd (test/harness/containerd-harness.ts), root only;
 *   - a simulated runtime (`--kubelet-sim-pods`; the kubelet reaches it over CRI v1alpha2).
 * The kubelet binary comes from test/harness/kubelet-install.ts (built on first use).
 * Results and failures are data; printing is the caller's.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Clock } from '../src/shared/clock/clock.js';
import { ensureKubelet } from '../test/harness/kubelet-install.js';
import { removeTestCgroupRoot } from '../test/harness/test-cgroups.js';
import type { BenchConfig } from './bench-config.js';
import { BENCH_IMAGE } from './pod-manifests.js';
import { startSimRuntime } from './processes.js';
import type { Progress } from './progress.js';
import { runSideBySide, type SideBySidePlan, type SideBySideResult } from './side-by-side.js';

export interface KubeletSectionOutcome {
  results: SideBySideResult[];
  failures: string[];
  skipped: string[];
}

/** Steps the section adds to the progress count. */
export function kubeletSectionSteps(cfg: BenchConfig): number {
  const k = cfg.kubelet;
  return k === undefined ? 0 : (k.pods > 0 ? 1 : 0) + (k.simPods > 0 ? 1 : 0);
}

function plan(cfg: BenchConfig, runtime: 'containerd' | 'sim', pods: number): SideBySidePlan {
  const k = cfg.kubelet as NonNullable<BenchConfig['kubelet']>;
  return {
    runtime,
    profile: runtime === 'sim' ? k.simProfile : 'real',
    pods,
    rounds: k.rounds,
    shardletWorkers: k.workers,
    shardletArgs: cfg.agentArgs,
    shardletNodeArgs: cfg.agentNodeArgs,
    idleSeconds: 5,
    steadySeconds: cfg.steadySeconds,
    // containerd runs ~4–8 pods/s here; the kubelet on the sim ~20–50.
    burstTimeoutS: Math.max(120, pods / 2),
    ceilingConcurrency: runtime === 'sim' && k.simProfile === 'zero' ? cfg.zeroCeilingConcurrency : cfg.ceilingConcurrency,
  };
}

export async function runKubeletSection(cfg: BenchConfig, clock: Clock, progress: Progress): Promise<KubeletSectionOutcome> {
  const out: KubeletSectionOutcome = { results: [], failures: [], skipped: [] };
  const k = cfg.kubelet;
  if (k === undefined) {
    out.skipped.push('kubelet side-by-side: disabled by --no-kubelet');
    return out;
  }
  if (process.getuid?.() !== 0) {
    out.skipped.push('kubelet side-by-side: needs root (a private containerd, the kubelet cgroups and a private mount namespace)');
    return out;
  }
  let kubelet: string;
  try {
    progress.step('kubelet: obtaining the binary (built once from Debian source)');
    kubelet = await ensureKubelet();
  } catch (err) {
    out.failures.push(`kubelet side-by-side: no kubelet binary: ${errorText(err)}`);
    return out;
  }
  let version: string;
  try {
    version = execFileSync(kubelet, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim().replace(/^Kubernetes /, '');
  } catch (err) {
    out.failures.push(`kubelet side-by-side: ${kubelet} --version failed: ${errorText(err)}`);
    return out;
  }
  const logDir = path.join(cfg.outDir, 'logs');
  await fs.mkdir(logDir, { recursive: true });
  const log = (l: string): void => progress.log(l);
  const onProgress = (p: string, d: number, t: number): void => progress.update(p, d, t);

  if (k.pods > 0) {
    progress.step(`kubelet side-by-side on containerd, ${k.pods} pods`);
    const { startContainerd } = await import('../test/harness/containerd-harness.js');
    try {
      const ctrd = await startContainerd();
      try {
        const o = await runSideBySide({ clock, plan: plan(cfg, 'containerd', k.pods), endpoint: ctrd.endpoint, kubelet, kubeletVersion: version, cgroupRoot: ctrd.agentCgroupRoot, logDir, onProgress, log });
        out.results.push(o.result);
        out.failures.push(...o.failures);
      } finally {
        await ctrd.stop();
      }
    } catch (err) {
      out.failures.push(`kubelet side-by-side on containerd: ${errorText(err)}`);
    }
  }
  if (k.simPods > 0) {
    progress.step(`kubelet side-by-side on sim/${k.simProfile}, ${k.simPods} pods`);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-sbs-sim-'));
    // The test-cgroup prefix, so removeTestCgroupRoot takes it down (kubelet pod cgroups; the sim creates none).
    const cgroupRoot = `/shardlet-e2e-sbs-sim-${process.pid}`;
    try {
      const socket = path.join(dir, 'cri.sock');
      const sim = await startSimRuntime({ clock, socket, profile: k.simProfile, images: [BENCH_IMAGE], logFile: path.join(dir, 'sim.log') });
      try {
        const o = await runSideBySide({ clock, plan: plan(cfg, 'sim', k.simPods), endpoint: `unix://${socket}`, kubelet, kubeletVersion: version, cgroupRoot, logDir, onProgress, log });
        out.results.push(o.result);
        out.failures.push(...o.failures);
      } finally {
        await sim.stop();
      }
    } catch (err) {
      out.failures.push(`kubelet side-by-side on sim: ${errorText(err)}`);
    } finally {
      const left = removeTestCgroupRoot(cgroupRoot);
      if (left.length > 0) out.failures.push(`kubelet side-by-side on sim: cgroups left behind: ${left.join(', ')}`);
      await fs.rm(dir, { recursive: true, force: true });
    }
  }
  return out;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
