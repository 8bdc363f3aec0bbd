/**
 * The bench's view of the raw-CRI ceiling (bench/ceiling.ts, owned by another engineer): the
 * same pods driven straight through CRI with no agent, on the same runtime and profile, so
 * every agent throughput can be shown as a fraction of what the runtime allows.
 */
import { runCeiling } from './ceiling.js';
import { configLabel, type CeilingResult, type RuntimeKind, type WorkloadResult } from './results.js';

export interface CeilingOptions {
  endpoint: string;
  pods: number;
  concurrency: number;
  hostNetwork?: boolean;
  /** Containers per pod (default 1). */
  containersPerPod?: number;
}

/**
 * Runs the ceiling and keeps the figures the report uses. A ceiling in which pods failed is no
 * ceiling (its rate counts pods that never ran): it throws, and the suite records a failure.
 */
export async function measureCeiling(runtime: RuntimeKind, profile: string, opts: CeilingOptions): Promise<CeilingResult> {
  const f = await runCeiling(opts);
  if (f.errors > 0) throw new Error(`${f.errors} of ${opts.pods} pods failed in the raw-CRI ceiling (first: ${f.firstError ?? 'unknown'})`);
  return {
    runtime,
    profile,
    pods: opts.pods,
    concurrency: opts.concurrency,
    podsPerSec: f.podsPerSec,
    p50Ms: f.p50Ms,
    p99Ms: f.p99Ms,
    teardownPodsPerSec: f.teardownPodsPerSec,
    clientCpuMsPerPod: f.clientCpuMsPerPod,
    ...((opts.containersPerPod ?? 1) > 1 ? { containersPerPod: opts.containersPerPod } : {}),
  };
}

/**
 * Fills `ceilingFraction` on each result from the ceiling measured right before its session
 * (`before`), else the ceiling of the same runtime and profile at the same pod count (else the
 * nearest pod count measured): burst and churn against the creation rate. Steady has no rate;
 * mass delete (rate to stopped) has no comparable ceiling.
 */
export function applyCeilings(results: WorkloadResult[], ceilings: readonly CeilingResult[]): void {
  for (const r of results) {
    // Mass delete is not compared: its rate is to stopped, the ceiling's teardown also removes.
    if (r.podsPerSec === null || r.workload === 'steady' || r.workload === 'mass-delete') continue;
    // Pods of another shape (containers per pod) are no reference.
    const same = ceilings.filter((c) => c.runtime === r.runtime && c.profile === r.profile && (c.containersPerPod ?? 1) === (r.containersPerPod ?? 1));
    const own = same.filter((c) => c.before === configLabel(r) && c.pods === r.podCount).at(-1);
    const c = own ?? same.sort((a, b) => Math.abs(a.pods - r.podCount) - Math.abs(b.pods - r.podCount))[0];
    if (!c) continue;
    const ref = c.podsPerSec;
    r.ceilingFraction = ref > 0 ? r.podsPerSec / ref : null;
  }
}
