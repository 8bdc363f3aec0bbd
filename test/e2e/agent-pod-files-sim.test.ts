/**
 * DNS config, the kubelet-managed /etc/hosts and termination messages on the simulated runtime (a separate process, as in production):
 * the shared scenario of pod-files-scenario.ts, read from inside the containers through ExecSync,
 * then the pods removed and their files with them.
 */
import { after, before, test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { startAgent, type AgentProcess } from './agent-harness.js';
import { assertCleanup, assertScenario, dnsFlags, writeScenario } from './pod-files-scenario.js';

let sim: SimRuntimeInstance | undefined;
let agent: AgentProcess | undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-podfiles-'));
const manifests = path.join(dir, 'manifests');
fs.mkdirSync(manifests);

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
}, { timeout: 60000 });

after(async () => {
  await agent?.kill();
  await sim?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}, { timeout: 60000 });

test('resolv.conf and /etc/hosts inside the containers, termination messages in the status, files removed with the pod', { timeout: 240_000 }, async () => {
  writeScenario(manifests, dir);
  agent = await startAgent({ endpoint: sim!.endpoint, manifestDir: manifests, workers: 2, extraArgs: dnsFlags(dir) });
  await assertScenario(agent, sim!.endpoint);
  const uids = (await agent.pods()).map((p) => p.metadata!.uid!);
  await assertCleanup(agent, manifests, uids);
});
