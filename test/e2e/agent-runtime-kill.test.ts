/**
 * The runtime SIGKILLed in the middle of a burst, on the real agent process against the
 * simulated runtime process (same socket before and after):
 *   - state kept: the runtime comes back with what it had saved up to ~100 ms before the kill
 *     (`--state FILE --state-interval-ms 100`), so the objects of the last calls are lost, as a
 *     containerd whose metadata lagged would;
 *   - state dropped: the runtime comes back empty.
 * The runtime is restarted once a relist failed (the agent saw the outage).
 * Both must converge from the PLEG's next relists (not the 60–90 s periodic resync): every pod
 * with one ready sandbox and one running container, 0 duplicates (a pod with two ready
 * sandboxes or two running containers, sampled at every poll), 0 leftover containers (none of
 * a pod the agent does not want, none created and never started, no second sandbox kept by a
 * pod whose sandbox survived). The figures are printed as diagnostics.
 */
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimRuntime, type ManagedProcess } from '../../bench/processes.js';
import { realClock } from '../../src/clock/clock.js';
import { pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

const PODS = 60;
const IMAGE = 'docker.io/local/busybox:1';
/** The agent's relist period (its default): "within 2 relist periods" is measured against it. */
const RELIST_MS = 1_000;

const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

type View = Awaited<ReturnType<typeof runtimeView>>;

interface Audit {
  runningPods: number;
  duplicates: string[];
  leftovers: string[];
}

function audit(v: View): Audit {
  const duplicates: string[] = [];
  const leftovers: string[] = [];
  let runningPods = 0;
  for (const [uid, p] of v) {
    const ready = p.sandboxes.filter((s) => s.state === 'SANDBOX_READY').length;
    const running = p.containers.filter((c) => c.state === 'CONTAINER_RUNNING').length;
    if (ready > 1) duplicates.push(`${uid}: ${ready} ready sandboxes`);
    if (running > 1) duplicates.push(`${uid}: ${running} running containers`);
    for (const c of p.containers) if (c.state !== 'CONTAINER_RUNNING') leftovers.push(`${uid}: container ${c.id.slice(0, 12)} ${c.state}`);
    if (p.sandboxes.length > 1) leftovers.push(`${uid}: ${p.sandboxes.length} sandboxes`);
    if (ready === 1 && running === 1) runningPods++;
  }
  return { runningPods, duplicates, leftovers };
}

async function scenario(t: TestContext, keepState: boolean): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-rtkill-'));
  cleanup.push(async () => fs.rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, 'manifests');
  fs.mkdirSync(dir);
  const socket = path.join(root, 'sim.sock');
  const endpoint = `unix://${socket}`;
  const stateArgs = keepState ? ['--state', path.join(root, 'sim-state.json'), '--state-interval-ms', '100'] : [];
  const startRuntime = (): Promise<ManagedProcess> => startSimRuntime({ socket, profile: 'zero', images: [IMAGE], extraArgs: stateArgs, clock: realClock });
  let sim = await startRuntime();
  cleanup.push(() => sim.stop(2_000));
  const agent: AgentProcess = await startAgent({ endpoint, manifestDir: dir, workers: 2, extraArgs: ['--runtime-request-timeout', '5s'] });
  cleanup.push(() => agent.kill());

  // A first third runs; then the rest arrives at once and the runtime dies at the first sign of
  // that burst's progress (its pods are then mid-creation: sandboxes without containers,
  // containers created and not started, starts in flight).
  const first = PODS / 3;
  for (let i = 0; i < first; i++) writePodManifest(dir, `k-${i}`);
  await pollUntil(async () => (audit(await runtimeView(endpoint)).runningPods === first ? true : undefined), { what: `${first} pods running`, timeoutMs: 60_000, intervalMs: 50 });
  for (let i = first; i < PODS; i++) writePodManifest(dir, `k-${i}`);
  let during: Audit | undefined;
  const before = await pollUntil(async () => {
    const v = await runtimeView(endpoint);
    const a = (during = audit(v));
    return v.size > first ? a : undefined;
  }, { what: 'the burst to be under way', timeoutMs: 60_000, intervalMs: 10 }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last ${JSON.stringify(during)}; agent log tail:\n${agent.logs.slice(-10).join('\n')}`);
  });
  const logsBefore = agent.logs.length;
  process.kill(sim.pid, 'SIGKILL');
  await sim.exited;
  // The runtime stays away until the agent noticed (one relist failed): a crash, not a blip
  // shorter than a relist period (after such a blip, failed syncs wait out the kubelet's 10 s
  // error backoff, as they would in the kubelet).
  await pollUntil(() => (agent.logs.slice(logsBefore).some((l) => l.includes('Unable to retrieve pods')) ? true : undefined), { what: 'a failed relist', timeoutMs: 30_000, intervalMs: 20 });
  const returnStart = realClock.monotonic();
  sim = await startRuntime();
  const returned = realClock.monotonic();

  const seenDuplicates = new Set<string>();
  let last: Audit = { runningPods: 0, duplicates: [], leftovers: [] };
  await pollUntil(async () => {
    last = audit(await runtimeView(endpoint));
    for (const d of last.duplicates) seenDuplicates.add(d);
    return last.runningPods === PODS && last.leftovers.length === 0 ? true : undefined;
  }, { what: `${PODS} pods running, nothing left over`, timeoutMs: 60_000, intervalMs: 50 }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; ${last.runningPods}/${PODS} running; leftovers ${JSON.stringify(last.leftovers.slice(0, 10))}; agent log tail:\n${agent.logs.slice(-20).join('\n')}`);
  });
  const convergedMs = realClock.monotonic() - returned;
  if (process.env['SHARDLET_DUMP_AGENT_LOG']) fs.writeFileSync(process.env['SHARDLET_DUMP_AGENT_LOG'] + (keepState ? '.kept' : '.dropped'), agent.logs.join('\n'));
  const view = await runtimeView(endpoint);
  t.diagnostic(`${keepState ? 'state kept' : 'state dropped'}: killed with ${before.runningPods}/${PODS} running; runtime back in ${Math.round(returned - returnStart)} ms; all ${PODS} pods converged ${Math.round(convergedMs)} ms after its return (${(convergedMs / RELIST_MS).toFixed(1)} relist periods); duplicates seen ${seenDuplicates.size}; runtime pods ${view.size}`);

  assert.deepEqual([...seenDuplicates], [], 'no pod ever had two ready sandboxes or two running containers');
  assert.equal(view.size, PODS, 'no pod the agent does not want');
  assert.deepEqual(audit(view).leftovers, []);
  // The bound: within 2 relist periods of the runtime's return (measured 0.8), with slack for
  // this shared 2-core machine; the periodic resync (60–90 s) or the 10 s error backoff fail it.
  assert.ok(convergedMs <= 2 * RELIST_MS + NOISE_ALLOWANCE_MS, `converged ${Math.round(convergedMs)} ms after the runtime returned`);
  // The agent did not exit and its PLEG is healthy again.
  assert.deepEqual(await agent.get('/healthz/pleg'), { status: 200, body: 'ok' });
}

/** CPU contention on a shared 2-core machine (other test runs beside this one). */
const NOISE_ALLOWANCE_MS = 1_000;

test('runtime SIGKILLed mid-burst, state kept: every pod converges from the next relists, 0 duplicates, 0 leftovers', async (t) => {
  await scenario(t, true);
});

test('runtime SIGKILLed mid-burst, state dropped: every pod is re-created from the next relists, 0 duplicates, 0 leftovers', async (t) => {
  await scenario(t, false);
});
