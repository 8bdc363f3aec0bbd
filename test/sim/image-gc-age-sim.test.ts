/**
 * Image GC by age against the simulated runtime (real gRPC over a unix socket), through the
 * agent's own GC wiring (agent-gc.ts) and its flags: with --image-maximum-gc-age 10m, images no
 * container uses are removed once unused for more than 10 minutes (and only once 10 minutes have
 * passed since GC began), at a usage far below the high threshold; the image a container uses
 * and the sandbox image stay; an image whose last container went away is removed 10 minutes
 * after that. Time is the simulated runtime's fake clock, shared with the agent's GC: the image
 * GC's 5-minute period is stepped, never slept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentConfig, type AgentConfig } from '../../src/main/agent/agent-config.js';
import { createAgentGc } from '../../src/main/agent/agent-gc.js';
import { createMetricsSystem } from '../../src/main/metrics/main-metrics.js';
import { silentLogger } from '../../src/shared/logging/logger.js';
import { simCapacitySource } from '../harness/sim-capacity.js';
import { runPod, startHarness } from '../unit/simruntime/sim-harness.js';

const MIN = 60_000;

test('--image-maximum-gc-age on the sim: unused images go after the maximum age, used and sandbox images stay', async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  for (const image of ['docker.io/library/img-a:1', 'docker.io/library/img-b:1']) await h.client.pullImage({ image: { image, annotations: {} } });
  const { containerId } = await runPod(h, ['sleep', '3600'], { image: { image: 'docker.io/library/img-b:1', annotations: {} } });
  const config = parseAgentConfig(['--pod-manifest-path', '/m', '--node-name', 'n1', '--image-maximum-gc-age', '10m']) as AgentConfig;
  const metrics = createMetricsSystem({ processMetrics: false, eventLoopDelay: false });
  const gc = createAgentGc({ config, clock: h.clock, logger: silentLogger, runtime: h.client, metrics, recorder: undefined, sourcesReady: () => true, isPodGone: () => false, capacity: simCapacitySource(h.rt) });
  t.after(async () => {
    await gc.close();
    metrics.close();
  });
  const tags = async (): Promise<string[]> => (await h.client.listImages()).flatMap((i) => i.repoTags).sort();
  const before = await tags();
  assert.ok(before.includes('docker.io/library/nginx:1.25'), 'preloaded');

  gc.images.start();
  const pass = async () => {
    const p = await gc.images.running;
    assert.ok(p, 'a pass ran');
    assert.equal(p.ok, true, p.error);
    return p;
  };
  assert.deepEqual((await pass()).removedByAge, [], 'GC just began');
  h.clock.step(5 * MIN);
  assert.deepEqual((await pass()).removedByAge, []);
  // The container goes away at T+5m: img-b was last in use at the pass just before.
  await h.client.stopContainer(containerId, 0);
  await h.client.removeContainer(containerId);
  h.clock.step(5 * MIN);
  assert.deepEqual((await pass()).removedByAge, [], 'exactly the maximum age since GC began: not yet');
  h.clock.step(5 * MIN);
  const p = await pass();
  assert.ok(p.usagePercent! < config.imageGCHighThresholdPercent, `usage ${p.usagePercent}% is below the high threshold: age alone removes`);
  const after = await tags();
  for (const gone of ['docker.io/library/img-a:1', 'docker.io/library/nginx:1.25', 'docker.io/library/busybox:latest']) {
    assert.ok(before.includes(gone), `${gone} was there`);
    assert.ok(!after.includes(gone), `${gone} (never used) removed`);
  }
  assert.ok(after.includes('registry.k8s.io/pause:3.9'), 'the sandbox image stays');
  assert.ok(after.includes('docker.io/library/img-b:1'), 'img-b was used 10 minutes ago (not more): stays');
  h.clock.step(5 * MIN);
  await pass();
  assert.ok(!(await tags()).includes('docker.io/library/img-b:1'), 'img-b unused for 15 minutes: removed');
  const text = await metrics.aggregator.collect();
  assert.match(text, /^kubelet_image_garbage_collected_total\{reason="age"\} 4$/m);
});
