/**
 * The four workloads, run in this order against one agent (one session):
 *
 *   burst        write N manifests at once → every pod running (agent log or /pods) → audit
 *   steady       after the PLEG has caught up (2 relists), nothing changes for S seconds;
 *                CPU in cores, event-loop delay, relist
 *   churn        every 1/R s: write one new manifest and remove the oldest, for D seconds;
 *                then wait until the new pods run and the removed ones are stopped → audit
 *   mass-delete  remove every manifest → every pod stopped in the runtime (the rate), then
 *                removed from the runtime and from /pods → audit
 *
 * Each returns a WorkloadResult (figures) and pushes correctness failures into the session's
 * list; a failure never throws out of a workload, so one broken configuration still yields a
 * report for the rest.
 */
import type { Clock } from '../src/shared/clock/clock.js';
import type { RuntimeService } from '../src/shared/cri/runtime-service.js';
import { fetchMetricsText, fetchPods, type RunningLog } from './agent-observer.js';
import { readCpuSeconds, RELIST_METRIC } from './measure.js';
import { parsePromText, sampleSum } from './prom-text.js';
import { beginWindow, type WindowResult } from './measure-window.js';
import { totalCalls } from './runtime-op-counts.js';
import { auditAgentGone, auditAgentPods, auditRuntimeGone, auditRuntimeRunning, capFailures, inventory } from './pod-audit.js';
import { waitRunning, waitTornDown, type RunningWait } from './pod-waits.js';
import type { BenchPod, ManifestDir } from './pod-manifests.js';
import type { ConfigurationId, WorkloadKind, WorkloadResult } from './results.js';
import { ratePerSecond, summarize } from './stats.js';

export interface SessionContext {
  clock: Clock;
  config: ConfigurationId;
  manifests: ManifestDir;
  log: RunningLog;
  cri: Pick<RuntimeService, 'listPodSandbox' | 'listContainers' | 'status'>;
  agentPid: number;
  agentPort: number;
  runtimePid: number | null;
  /** Correctness failures of this session, prefixed with the configuration by the caller. */
  failures: string[];
  onProgress: (label: string, done: number, total: number) => void;
  /** Keep at most this many startup samples per result (for the CDF). */
  maxSamples: number;
  /** A wait gives up when no pod progressed for this long. */
  stallMs: number;
  /** Containers in each pod (absent: 1): the deadlines scale with the containers to start. */
  containersPerPod?: number;
}

/**
 * Deadlines: generous enough for containerd at ~20 single-container pods/s (100 ms per
 * container to start), small enough to fail a stuck run.
 */
export function runningLimits(ctx: Pick<SessionContext, 'stallMs' | 'containersPerPod'>, pods: number): { timeoutMs: number; stallMs: number } {
  return { timeoutMs: 30_000 + pods * (ctx.containersPerPod ?? 1) * 100, stallMs: ctx.stallMs };
}

function result(ctx: SessionContext, workload: WorkloadKind, pods: number, podCount: number, w: WindowResult, extra: Partial<WorkloadResult>): WorkloadResult {
  const samples = extra.startupSamplesMs ?? [];
  return {
    ...ctx.config,
    workload,
    pods,
    podCount,
    podsPerSec: null,
    ceilingFraction: null,
    startupMs: summarize(samples),
    startupSource: null,
    eventLoopDelayMs: w.eventLoopDelayMs,
    relist: w.relist,
    agentCpuSeconds: w.agentCpuSeconds,
    cpuMsPerPod: workload === 'steady' || pods === 0 ? null : (w.agentCpuSeconds * 1000) / pods,
    cpuCores: w.durationMs > 0 ? w.agentCpuSeconds / (w.durationMs / 1000) : 0,
    runtimeCpuSeconds: w.runtimeCpuSeconds,
    rssMiB: w.rssMiB,
    peakRssMiB: w.peakRssMiB,
    threads: w.threads,
    runtimeRssMiB: w.runtimeRssMiB,
    criCalls: w.criCalls,
    criCallsPerPod: w.criCalls === null || workload === 'steady' || pods === 0 ? null : totalCalls(w.criCalls) / pods,
    durationS: w.durationMs / 1000,
    notes: [...w.notes],
    ...extra,
    startupSamplesMs: thin(samples, ctx.maxSamples),
  };
}

/** Evenly spaced subset, sorted (the CDF needs only the distribution). */
function thin(samples: readonly number[], max: number): number[] {
  const s = [...samples].sort((a, b) => a - b);
  if (s.length <= max) return s;
  return Array.from({ length: max }, (_, i) => s[Math.round((i * (s.length - 1)) / (max - 1))] as number);
}

function waitFailures(what: string, wait: { missing: readonly BenchPod[]; gaveUp: string | null }): string[] {
  if (wait.gaveUp === null) return [];
  return [`${what}: ${wait.gaveUp}; not reached: ${wait.missing.slice(0, 5).map((p) => p.name).join(', ')}${wait.missing.length > 5 ? ', …' : ''}`];
}

async function auditRunning(ctx: SessionContext, live: readonly BenchPod[], tolerated: ReadonlySet<string> = new Set()): Promise<void> {
  const [inv, views] = await Promise.all([inventory(ctx.cri), fetchPods(ctx.agentPort)]);
  ctx.failures.push(...capFailures([...auditRuntimeRunning(inv, live, tolerated), ...auditAgentPods(views, live, tolerated)]));
}

function startupFrom(wait: RunningWait, t0: number, pods: readonly BenchPod[]): Partial<WorkloadResult> {
  const times = [...wait.runningAtMs.values()];
  const lastMs = times.length > 0 ? Math.max(...times) : Number.NaN;
  return {
    podsPerSec: wait.missing.length === 0 ? ratePerSecond(pods.length, lastMs - t0) : null,
    startupSamplesMs: [...wait.latencyMs.values()],
    startupSource: wait.source,
  };
}

export async function burst(ctx: SessionContext, n: number): Promise<WorkloadResult> {
  const win = await beginWindow({ clock: ctx.clock, agentPid: ctx.agentPid, agentPort: ctx.agentPort, runtimePid: ctx.runtimePid, cri: ctx.cri });
  const t0 = ctx.clock.monotonic();
  const pods = await ctx.manifests.create(n);
  const wait = await waitRunning(pods, { clock: ctx.clock, log: ctx.log, agentPort: ctx.agentPort, onProgress: (d, t) => ctx.onProgress('burst', d, t) }, runningLimits(ctx, n));
  const w = await win.end();
  ctx.failures.push(...waitFailures(`burst of ${n}`, wait));
  await auditRunning(ctx, ctx.manifests.live());
  return result(ctx, 'burst', n, n, w, startupFrom(wait, t0, pods));
}

/** Relists the PLEG must complete after a burst before the steady window opens. */
const SETTLE_RELISTS = 2;
/**
 * After the relists, the window opens at the first 1 s sample of the agent's CPU (all threads,
 * /proc) under this many cores: the agent's one-off work after a burst — each thread's quiet
 * collection (src/shared/heap/quiet-collector.ts: 2 quiet seconds, then up to two full
 * collections per thread) and the last status writes — is not its steady state. The bound is
 * far above the steady target (0.03 core), so it only waits out those transients.
 */
const SETTLE_CPU_CORES = 0.1;
/** Give up settling after this long (the window then opens anyway, with a note). */
const SETTLE_LIMIT_MS = 60_000;

async function relistCount(port: number): Promise<number | null> {
  try {
    return sampleSum(parsePromText(await fetchMetricsText(port)), `${RELIST_METRIC}_count`);
  } catch {
    return null;
  }
}

/**
 * "All pods running" is reported as soon as each pod worker publishes its own fresh status; the
 * PLEG catches up on its next relist (at 1,000 pods: events and status inspections for every
 * pod, seconds of work). The steady state is measured after that: once SETTLE_RELISTS relists
 * completed after this call and then a one-second sample of the agent's CPU stayed under
 * SETTLE_CPU_CORES. Returns the settle time (ms), what it waited for, and a note when the limit
 * was hit.
 */
async function settle(ctx: SessionContext): Promise<{ ms: number; what: string; note?: string }> {
  const t0 = ctx.clock.monotonic();
  const first = await relistCount(ctx.agentPort);
  const over = (ms: number, what: string): { ms: number; what: string; note: string } => ({ ms, what, note: `steady: ${what} not reached within ${SETTLE_LIMIT_MS / 1000} s; measured anyway` });
  for (;;) {
    const ms = ctx.clock.monotonic() - t0;
    const n = await relistCount(ctx.agentPort);
    if (first !== null && n !== null && n - first >= SETTLE_RELISTS) break;
    if (ms >= SETTLE_LIMIT_MS) return over(ms, `${SETTLE_RELISTS} PLEG relists`);
    ctx.onProgress('steady: settling', Math.floor(ms / 1000), SETTLE_LIMIT_MS / 1000);
    await ctx.clock.sleep(250);
  }
  const what = `${SETTLE_RELISTS} PLEG relists, then a 1 s sample of agent CPU under ${SETTLE_CPU_CORES} core`;
  for (let cpu0 = readCpuSeconds(ctx.agentPid), s0 = ctx.clock.monotonic(); ; ) {
    await ctx.clock.sleep(1000);
    const cpu1 = readCpuSeconds(ctx.agentPid);
    const s1 = ctx.clock.monotonic();
    const ms = s1 - t0;
    if ((cpu1 - cpu0) / ((s1 - s0) / 1000) < SETTLE_CPU_CORES) return { ms, what };
    if (ms >= SETTLE_LIMIT_MS) return over(ms, what);
    ctx.onProgress('steady: settling', Math.floor(ms / 1000), SETTLE_LIMIT_MS / 1000);
    cpu0 = cpu1;
    s0 = s1;
  }
}

export async function steady(ctx: SessionContext, seconds: number): Promise<WorkloadResult> {
  const live = ctx.manifests.live();
  const settled = await settle(ctx);
  const win = await beginWindow({ clock: ctx.clock, agentPid: ctx.agentPid, agentPort: ctx.agentPort, runtimePid: ctx.runtimePid, cri: ctx.cri });
  const t0 = ctx.clock.monotonic();
  for (let elapsed = 0; elapsed < seconds * 1000; elapsed = ctx.clock.monotonic() - t0) {
    ctx.onProgress('steady', Math.floor(elapsed / 1000), seconds);
    await ctx.clock.sleep(Math.min(1000, seconds * 1000 - elapsed));
  }
  const w = await win.end();
  await auditRunning(ctx, live);
  const r = result(ctx, 'steady', 0, live.length, w, {});
  r.notes.push(`settled for ${Math.round(settled.ms)} ms (${settled.what}) before the window`);
  if (settled.note) r.notes.push(settled.note);
  return r;
}

/** Churn at `rate` pods/s for `seconds`; the pod count stays at its current value. */
export async function churn(ctx: SessionContext, rate: number, seconds: number): Promise<{ result: WorkloadResult; deleted: BenchPod[] }> {
  const podCount = ctx.manifests.live().length;
  const total = Math.max(1, Math.round(rate * seconds));
  const created: BenchPod[] = [];
  const deleted: BenchPod[] = [];
  const win = await beginWindow({ clock: ctx.clock, agentPid: ctx.agentPid, agentPort: ctx.agentPort, runtimePid: ctx.runtimePid, cri: ctx.cri });
  const t0 = ctx.clock.monotonic();
  // Absolute schedule (t0 + k/rate) so slow file writes do not stretch the window.
  for (let k = 0; k < total; k++) {
    const due = t0 + (k * 1000) / rate;
    const wait = due - ctx.clock.monotonic();
    if (wait > 0) await ctx.clock.sleep(wait);
    const oldest = ctx.manifests.live()[0];
    const [fresh] = await Promise.all([ctx.manifests.create(1), oldest ? ctx.manifests.delete([oldest]) : Promise.resolve([])]);
    created.push(...fresh);
    if (oldest) deleted.push(oldest);
    ctx.onProgress('churn', k + 1, total);
  }
  const wait = await waitRunning(created, { clock: ctx.clock, log: ctx.log, agentPort: ctx.agentPort, onProgress: (d, t) => ctx.onProgress('churn: new pods running', d, t) }, runningLimits(ctx, created.length));
  const gone = await waitTornDown(deleted, 'stopped', { clock: ctx.clock, cri: ctx.cri, onProgress: (d, t) => ctx.onProgress('churn: old pods stopped', d, t) }, runningLimits(ctx, deleted.length));
  const w = await win.end();
  ctx.failures.push(...waitFailures(`churn (new pods)`, wait), ...waitFailures('churn (deleted pods)', gone));
  // Deleted pods may still be stopped-but-present in the runtime (removal is checked at the end).
  await auditRunning(ctx, ctx.manifests.live(), new Set(deleted.map((p) => p.uid)));
  const views = await fetchPods(ctx.agentPort);
  ctx.failures.push(...capFailures(auditAgentGone(views, deleted)));
  const r = result(ctx, 'churn', created.length, podCount, w, startupFrom(wait, t0, created));
  r.notes.push(`target ${rate} pods/s for ${seconds} s: ${created.length} created, ${deleted.length} deleted`);
  // The rate runs from the first create to the last pod running, so it can never reach the
  // offered rate: the last pod is written at (total-1)/rate and still has to start. Say what
  // keeping pace would have measured (the last pod starting as fast as the median one).
  const p50 = r.startupMs?.p50;
  if (r.podsPerSec !== null && p50 !== undefined && p50 !== null) {
    const paced = total / ((total - 1) / rate + p50 / 1000);
    r.notes.push(
      `churn pods/s = ${total} pods ÷ (first create → last pod running): the last pod is written ${(((total - 1) / rate)).toFixed(2)} s in and then starts, so an agent keeping pace ` +
        `(last pod as fast as the median, ${Math.round(p50)} ms) measures ${paced.toFixed(1)} pods/s, not ${rate}; ` +
        (r.podsPerSec >= 0.9 * paced ? 'this run kept pace' : `this run fell behind (${r.podsPerSec.toFixed(1)} pods/s: pods queued while the next ones arrived)`),
    );
  }
  return { result: r, deleted };
}

/**
 * Removes every manifest. The rate is pods/s until every pod is stopped in the runtime (no
 * ready sandbox, no running container: the kubelet's "terminated"); afterwards every pod ever
 * deleted in this session must be removed from the runtime and gone from /pods within
 * `removalTimeoutMs`, else the run fails.
 */
export async function massDelete(ctx: SessionContext, earlierDeleted: readonly BenchPod[], removalTimeoutMs: number): Promise<WorkloadResult> {
  const win = await beginWindow({ clock: ctx.clock, agentPid: ctx.agentPid, agentPort: ctx.agentPort, runtimePid: ctx.runtimePid, cri: ctx.cri });
  const t0 = ctx.clock.monotonic();
  const pods = await ctx.manifests.deleteAll();
  const stopped = await waitTornDown(pods, 'stopped', { clock: ctx.clock, cri: ctx.cri, onProgress: (d, t) => ctx.onProgress('mass delete', d, t) }, runningLimits(ctx, pods.length));
  const w = await win.end();
  ctx.failures.push(...waitFailures(`mass delete of ${pods.length}`, stopped));
  const times = [...stopped.goneAtMs.values()];
  const all = [...earlierDeleted, ...pods];
  const tr0 = ctx.clock.monotonic();
  const removed = await waitTornDown(all, 'removed', { clock: ctx.clock, cri: ctx.cri, onProgress: (d, t) => ctx.onProgress('removal from runtime', d, t), pollIntervalMs: 500 }, { timeoutMs: removalTimeoutMs, stallMs: removalTimeoutMs });
  const inv = await inventory(ctx.cri);
  ctx.failures.push(...capFailures(auditRuntimeGone(inv, all, 'removed')), ...capFailures(auditAgentGone(await fetchPods(ctx.agentPort), all)));
  const r = result(ctx, 'mass-delete', pods.length, pods.length, w, {
    podsPerSec: stopped.missing.length === 0 && times.length > 0 ? ratePerSecond(pods.length, Math.max(...times) - t0) : null,
  });
  r.notes.push(`all ${all.length} deleted pods removed from the runtime ${removed.missing.length === 0 ? `${((ctx.clock.monotonic() - tr0) / 1000).toFixed(1)} s after the last stop` : 'NOT within the deadline'}`);
  return r;
}
