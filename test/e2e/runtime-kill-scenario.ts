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
import { pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

type View = Awaited<ReturnType<typeof runtimeView>>;

export interface Audit {
  runningPods: number;
  /** Pods with two ready sandboxes or two running containers. */
  duplicates: string[];
  /** Containers not running (exited, created and never started, unknown). */
  leftovers: string[];
  /**
   * Sandboxes beside a pod's ready one (not ready: a RunPodSandbox interrupted by the crash, or
   * a sandbox replaced). The kubelet leaves these to its sandbox GC too (evictSandboxes).
   */
  deadSandboxes: string[];
}

export function audit(v: View): Audit {
  const duplicates: string[] = [];
  const leftovers: string[] = [];
  const deadSandboxes: string[] = [];
  let runningPods = 0;
  for (const [uid, p] of v) {
    const ready = p.sandboxes.filter((s) => s.state === 'SANDBOX_READY').length;
    const running = p.containers.filter((c) => c.state === 'CONTAINER_RUNNING').length;
    if (ready > 1) duplicates.push(`${uid}: ${ready} ready sandboxes`);
    if (running > 1) duplicates.push(`${uid}: ${running} running containers`);
    for (const c of p.containers) if (c.state !== 'CONTAINER_RUNNING') leftovers.push(`${uid}: container ${c.id.slice(0, 12)} ${c.state}`);
    if (p.sandboxes.length > 1) deadSandboxes.push(`${uid}: ${p.sandboxes.length} sandboxes`);
    if (ready === 1 && running === 1) runningPods++;
  }
  return { runningPods, duplicates, leftovers, deadSandboxes };
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
  runtimePods: number;
  pleg: { status: number; body: string };
}

export async function runtimeKillScenario(o: RuntimeKillOptions): Promise<RuntimeKillResult> {
  const dir = path.join(o.workDir, 'manifests');
  fs.mkdirSync(dir);
  const agent: AgentProcess = await startAgent({ endpoint: o.endpoint, manifestDir: dir, workers: 2, extraArgs: ['--runtime-request-timeout', '5s'] });
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

  const seen = new Set<string>();
  let last: Audit = { runningPods: 0, duplicates: [], leftovers: [], deadSandboxes: [] };
  await pollUntil(async () => {
    last = audit(await runtimeView(o.endpoint));
    for (const d of last.duplicates) seen.add(d);
    return last.runningPods === o.pods && last.leftovers.length === 0 ? true : undefined;
  }, { what: `${o.pods} pods running, nothing left over`, timeoutMs: o.convergeTimeoutMs ?? 60_000, intervalMs: 50 }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; ${last.runningPods}/${o.pods} running; leftovers ${JSON.stringify(last.leftovers.slice(0, 10))}; agent log tail:\n${tail(20)}`);
  });
  const convergedMs = realClock.monotonic() - returned;
  const view = await runtimeView(o.endpoint);
  const pleg = await agent.get('/healthz/pleg');
  assert.ok(agent.pid > 0);
  return { runningAtKill: before.runningPods, downMs: returned - downAt, convergedMs, duplicatesSeen: [...seen], final: audit(view), runtimePods: view.size, pleg };
}
