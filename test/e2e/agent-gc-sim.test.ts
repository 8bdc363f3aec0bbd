/**
 * Container and image GC through the agent process on the simulated runtime (a separate
 * process, as in production). Container GC: agent-gc-scenario.ts. Image GC: the sim's images
 * are measured against the disk holding its root (statfs; CRI carries no capacity), so the
 * thresholds are set where any real disk is (high 1%, low 0%): every unused image goes, the one
 * in use and the sandbox image (--pod-infra-container-image) stay. Exact threshold arithmetic on
 * the sim is in test/sim/gc-sim.test.ts (capacity from the simulated disk).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { isRunning, pollUntil, startAgent, writePodManifest } from './agent-harness.js';
import { containerGcScenario, metricValue } from './agent-gc-scenario.js';

const BUSYBOX = 'docker.io/local/busybox:1';
const PAUSE = 'registry.k8s.io/pause:3.9';
let sim: SimRuntimeInstance;

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', BUSYBOX, '--image', PAUSE, '--image', 'docker.io/library/unused-a:1', '--image', 'docker.io/library/unused-b:1'] });
});

after(async () => {
  await sim?.stop();
});

test('container GC on the sim: dead instances beyond the per-container limit go with their logs at the agent\'s first pass', async () => {
  await containerGcScenario({ endpoint: sim.endpoint, image: BUSYBOX });
});

test('image GC on the sim: unused images go, the used one and the sandbox image stay', async () => {
  const manifests = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-gc-img-'));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-gc-img-root-'));
  const cri = new CriClient({ endpoint: sim.endpoint, timeoutMs: 30_000 });
  writePodManifest(manifests, 'img-user', { image: BUSYBOX });
  // First an agent without image GC runs the pod, so busybox is in use when the GC agent starts.
  const first = await startAgent({ endpoint: sim.endpoint, manifestDir: manifests, rootDir: root, extraArgs: ['--image-gc-high-threshold', '100'] });
  let agent = first;
  try {
    await pollUntil(async () => ((await first.pods()).some((p) => p.metadata?.name?.startsWith('img-user') === true && isRunning(p)) ? true : undefined), { what: 'img-user running', timeoutMs: 60_000 });
    assert.equal(await first.stop(), 0);
    agent = await startAgent({
      endpoint: sim.endpoint, manifestDir: manifests, rootDir: root,
      extraArgs: ['--image-gc-high-threshold', '1', '--image-gc-low-threshold', '0', '--pod-infra-container-image', PAUSE],
    });
    await pollUntil(async () => {
      const tags = new Set((await cri.listImages()).flatMap((i) => i.repoTags));
      return !tags.has('docker.io/library/unused-a:1') && !tags.has('docker.io/library/unused-b:1') ? true : undefined;
    }, { what: 'the unused images to be removed', timeoutMs: 30_000 });
    const tags = new Set((await cri.listImages()).flatMap((i) => i.repoTags));
    assert.ok(tags.has(PAUSE), 'the sandbox image stays');
    assert.ok(tags.has(BUSYBOX), 'the image in use stays');
    const a = agent;
    const metrics = await pollUntil(async () => {
      const m = (await a.get('/metrics')).body;
      return metricValue(m, 'kubelet_image_garbage_collected_total', { reason: 'space' }) >= 2 ? m : undefined;
    }, { what: 'the removals counted', timeoutMs: 10_000 });
    assert.ok(metricValue(metrics, 'shardlet_gc_pass_duration_seconds_count', { gc: 'image' }) >= 1);
    // A real disk cannot be freed down to 0% by removing simulated images: the shortfall is reported.
    await pollUntil(() => (agent.logs.some((l) => l.includes('Failed to garbage collect required amount of images')) ? true : undefined), { what: 'the shortfall logged', timeoutMs: 10_000 });
  } finally {
    await agent.kill();
    cri.close();
    fs.rmSync(manifests, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  }
});
