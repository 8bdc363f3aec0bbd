/**
 * The embedded simulated runtime across an agent crash: an agent on `--container-runtime-endpoint
 * embedded` is SIGKILLed, which leaves its sim-runtime child running; the next agent on the same
 * --root-dir must reuse that runtime (one process on the socket, same sandboxes, no restart), not
 * start a second one on the same socket and state file; a graceful stop of the adopting agent
 * then stops the adopted runtime too.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findProcesses, isAlive } from '../harness/host-processes.js';
import { isRunning, pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-embedded-'));
const manifests = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-manifests-'));
const socket = path.join(root, 'sim-runtime.sock');
const agents: AgentProcess[] = [];

after(async () => {
  for (const a of agents) await a.kill();
  // Whatever sim-runtime still serves this test's socket (a failed assertion left it) is ours to end.
  for (const p of findProcesses('node', socket)) if (isAlive(p.pid)) process.kill(p.pid, 'SIGKILL');
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(manifests, { recursive: true, force: true });
});

function simsOnSocket(): number[] {
  return findProcesses('node', socket).filter((p) => p.argv.includes('sim-runtime')).map((p) => p.pid);
}

async function allRunning(a: AgentProcess, n: number): Promise<void> {
  await pollUntil(async () => {
    const pods = await a.pods();
    return pods.length === n && pods.every(isRunning) ? true : undefined;
  }, { what: `${n} pods running`, timeoutMs: 60_000, intervalMs: 200 });
}

test('a restarted agent reuses the embedded runtime its SIGKILLed predecessor left running', { timeout: 180_000 }, async () => {
  for (let i = 0; i < 3; i++) writePodManifest(manifests, `emb-${i}`);
  const first = await startAgent({ endpoint: 'embedded', manifestDir: manifests, rootDir: root, workers: 1 });
  agents.push(first);
  await allRunning(first, 3);
  const sims = simsOnSocket();
  assert.equal(sims.length, 1, 'one embedded runtime');
  const simPid = sims[0]!;
  const before = await runtimeView(`unix://${socket}`);

  await first.kill();
  assert.ok(isAlive(simPid), 'SIGKILL of the agent leaves its embedded runtime running');

  const second = await startAgent({ endpoint: 'embedded', manifestDir: manifests, rootDir: root, workers: 1 });
  agents.push(second);
  await allRunning(second, 3);
  assert.ok(second.logs.some((l) => l.includes('reusing the embedded simulated runtime')), 'the second agent says it reused the runtime');
  assert.deepEqual(simsOnSocket(), [simPid], 'still exactly one runtime on the socket: the first one');
  const after = await runtimeView(`unix://${socket}`);
  assert.equal(after.size, 3);
  for (const [uid, v] of after) {
    assert.deepEqual(v.sandboxes.map((s) => s.id), before.get(uid)?.sandboxes.map((s) => s.id), `pod ${uid}: same sandbox, none added`);
    assert.deepEqual(v.containers.map((c) => [c.id, c.attempt]), before.get(uid)?.containers.map((c) => [c.id, c.attempt]), `pod ${uid}: same container, no restart`);
  }

  assert.equal(await second.stop(), 0);
  await pollUntil(() => (isAlive(simPid) ? undefined : true), { what: 'the adopted runtime to stop with the agent', timeoutMs: 15_000 });
});
