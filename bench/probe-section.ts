/**
 * The bench's probe-density section (probe-density.ts): shardlet, then a real kubelet v1.20 when
 * one can run (root; the binary from test/harness/kubelet-install.ts), on one simulated runtime.
 * Results and failures are data; printing is the caller's.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../src/shared/clock/clock.js';
import { ensureKubelet } from '../test/harness/kubelet-install.js';
import type { BenchConfig } from './bench-config.js';
import { runProbeDensity, type ProbeDensityRound } from './probe-density.js';
import type { Progress } from './progress.js';

export interface ProbeSectionOutcome {
  rounds: ProbeDensityRound[];
  failures: string[];
  skipped: string[];
}

export async function runProbeSection(cfg: BenchConfig, clock: Clock, progress: Progress): Promise<ProbeSectionOutcome> {
  const out: ProbeSectionOutcome = { rounds: [], failures: [], skipped: [] };
  const p = cfg.probes;
  if (p === undefined) {
    out.skipped.push('probe density: disabled by --probe-pods 0');
    return out;
  }
  progress.step(`probe density, ${p.pods} pods, exec + HTTP probes every ${p.periodS} s`);
  let kubelet: string | undefined;
  if (cfg.kubelet === undefined) out.skipped.push('probe density: the kubelet beside shardlet, disabled by --no-kubelet');
  else if (process.getuid?.() !== 0) out.skipped.push('probe density: the kubelet beside shardlet needs root (its pod cgroups, a private mount namespace)');
  else {
    try {
      kubelet = await ensureKubelet();
    } catch (err) {
      out.failures.push(`probe density: no kubelet binary: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const logDir = path.join(cfg.outDir, 'logs');
  await fs.mkdir(logDir, { recursive: true });
  const o = await runProbeDensity({
    clock,
    plan: { pods: p.pods, periodS: p.periodS, windowS: p.windowS, simProfile: 'zero', shardletWorkers: 2, shardletArgs: cfg.agentArgs, shardletNodeArgs: cfg.agentNodeArgs, burstTimeoutS: Math.max(180, p.pods / 4) },
    kubelet,
    logDir,
    log: (l) => progress.log(l),
    onProgress: (ph, d, t) => progress.update(ph, d, t),
  });
  out.rounds.push(...o.rounds);
  out.failures.push(...o.failures);
  return out;
}
