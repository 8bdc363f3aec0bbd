/**
 * Container, sandbox and image GC against the simulated runtime (real gRPC over a unix socket):
 * dead instances beyond the per-container and global caps and everything of a gone pod are
 * removed with their log files, the newest dead instance and the live pod's sandbox stay; unused
 * images go from the high threshold down to the low one, least recently used first, while the
 * image in use and the sandbox image stay. Disk usage is the simulated disk's, set by the test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../../src/shared/logging/logger.js';
import type { PodSandboxConfig } from '../../src/shared/cri/cri-types.js';
import { ContainerGc } from '../../src/main/gc/container-gc.js';
import { imageFsStats } from '../../src/main/gc/image-fs-stats.js';
import { ImageGcManager } from '../../src/main/gc/image-gc-manager.js';
import { simCapacitySource } from '../harness/sim-capacity.js';
import { startHarness, type Harness } from '../unit/simruntime/sim-harness.js';

/** A pod as the agent creates it: kubelet labels, its log directory under `logs`. */
async function pod(h: Harness, logs: string, name: string): Promise<{ uid: string; sandboxId: string; sandbox: PodSandboxConfig; dir: string }> {
  const uid = `uid-${name}`;
  const dir = path.join(logs, `default_${name}_${uid}`);
  fs.mkdirSync(dir, { recursive: true });
  const sandbox: PodSandboxConfig = {
    metadata: { name, namespace: 'default', uid, attempt: 0 },
    labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': uid },
    annotations: {},
    logDirectory: dir,
  };
  const sandboxId = await h.client.runPodSandbox({ config: sandbox });
  return { uid, sandboxId, sandbox, dir };
}

/** One instance of container `name` (restart `n`), run then killed: a dead instance with a log file. */
async function deadInstance(h: Harness, p: Awaited<ReturnType<typeof pod>>, name: string, n: number, image = 'busybox'): Promise<string> {
  const id = await h.client.createContainer({
    podSandboxId: p.sandboxId,
    sandboxConfig: p.sandbox,
    config: {
      metadata: { name, attempt: n },
      image: { image },
      command: ['sleep', '3600'],
      logPath: `${name}/${n}.log`,
      labels: { 'io.kubernetes.pod.name': p.sandbox.metadata!.name, 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': p.uid, 'io.kubernetes.container.name': name },
      annotations: { 'io.kubernetes.container.restartCount': String(n) },
    },
  });
  await h.client.startContainer(id);
  await h.client.stopContainer(id, 0);
  h.clock.step(1000); // distinct creation times
  return id;
}

test('container GC on the sim: per-container cap, global cap, gone pods, sandboxes, log files', async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  const logs = path.join(h.dir, 'pods');
  const live = await pod(h, logs, 'live');
  const gone = await pod(h, logs, 'gone');
  const app = [];
  for (let n = 0; n < 4; n++) app.push(await deadInstance(h, live, 'app', n));
  const side = [await deadInstance(h, live, 'side', 0), await deadInstance(h, live, 'side', 1)];
  await deadInstance(h, gone, 'web', 0);
  await h.client.stopPodSandbox(gone.sandboxId);
  const appLog = (n: number): string => path.join(live.dir, 'app', `${n}.log`);
  for (let n = 0; n < 4; n++) assert.ok(fs.existsSync(appLog(n)), 'the sim wrote each instance\'s log');

  const gc = new ContainerGc({
    runtime: h.client, clock: h.clock, logger: silentLogger, podLogsDir: logs,
    policy: { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 },
    sourcesReady: () => true, isPodGone: (uid) => uid === gone.uid,
  });
  const r = await gc.runOnce();
  assert.deepEqual(r, { ok: true, containersRemoved: 5, sandboxesRemoved: 1, failed: 0, deferred: 0 });
  const left = await h.client.listContainers();
  assert.deepEqual(left.map((c) => c.id).sort(), [app[3]!, side[1]!].sort(), 'the newest dead instance of each container stays');
  assert.deepEqual((await h.client.listPodSandbox()).map((s) => s.id), [live.sandboxId], 'the gone pod\'s sandbox is removed; the live pod\'s stays');
  for (let n = 0; n < 3; n++) assert.ok(!fs.existsSync(appLog(n)), `app/${n}.log removed with its container`);
  assert.ok(fs.existsSync(appLog(3)), 'the kept instance keeps its log (kubectl logs --previous)');

  // The global cap: at most one dead container on the node (two units → one each, then the oldest goes).
  const capped = new ContainerGc({
    runtime: h.client, clock: h.clock, logger: silentLogger, podLogsDir: logs,
    policy: { minAgeMs: 0, maxPerPodContainer: -1, maxContainers: 1 },
    sourcesReady: () => true, isPodGone: () => false,
  });
  const r2 = await capped.runOnce();
  assert.equal(r2.containersRemoved, 1);
  assert.deepEqual((await h.client.listContainers()).map((c) => c.id), [side[1]!], 'the older of the two (app/3) went');

  // The TTL: a dead container younger than the minimum age stays even beyond the cap.
  const fresh = await deadInstance(h, live, 'side', 2);
  const ttl = new ContainerGc({
    runtime: h.client, clock: h.clock, logger: silentLogger, podLogsDir: logs,
    policy: { minAgeMs: 60_000, maxPerPodContainer: 0, maxContainers: -1 },
    sourcesReady: () => true, isPodGone: () => false,
  });
  const r3 = await ttl.runOnce();
  assert.equal(r3.containersRemoved, 0, 'both dead side instances are younger than a minute');
  assert.ok((await h.client.listContainers()).some((c) => c.id === fresh));
  h.clock.step(60_000);
  const r4 = await ttl.runOnce();
  assert.equal(r4.containersRemoved, 2);
  assert.deepEqual(await h.client.listContainers(), []);
});

test('image GC on the sim: from the high threshold down to the low one; the used and the sandbox image stay', async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  for (const ref of ['docker.io/library/img-a:1', 'docker.io/library/img-b:1', 'docker.io/library/img-c:1', 'docker.io/library/img-d:1']) await h.client.pullImage({ image: { image: ref, annotations: {} } });
  const live = await pod(h, path.join(h.dir, 'pods'), 'live');
  await deadInstance(h, live, 'app', 0, 'busybox'); // busybox is in use (by a dead container: still in use)
  const images = await h.client.listImages();
  const size = new Map(images.map((i) => [i.repoTags[0]!, Number(i.size)]));
  const used = h.rt.imageFs.figures();
  const usedTotal = used.imageBytes + used.containerBytes;
  // A disk on which what is there is 92% full.
  const capacity = Math.ceil(usedTotal / 0.92);
  h.rt.imageFs.set({ capacityBytes: capacity });
  const before = await imageFsStats(h.client, simCapacitySource(h.rt), h.clock);
  assert.equal(before.imageFs.usedBytes, used.imageBytes);
  assert.equal(before.containerFs.usedBytes, used.containerBytes);
  assert.equal(before.imageFs.capacityBytes, capacity);

  const gc = new ImageGcManager({
    runtime: h.client, capacity: simCapacitySource(h.rt), clock: h.clock, logger: silentLogger,
    policy: { highThresholdPercent: 85, lowThresholdPercent: 60, minAgeMs: 120_000 },
    sandboxImage: 'registry.k8s.io/pause:3.9',
  });
  const r = await gc.runOnce();
  assert.equal(r.ok, true, r.error);
  assert.equal(r.usagePercent, 100 - Math.trunc(((capacity - usedTotal) * 100) / capacity));
  // Every candidate was never used and is first seen "long ago" (initial detection): listing order.
  const candidates = ['docker.io/library/nginx:1.25', 'docker.io/library/img-a:1', 'docker.io/library/img-b:1', 'docker.io/library/img-c:1', 'docker.io/library/img-d:1'];
  const expected: string[] = [];
  let freed = 0;
  for (const ref of candidates) {
    if (freed >= r.amountToFree!) break;
    expected.push(ref);
    freed += size.get(ref)!;
  }
  assert.ok(expected.length > 0 && r.amountToFree! > 0);
  const byId = new Map(images.map((i) => [i.id, i.repoTags[0]!]));
  assert.deepEqual(r.removed.map((id) => byId.get(id)), expected);
  const after = h.rt.imageFs.figures();
  assert.ok(100 - Math.trunc((after.availableBytes * 100) / capacity) <= 60, 'usage is at or below the low threshold');
  const remaining = new Set((await h.client.listImages()).map((i) => i.repoTags[0]));
  assert.ok(remaining.has('docker.io/library/busybox:latest'), 'the image in use stays');
  assert.ok(remaining.has('registry.k8s.io/pause:3.9'), 'the sandbox image stays');
});
