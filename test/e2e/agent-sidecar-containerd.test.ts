/**
 * Sidecar containers on real containerd (private instance from the harness; needs root — as
 * non-root the before hook fails loudly, nothing is skipped), issue 30: start order gated by the
 * startup probe, sidecar readiness in pod Ready, a sidecar restarted under restartPolicy Never,
 * Job completion while the sidecar runs, and termination order (sidecar-scenario.ts). Static
 * pods: the v1.20 API server cannot carry a sidecar.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { startAgent, type AgentProcess } from './agent-harness.js';
import { crashRestartUnderNever, jobCompletion, startOrderAndReadiness, TERM_GRACE_SECONDS, terminationOrder, writeSidecarPods } from './sidecar-scenario.js';

const IMAGE = 'docker.io/local/busybox:1';
const NODE = 'node-e2e';
let ctrd: ContainerdInstance | undefined;
let agent: AgentProcess | undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-ctrd-sidecar-'));

before(async () => {
  ctrd = await startContainerd();
}, { timeout: 120_000 });

after(async () => {
  await agent?.kill();
  await ctrd?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}, { timeout: 120_000 });

test('sidecars on containerd: start order, readiness, restart under Never, Job completion, termination order', { timeout: 360_000 }, async (t) => {
  assert.ok(ctrd);
  writeSidecarPods(dir, IMAGE);
  agent = await startAgent({ endpoint: ctrd.endpoint, manifestDir: dir, nodeName: NODE });
  const { gapMs } = await startOrderAndReadiness(agent, NODE, 120_000);
  t.diagnostic(`main started ${gapMs} ms after the sidecar (startup probe initialDelaySeconds 3)`);
  await crashRestartUnderNever(agent, NODE, 120_000);
  await jobCompletion(agent, ctrd.endpoint, NODE, 120_000);
  const { stoppedAt, tookMs } = await terminationOrder(agent, ctrd.endpoint, dir, NODE, 120_000);
  t.diagnostic(`termination: stopped at ${JSON.stringify(stoppedAt)} ms after the first; whole kill ${tookMs} ms after the manifest went`);
  // File check period (2 s) + grace + slack for containerd on a loaded 2-core machine.
  assert.ok(tookMs <= 2000 + TERM_GRACE_SECONDS * 1000 + 15_000, `the kill took ${tookMs} ms`);
});
