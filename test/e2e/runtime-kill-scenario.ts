/**
 * The "runtime SIGKILLed mid-burst" scenario, on any runtime a test can kill and restart on the
 * same socket (the simulated runtime with or without its state, containerd): the real agent
 * process runs a third of `pods`, the rest arrives at once, and the runtime dies at the first
 * sign of that burst's progress (pods mid-creation: sandboxes without containers, containers
 * created and not started, starts in flight). It comes back once the agent noticed (a relist
 * failed): a crash, not a blip shorter than a relist period (after such a blip, failed syncs
 * wait out the kubelet's 10 s error backoff, as they would in the kubelet).
 *
 * Measured: the time from the runtime's return until every pod has one ready sandbox and one
 * running container and no container is left over (dead sandboxes are counted apart, see
 * Audit); duplicates (a pod with two ready sandboxes or
 * two running containers) sampled at every poll. Waiting is bounded polling of the runtime.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { realClock } from '../../src/shared/clock/clock.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess, type RuntimeView } from './agent-harness.js';

type View = RuntimeView;

/**
 * What the runtime holds once the pods converged, judged by the kubelet's rules.
 *
 * The kubelet's container GC (kuberuntime_gc.go evictContainers) removes a pod's non-running
 * instances of a container beyond the newest MaxPerPodContainer (default 1), newest by
 * attempt; it does not tell apart an instance that never ran (startedAt 0 — e.g. a
 * StartContainer the runtime's crash interrupted, which containerd reports EXITED with exit
 * code 128 on its return): that is the one dead instance it keeps (and its
 * lastState/restartCount come from it). So per (pod, container name):
 *   - more than one RUNNING instance: a duplicate;
 *   - one EXITED instance older (lower attempt) than the running one: kept, counted apart;
 *   - anything else not running is left over: a CREATED instance (never started and never
 *     going to be, a newer one runs), an UNKNOWN one (may still run), an EXITED one beyond the
 *     newest, or an EXITED one newer than the running instance; and any container whose
 *     sandbox is not listed (an orphan).
 */
export interface Audit {
  runningPods: number;
  /** Pods with two ready sandboxes or two running instances of a container. */
  duplicates: string[];
  /** Instances the kubelet's container GC would not leave behind (see above). */
  leftovers: string[];
  /** The one dead instance per (pod, container) the kubelet's GC keeps: printed, not failed. */
  keptDead: string[];
  /**
   * Sandboxes beside a pod's ready one (not ready: a RunPodSandbox interrupted by the crash, or
   * a sandbox replaced). The kubelet leaves these to its sandbox GC too (evictSandboxes).
   */
  deadSandboxes: string[];
}

export function audit(v: View): Audit {
  const duplicates: string[] = [];
  const leftovers: string[] = [];
  const keptDead: string[] = [];
  const deadSandboxes: string[] = [];
  let runningPods = 0;
  for (const [uid, p] of v) {
    const ready = p.sandboxes.filter((s) => s.state === 'SANDBOX_READY').length;
    const running = p.containers.filter((c) => c.state === 'CONTAINER_RUNNING').length;
    if (ready > 1) duplicates.push(`${uid}: ${ready} ready sandboxes`);
    const sandboxIds = new Set(p.sandboxes.map((s) => s.id));
    const byName = new Map<string, typeof p.containers>();
    for (const c of p.containers) {
      if (!sandboxIds.has(c.sandboxId)) leftovers.push(`${uid}: container ${c.name}#${c.attempt} ${c.id.slice(0, 12)} ${c.state} in sandbox ${c.sandboxId.slice(0, 12)}, which is not listed`);
      const list = byName.get(c.name) ?? [];
      list.push(c);
      byName.set(c.name, list);
    }
    for (const [name, instances] of byName) {
      const runningOnes = instances.filter((c) => c.state === 'CONTAINER_RUNNING');
      if (runningOnes.length > 1) duplicates.push(`${uid}: ${runningOnes.length} running instances of ${name}`);
      const runningAttempt = Math.max(-1, ...runningOnes.map((c) => c.attempt));
      const exited = instances.filter((c) => c.state === 'CONTAINER_EXITED').sort((a, b) => b.attempt - a.attempt);
      const kept = exited[0] && exited[0].attempt < runningAttempt ? exited[0] : undefined;
      for (const c of instances) {
        if (c.state === 'CONTAINER_RUNNING') continue;
        const what = `${uid}: container ${name}#${c.attempt} ${c.id.slice(0, 12)} ${c.state}`;
        if (c === kept) keptDead.push(what);
        else leftovers.push(what);
      }
    }
    if (p.sandboxes.length > 1) deadSandboxes.push(`${uid}: ${p.sandboxes.length} sandboxes`);
    if (ready === 1 && running === 1) runningPods++;
  }
  return { runningPods, duplicates, leftovers, keptDead, deadSandboxes };
}

/** Each leftover's ContainerStatus (state, exit code, started/finished, reason), for a failure message. */
async function describeLeftovers(endpoint: string, a: Audit): Promise<string> {
  const cri = new CriClient({ endpoint, timeoutMs: 10_000 });
  try {
    const lines: string[] = [];
    for (const l of [...a.leftovers, ...a.keptDead].slice(0, 10)) {
      const id = /container \S+ ([0-9a-f]{12})/.exec(l)?.[1];
      const full = id ? (await cri.listContainers()).find((c) => c.id.startsWith(id)) : undefined;
      if (!full) {
        lines.push(`${l}: gone`);
        continue;
      }
      const st = (await cri.containerStatus(full.id)).status;
      lines.push(`${l}: exitCode ${st?.exitCode} startedAt ${String(st?.startedAt)} finishedAt ${String(st?.finishedAt)} reason ${JSON.stringify(st?.reason)} ${JSON.stringify(st?.message)}`);
    }
    return lines.join('\n');
  } catch (err) {
    return `(could not describe: ${String(err)})`;
  } finally {
    cri.close();
  }
}

export interface RuntimeKillOptions {
  endpoint: string;
  /** A directory this scenario may fill (manifests). */
  workDir: string;
  pods: number;
  /** SIGKILL the runtime, await `whileDown`, start it again on the same socket, resolve when ready. */
  killAndRestart(whileDown: () => Promise<void>): Promise<void>;
  /** Registers cleanup (the agent). */
  onCleanup(fn: () => Promise<void>): void;
  convergeTimeoutMs?: number;
}

export interface RuntimeKillResult {
  runningAtKill: number;
  downMs: number;
  convergedMs: number;
  duplicatesSeen: string[];
  final: Audit;
  /** The kept dead instances' ContainerStatus (exit code, startedAt, reason), '' when none. */
  keptDeadDetail: string;
  /** The agent's error, failed-sync and runtime-return lines from the runtime's return to convergence (why a pod was slow). */
  logSinceReturn: string[];
  runtimePods: number;
  pleg: { status: number; body: string };
}

export async function runtimeKillScenario(o: RuntimeKillOptions): Promise<RuntimeKillResult> {
  const dir = path.join(o.workDir, 'manifests');
  fs.mkdirSync(dir);
  // A short CRI deadline so calls caught by the kill fail fast; 10 s, not less: right after a
  // restart containerd re-creates the interrupted sandboxes at its own pace, and on a loaded
  // 2-core machine a RunPodSandbox among 16 concurrent ones took over 5 s (a CI run: the syncs
  // it failed waited out the 10-15 s error backoff, 21.9 s in all).
  const agent: AgentProcess = await startAgent({ endpoint: o.endpoint, manifestDir: dir, workers: 2, extraArgs: ['--runtime-request-timeout', '10s'] });
  o.onCleanup(() => agent.kill());
  const tail = (n: number): string => agent.logs.slice(-n).join('\n');

  const first = Math.floor(o.pods / 3);
  for (let i = 0; i < first; i++) writePodManifest(dir, `k-${i}`);
  await pollUntil(async () => (audit(await runtimeView(o.endpoint)).runningPods === first ? true : undefined), { what: `${first} pods running`, timeoutMs: 120_000, intervalMs: 50 });
  for (let i = first; i < o.pods; i++) writePodManifest(dir, `k-${i}`);
  let during: Audit | undefined;
  const before = await pollUntil(async () => {
    const v = await runtimeView(o.endpoint);
    const a = (during = audit(v));
    return v.size > first ? a : undefined;
  }, { what: 'the burst to be under way', timeoutMs: 60_000, intervalMs: 10 }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last ${JSON.stringify(during)}; agent log tail:\n${tail(10)}`);
  });

  const logsBefore = agent.logs.length;
  let downAt = 0;
  await o.killAndRestart(async () => {
    await pollUntil(() => (agent.logs.slice(logsBefore).some((l) => l.includes('Unable to retrieve pods')) ? true : undefined), { what: 'a failed relist', timeoutMs: 30_000, intervalMs: 20 });
    downAt = realClock.monotonic();
  });
  const returned = realClock.monotonic();
  const logsAtReturn = agent.logs.length;

  const seen = new Set<string>();
  let last: Audit = { runningPods: 0, duplicates: [], leftovers: [], keptDead: [], deadSandboxes: [] };
  await pollUntil(async () => {
    last = audit(await runtimeView(o.endpoint));
    for (const d of last.duplicates) seen.add(d);
    return last.runningPods === o.pods && last.leftovers.length === 0 ? true : undefined;
  }, { what: `${o.pods} pods running, nothing left over`, timeoutMs: o.convergeTimeoutMs ?? 60_000, intervalMs: 50 }).catch(async (err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; ${last.runningPods}/${o.pods} running; leftovers ${JSON.stringify(last.leftovers.slice(0, 10))}; kept dead ${JSON.stringify(last.keptDead.slice(0, 10))}\n${await describeLeftovers(o.endpoint, last)}\nagent log tail:\n${tail(20)}`);
  });
  const convergedMs = realClock.monotonic() - returned;
  const view = await runtimeView(o.endpoint);
  const pleg = await agent.get('/healthz/pleg');
  assert.ok(agent.pid > 0);
  const final = audit(view);
  const keptDeadDetail = final.keptDead.length > 0 ? await describeLeftovers(o.endpoint, final) : '';
  const logSinceReturn = agent.logs.slice(logsAtReturn).filter((l) => l.includes('"level":"error"') || l.includes('runtime listed again') || l.includes('syncPod failed')).slice(-30);
  return { runningAtKill: before.runningPods, downMs: returned - downAt, convergedMs, duplicatesSeen: [...seen], final, keptDeadDetail, logSinceReturn, runtimePods: view.size, pleg };
}
