/**
 * Waiting for pods to reach a state, on real events, with a deadline and a stall detector:
 *
 *   - `waitRunning`: every pod has been seen Running by the agent. Preferred source: the
 *     agent's `pod running` log line (RunningLog; latency = the agent's seenToRunningMs, time =
 *     when the line arrived). Until the first such line arrives /pods is polled too (every
 *     `detectIntervalMs`, slowly: it is observer load); if /pods has shown a pod running for
 *     `logGraceMs` with still no line, the agent does not emit them, and the wait falls back
 *     to polling /pods (latency = first poll that shows the pod running − manifest write;
 *     resolution = poll interval, and the detection interval for pods seen before the switch).
 *   - `waitTornDown`: every deleted pod has left the runtime to `level` (polling CRI lists).
 *
 * Both resolve with per-pod times; they never throw for slowness: a timeout or a stall is
 * returned as data (`missing`) so the caller can report exactly which pods did not make it.
 */
import type { Clock } from '../src/shared/clock/clock.js';
import type { RuntimeService } from '../src/shared/cri/runtime-service.js';
import { fetchPods, type RunningLog } from './agent-observer.js';
import { inventory, teardownState } from './pod-audit.js';
import type { BenchPod } from './pod-manifests.js';
import type { StartupSource } from './results.js';

export interface WaitLimits {
  /** Give up this long after the wait began. */
  timeoutMs: number;
  /** Give up when no pod progressed for this long. */
  stallMs: number;
}

export interface RunningWait {
  source: StartupSource;
  /** Per pod UID: bench monotonic ms it was seen running. */
  runningAtMs: Map<string, number>;
  /** Per pod UID: manifest → running latency (ms). */
  latencyMs: Map<string, number>;
  missing: BenchPod[];
  /** Why the wait ended early, when it did. */
  gaveUp: string | null;
}

export interface RunningWaitDeps {
  clock: Clock;
  log: RunningLog;
  agentPort: number;
  onProgress?: (done: number, total: number) => void;
  logGraceMs?: number;
  /** /pods poll interval once the wait has fallen back to polling (the latency resolution). */
  pollIntervalMs?: number;
  /**
   * /pods poll interval while the wait only looks for evidence that the agent runs pods
   * without logging them. Kept long: /pods of 1,000 pods costs the agent's main thread
   * ~30 ms per request, and with a logging agent every such request is pure observer load.
   */
  detectIntervalMs?: number;
}

export async function waitRunning(pods: readonly BenchPod[], deps: RunningWaitDeps, limits: WaitLimits): Promise<RunningWait> {
  const { clock, log } = deps;
  const start = clock.monotonic();
  const logGraceMs = deps.logGraceMs ?? 3000;
  const pollMs = deps.pollIntervalMs ?? (pods.length > 1000 ? 1000 : 500);
  const detectMs = deps.detectIntervalMs ?? 2000;
  const polled = new Map<string, number>();
  let source: StartupSource = 'agent-log';
  let lastProgressAt = start;
  let lastDone = -1;
  let firstPolledRunningAt: number | undefined;
  for (;;) {
    const now = clock.monotonic();
    // Poll /pods while the log is silent (always, once in pods-poll mode): the switch to
    // polling needs evidence that pods run without log lines, not just a slow runtime.
    if (source === 'pods-poll' || log.size === 0) {
      try {
        const t = clock.monotonic();
        for (const v of await fetchPods(deps.agentPort)) if (v.phase === 'Running' && v.allRunning && !polled.has(v.uid)) polled.set(v.uid, t);
      } catch {
        // A slow or failing /pods is retried on the next tick; the deadline bounds it.
      }
      if (firstPolledRunningAt === undefined && pods.some((p) => polled.has(p.uid))) firstPolledRunningAt = now;
    }
    if (source === 'agent-log' && log.size === 0 && firstPolledRunningAt !== undefined && now - firstPolledRunningAt > logGraceMs) source = 'pods-poll';
    let done = 0;
    for (const p of pods) if (source === 'agent-log' ? log.get(p.uid) : polled.has(p.uid)) done++;
    // Progress (for the stall detector) counts pods seen running by either source.
    const seen = Math.max(done, pods.filter((p) => polled.has(p.uid)).length);
    deps.onProgress?.(seen, pods.length);
    if (seen !== lastDone) {
      lastDone = seen;
      lastProgressAt = now;
    }
    const gaveUp =
      done === pods.length ? null
      : now - start > limits.timeoutMs ? `timed out after ${Math.round((now - start) / 1000)} s with ${done}/${pods.length} running`
      : seen < pods.length && now - lastProgressAt > limits.stallMs ? `stalled: no pod became running for ${Math.round(limits.stallMs / 1000)} s (${done}/${pods.length} running)`
      : undefined;
    if (gaveUp !== undefined) return collect(pods, source, log, polled, gaveUp);
    await clock.sleep(source === 'pods-poll' ? pollMs : log.size > 0 ? 100 : Math.min(detectMs, logGraceMs));
  }
}

function collect(pods: readonly BenchPod[], source: StartupSource, log: RunningLog, polled: Map<string, number>, gaveUp: string | null): RunningWait {
  const runningAtMs = new Map<string, number>();
  const latencyMs = new Map<string, number>();
  const missing: BenchPod[] = [];
  for (const p of pods) {
    const ev = log.get(p.uid);
    const at = source === 'agent-log' ? ev?.atMs : polled.get(p.uid);
    if (at === undefined) {
      missing.push(p);
      continue;
    }
    runningAtMs.set(p.uid, at);
    const lat = source === 'agent-log' ? (ev?.seenToRunningMs ?? at - p.writtenAtMs) : at - p.writtenAtMs;
    latencyMs.set(p.uid, lat);
  }
  return { source, runningAtMs, latencyMs, missing, gaveUp };
}

export interface TeardownWait {
  /** Per pod UID: bench monotonic ms it was first seen at `level` (or beyond). */
  goneAtMs: Map<string, number>;
  missing: BenchPod[];
  gaveUp: string | null;
}

/** Polls the runtime until every pod in `pods` is `stopped` (or `removed`, per `level`). */
export async function waitTornDown(
  pods: readonly BenchPod[],
  level: 'stopped' | 'removed',
  deps: { clock: Clock; cri: Pick<RuntimeService, 'listPodSandbox' | 'listContainers'>; onProgress?: (done: number, total: number) => void; pollIntervalMs?: number },
  limits: WaitLimits,
): Promise<TeardownWait> {
  const { clock } = deps;
  const start = clock.monotonic();
  const goneAtMs = new Map<string, number>();
  let lastProgressAt = start;
  for (;;) {
    const t = clock.monotonic();
    let inv;
    try {
      inv = await inventory(deps.cri);
    } catch {
      inv = null;
    }
    if (inv) {
      for (const p of pods) {
        if (goneAtMs.has(p.uid)) continue;
        const st = teardownState(inv, p.uid);
        if (st === 'removed' || (level === 'stopped' && st === 'stopped')) {
          goneAtMs.set(p.uid, t);
          lastProgressAt = t;
        }
      }
    }
    deps.onProgress?.(goneAtMs.size, pods.length);
    const now = clock.monotonic();
    const gaveUp =
      goneAtMs.size === pods.length ? null
      : now - start > limits.timeoutMs ? `timed out after ${Math.round((now - start) / 1000)} s with ${goneAtMs.size}/${pods.length} ${level}`
      : now - lastProgressAt > limits.stallMs ? `stalled: no pod became ${level} for ${Math.round(limits.stallMs / 1000)} s (${goneAtMs.size}/${pods.length})`
      : undefined;
    if (gaveUp !== undefined) return { goneAtMs, missing: pods.filter((p) => !goneAtMs.has(p.uid)), gaveUp };
    await clock.sleep(deps.pollIntervalMs ?? 200);
  }
}
