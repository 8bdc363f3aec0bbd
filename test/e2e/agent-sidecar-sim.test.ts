/**
 * Sidecar containers on the simulated runtime (a separate process, as in production), issue 30:
 * start order gated by the startup probe, sidecar readiness in pod Ready, a sidecar restarted
 * under restartPolicy Never, Job completion while the sidecar runs, and termination order
 * (sidecar-scenario.ts). Static pods: the v1.20 API server cannot carry a sidecar.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { startAgent, type AgentProcess } from './agent-harness.js';
import { crashRestartUnderNever, jobCompletion, startOrderAndReadiness, TERM_GRACE_SECONDS, terminationOrder, writeSidecarPods } from './sidecar-scenario.js';

const IMAGE = 'docker.io/local/busybox:1';
const NODE = 'node-e2e';
let sim: SimRuntimeInstance | undefined;
let agent: AgentProcess | undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-sidecar-'));

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', IMAGE] });
});

after(async () => {
  await agent?.kill();
  await sim?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('sidecars on the simulated runtime: start order, readiness, restart under Never, Job completion, termination order', { timeout: 240_000 }, async (t) => {
  assert.ok(sim);
  writeSidecarPods(dir, IMAGE);
  agent = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, nodeName: NODE });
  const { gapMs } = await startOrderAndReadiness(agent, NODE, 60_000);
  t.diagnostic(`main started ${gapMs} ms after the sidecar (startup probe initialDelaySeconds 3)`);
  await crashRestartUnderNever(agent, NODE, 90_000);
  await jobCompletion(agent, sim.endpoint, NODE, 60_000);
  const { stoppedAt, tookMs } = await terminationOrder(agent, sim.endpoint, dir, NODE, 60_000);
  t.diagnostic(`termination: stopped at ${JSON.stringify(stoppedAt)} ms after the first; whole kill ${tookMs} ms after the manifest went`);
  // File check period (2 s) + grace + slack for a loaded machine.
  assert.ok(tookMs <= 2000 + TERM_GRACE_SECONDS * 1000 + 6000, `the kill took ${tookMs} ms`);
});
