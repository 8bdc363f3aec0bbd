/**
 * The PLEG thread terminated in the middle of a burst (it relists, inspects and writes the pod
 * cache all the time then; a termination inside a cache write leaves its locks to the agent's
 * recovery), three times, once a quarter, a half and three quarters of the pods run: each time
 * the replacement (the runner's warm standby thread) has reported its resync relist within 2 s
 * of the termination (it takes every pod whose cache entry matches the listing from the cache
 * with a PodSync, and inspects the others), the pod workers keep starting pods meanwhile, and the burst converges with 0
 * duplicates and 0 leftovers. The agent runs in-process (to reach its PLEG runner); the runtime
 * is a process. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent } from '../../src/main/agent/agent.js';
import { AGENT_DEFAULTS } from '../../src/main/agent/agent-config.js';
import { realClock, realRandom } from '../../src/shared/clock/clock.js';
import { silentLogger } from '../../src/shared/logging/logger.js';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { freePort, pollUntil, runtimeView, writePodManifest } from './agent-harness.js';

const PODS = 100;
const CRASHES = 3;
/**
 * From the termination to the replacement's resync relist reported (every pod resynced): the
 * issue's 2 s. The replacement is the runner's warm spare (booted beforehand), so what remains
 * is the 100 ms restart backoff, the activation message and one relist: ListPodSandbox +
 * ListContainers, one entry decode per pod, and inspections only for the pods in flux.
 */
const RESYNCED_BOUND_MS = 2_000;

let sim: SimRuntimeInstance | undefined;
let agent: Agent | undefined;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-plegcrash-'));

after(async () => {
  await agent?.stop();
  await sim?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

type View = Awaited<ReturnType<typeof runtimeView>>;

function running(v: View): number {
  return [...v.values()].filter((p) => p.sandboxes.filter((s) => s.state === 'SANDBOX_READY').length === 1 && p.containers.filter((c) => c.state === 'CONTAINER_RUNNING').length === 1).length;
}

function problems(v: View): string[] {
  const out: string[] = [];
  for (const [uid, p] of v) {
    if (p.sandboxes.length !== 1) out.push(`${uid}: ${p.sandboxes.length} sandboxes`);
    if (p.containers.length !== 1) out.push(`${uid}: ${p.containers.length} containers`);
    for (const c of p.containers) if (c.state !== 'CONTAINER_RUNNING') out.push(`${uid}: container ${c.state}`);
  }
  return out;
}

test('the PLEG thread terminated mid-burst is replaced and relisting within 2 s, resynced; pods keep starting; 0 duplicates', async (t) => {
  // The containerd latency profile: a burst of ~5 s (containerd's ~20 pods/s), so every crash lands in it.
  sim = await startSimRuntime({ profile: 'containerd', extraArgs: ['--image', 'docker.io/local/busybox:1'] });
  const dir = path.join(root, 'manifests');
  fs.mkdirSync(dir);
  agent = new Agent({
    config: { ...AGENT_DEFAULTS, containerRuntimeEndpoint: sim.endpoint, podManifestPath: dir, nodeName: 'n', workers: 2, maxPods: 1000, port: 0, readOnlyPort: await freePort(), rootDir: root, podLogsDir: path.join(root, 'pods'), fileCheckFrequencyMs: 1_000 },
    clock: realClock,
    random: realRandom,
    logger: silentLogger,
  });
  await agent.start();
  const pleg = agent.pleg!;
  for (let i = 0; i < PODS; i++) writePodManifest(dir, `c-${i}`);
  await pollUntil(async () => ((await runtimeView(sim!.endpoint)).size > 0 ? true : undefined), { what: 'the burst to start', timeoutMs: 30_000, intervalMs: 20 });

  const figures: string[] = [];
  for (let k = 0; k < CRASHES; k++) {
    // Crash k+1 once k+1 quarters of the pods run (mid-burst; or at once if the burst is ahead).
    const runningAtKill = await pollUntil(async () => {
      const n = running(await runtimeView(sim!.endpoint));
      return n >= ((k + 1) * PODS) / 4 ? n : undefined;
    }, { what: `${k + 1}/4 of the pods running`, timeoutMs: 60_000, intervalMs: 10 });
    // The product keeps a booted standby thread beside a relisting one (pleg-runner.ts): the
    // replacement is that spare. After a replacement a new spare boots once the activated thread
    // relisted; wait for it (bounded) so each crash exercises the path the agent normally takes.
    await pollUntil(() => (pleg.standbyReady() ? true : undefined), { what: `a standby PLEG thread before crash ${k + 1}`, timeoutMs: 30_000, intervalMs: 10 });
    const before = pleg.threadId();
    const killedAt = realClock.monotonic();
    await pleg.terminateThread();
    const replaced = await pollUntil(() => {
      const id = pleg.threadId();
      return id !== undefined && id !== before ? id : undefined;
    }, { what: `a replacement PLEG thread (crash ${k + 1})`, timeoutMs: 10_000, intervalMs: 10 });
    const replacedMs = realClock.monotonic() - killedAt;
    await pollUntil(() => ((pleg.lastRelistMs() ?? -Infinity) > killedAt ? true : undefined), { what: `the replacement's first relist (crash ${k + 1})`, timeoutMs: 10_000, intervalMs: 10 });
    const resyncMs = realClock.monotonic() - killedAt;
    const relistingMs = (pleg.lastRelistMs() ?? Infinity) - killedAt;
    const runningAfter = running(await runtimeView(sim.endpoint));
    figures.push(`crash ${k + 1}: thread ${before} → ${replaced}, replaced after ${Math.round(replacedMs)} ms, relist started ${Math.round(relistingMs)} ms and reported ${Math.round(resyncMs)} ms after the termination, running pods ${runningAtKill} → ${runningAfter}`);
    t.diagnostic(figures.at(-1)!);
    assert.ok(resyncMs <= RESYNCED_BOUND_MS, `crash ${k + 1}: resynced ${Math.round(resyncMs)} ms after the termination`);
  }
  assert.equal(pleg.restarts, CRASHES);

  const t0 = realClock.monotonic();
  const end = await pollUntil(async () => {
    const v = await runtimeView(sim!.endpoint);
    return running(v) === PODS && v.size === PODS && problems(v).length === 0 ? v : undefined;
  }, { what: `${PODS} pods running, one sandbox and one container each`, timeoutMs: 90_000, intervalMs: 100 });
  figures.push(`all ${PODS} running ${Math.round(realClock.monotonic() - t0)} ms after the last replacement relisted`);
  for (const f of figures) t.diagnostic(f);
  assert.deepEqual(problems(end), []);
  assert.equal(pleg.health().healthy, true);
});
