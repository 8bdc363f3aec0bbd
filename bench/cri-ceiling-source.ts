/**
 * Access to the raw-CRI ceiling (bench/ceiling.ts, owned by another engineer): the same pods
 * driven straight through CRI with no agent, on the same runtime and profile, so every agent
 * throughput can be shown as a fraction of what the runtime allows.
 *
 * The module is loaded lazily and its export checked at run time, so the suite builds and runs
 * (with "ceiling not available" in the report) before ceiling.ts lands.
 */
import type { CeilingResult, RuntimeKind, WorkloadResult } from './results.js';

export interface CeilingOptions {
  endpoint: string;
  pods: number;
  concurrency: number;
  hostNetwork?: boolean;
}

export interface CeilingFigures {
  podsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  teardownPodsPerSec: number;
  clientCpuMsPerPod: number;
}

export type RunCeiling = (opts: CeilingOptions) => Promise<CeilingFigures>;

/** `runCeiling` from ./ceiling.js, or a reason it is not usable. */
export async function loadRunCeiling(): Promise<RunCeiling | string> {
  const specifier = './ceiling.js';
  try {
    const mod: unknown = await import(specifier);
    const fn = (mod as { runCeiling?: unknown }).runCeiling;
    return typeof fn === 'function' ? (fn as RunCeiling) : 'bench/ceiling.ts does not export runCeiling';
  } catch (err) {
    return `bench/ceiling.ts not available (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
  }
}

export async function measureCeiling(run: RunCeiling, runtime: RuntimeKind, profile: string, opts: CeilingOptions): Promise<CeilingResult> {
  const f = await run(opts);
  return { runtime, profile, pods: opts.pods, concurrency: opts.concurrency, ...f };
}

/**
 * Fills `ceilingFraction` on each result from the ceiling of the same runtime and profile at
 * the same pod count (else the nearest pod count measured): burst and churn against the
 * creation rate, mass delete against the teardown rate. Steady has no rate.
 */
export function applyCeilings(results: WorkloadResult[], ceilings: readonly CeilingResult[]): void {
  for (const r of results) {
    if (r.podsPerSec === null || r.workload === 'steady') continue;
    const same = ceilings.filter((c) => c.runtime === r.runtime && c.profile === r.profile);
    const c = same.sort((a, b) => Math.abs(a.pods - r.podCount) - Math.abs(b.pods - r.podCount))[0];
    if (!c) continue;
    const ref = r.workload === 'mass-delete' ? c.teardownPodsPerSec : c.podsPerSec;
    r.ceilingFraction = ref > 0 ? r.podsPerSec / ref : null;
  }
}
