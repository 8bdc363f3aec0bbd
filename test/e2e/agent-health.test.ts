/**
 * /healthz on the real agent process when its runtime goes away: with
 * `--pleg-relist-threshold 3s`, stopping the simulated runtime turns /healthz into 500 with the
 * kubelet's PLEG reason and the threshold, and /healthz/pleg into 500 with the same reason; the
 * agent process keeps running, and once a runtime serves the same socket again the PLEG relists,
 * /healthz returns to "ok" and the agent re-creates the pods in the new (empty) runtime.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimRuntime, type ManagedProcess } from '../../bench/processes.js';
import { realClock } from '../../src/shared/clock/clock.js';
import { pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

const PODS = 20;
const IMAGE = 'docker.io/local/busybox:1';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-health-'));
const dir = path.join(root, 'manifests');
const socket = path.join(root, 'sim.sock');
const endpoint = `unix://${socket}`;

let sim: ManagedProcess | undefined;
let agent: AgentProcess | undefined;

/** The runtime on a socket this test owns (it outlives one runtime process). */
function startRuntime(): Promise<ManagedProcess> {
  return startSimRuntime({ socket, profile: 'zero', images: [IMAGE], clock: realClock });
}

async function runningInRuntime(): Promise<number> {
  const v = await runtimeView(endpoint);
  return [...v.values()].filter((p) => p.containers.some((c) => c.state === 'CONTAINER_RUNNING')).length;
}

before(async () => {
  fs.mkdirSync(dir);
  for (let i = 0; i < PODS; i++) writePodManifest(dir, `h-${i}`);
  sim = await startRuntime();
  agent = await startAgent({ endpoint, manifestDir: dir, workers: 2, extraArgs: ['--pleg-relist-threshold', '3s', '--runtime-request-timeout', '2s'] });
});

after(async () => {
  await agent?.kill();
  await sim?.stop(2_000);
  fs.rmSync(root, { recursive: true, force: true });
});

test('healthy while the runtime answers', async () => {
  const a = agent!;
  await pollUntil(async () => ((await runningInRuntime()) === PODS ? true : undefined), { what: `${PODS} pods running`, timeoutMs: 60_000, intervalMs: 250 });
  assert.deepEqual(await a.get('/healthz'), { status: 200, body: 'ok' });
  assert.deepEqual(await a.get('/healthz/pleg'), { status: 200, body: 'ok' });
  const verbose = await a.get('/healthz?verbose');
  assert.equal(verbose.status, 200);
  assert.match(verbose.body, /^\[\+\]pleg ok$/m);
});

test('runtime stopped: /healthz and /healthz/pleg fail with the PLEG reason and the threshold; the agent keeps running', async (t) => {
  const a = agent!;
  await sim!.stop(5_000);
  const failed = await pollUntil(async () => {
    const r = await a.get('/healthz');
    return r.status === 500 ? r : undefined;
  }, { what: '/healthz to fail after the runtime stopped', timeoutMs: 60_000, intervalMs: 250 });
  t.diagnostic(`/healthz after the runtime stopped: ${JSON.stringify(failed.body)}`);
  assert.match(failed.body, /^\[-\]pleg failed: pleg was last seen active (\d+m)?[\d.]+s ago; threshold is 3s$/m);
  assert.match(failed.body, /^\[\+\]ping ok$/m);
  assert.match(failed.body, /^\[\+\]syncloop ok$/m);
  assert.match(failed.body, /healthz check failed\n$/);

  const pleg = await a.get('/healthz/pleg');
  assert.equal(pleg.status, 500);
  assert.match(pleg.body, /^internal server error: pleg was last seen active (\d+m)?[\d.]+s ago; threshold is 3s\n$/);
  // The other checks are unaffected and the process is alive, still serving.
  assert.deepEqual(await a.get('/healthz/syncloop'), { status: 200, body: 'ok' });
  assert.equal((await a.get('/metrics')).status, 200);
  assert.doesNotThrow(() => process.kill(a.pid, 0), 'the agent process is alive');
});

test('a runtime on the same socket again: /healthz recovers to ok and the pods are re-created', async (t) => {
  const a = agent!;
  sim = await startRuntime();
  await pollUntil(async () => {
    const r = await a.get('/healthz');
    return r.status === 200 && r.body === 'ok' ? true : undefined;
  }, { what: '/healthz ok again', timeoutMs: 60_000, intervalMs: 250 });
  assert.deepEqual(await a.get('/healthz/pleg'), { status: 200, body: 'ok' });
  // The new runtime started empty; the agent brings every pod back from the PLEG's next relists
  // (objects gone → events / PodSync), with the CRI channels reconnecting within the kubelet's
  // 3 s backoff cap. 15 s is far below the periodic resync (--sync-frequency 1m, jittered up to
  // 1.5×): a pod left to the resync fails this test.
  let running = 0;
  const t0 = Date.now();
  await pollUntil(async () => ((running = await runningInRuntime()) === PODS ? true : undefined), { what: `${PODS} pods re-created in the new runtime`, timeoutMs: 15_000, intervalMs: 250 })
    .catch((err: unknown) => {
      // What the agent was doing says why (a stuck backoff, a PLEG that never noticed, ...).
      throw new Error(`${err instanceof Error ? err.message : String(err)}; ${running}/${PODS} running; agent log tail:\n${a.logs.slice(-25).join('\n')}`);
    });
  t.diagnostic(`pods re-created ${Date.now() - t0} ms after /healthz recovered`);
  assert.doesNotThrow(() => process.kill(a.pid, 0));
});
