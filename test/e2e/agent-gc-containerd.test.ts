/**
 * Container and image GC through the agent process on a real containerd.
 *
 * Container GC: agent-gc-scenario.ts.
 *
 * Image GC on a real, small image filesystem: containerd's root (content store, snapshots,
 * metadata) is a 48 MiB tmpfs, filled by four 4 MiB filler images (each stored twice: the
 * layer blob and its unpacked snapshot). The agent measures it as it does on any node (CRI
 * ImageFsInfo's mountpoint, statfs), so nothing is faked; the thresholds are computed from
 * the measured usage so the pass must free 1.5 fillers' worth: exactly two fillers go (the
 * kubelet counts the image sizes CRI reports), after which the real usage is at or below the
 * low threshold. busybox (in use by a pod) and containerd's sandbox image (named in its config,
 * not pinned by containerd 1.6, not the agent's --pod-infra-container-image) stay.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { buildFillerImages, type FillerImage } from '../harness/filler-images.js';
import { BUSYBOX_IMAGE, PAUSE_IMAGE } from '../harness/local-images.js';
import { isRunning, pollUntil, startAgent, writePodManifest } from './agent-harness.js';
import { containerGcScenario, metricValue } from './agent-gc-scenario.js';

const MiB = 1024 * 1024;
let ctrd: ContainerdInstance | undefined;
let small: ContainerdInstance | undefined;
let fillers: FillerImage[] = [];
let fillerDir: string;

before(async () => {
  fillerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-fillers-'));
  fillers = buildFillerImages(fillerDir, [0, 1, 2, 3].map((i) => `docker.io/local/filler-${i}:1`), 4 * MiB);
  ctrd = await startContainerd();
  small = await startContainerd({ rootTmpfsBytes: 48 * MiB, extraImageTars: fillers.map((f) => f.tarPath) });
});

after(async () => {
  await Promise.allSettled([ctrd?.stop(), small?.stop()]);
  fs.rmSync(fillerDir, { recursive: true, force: true });
});

function usageOf(mount: string): { cap: number; avail: number; percent: number } {
  const st = fs.statfsSync(mount);
  const cap = st.blocks * st.bsize;
  const avail = st.bavail * st.bsize;
  return { cap, avail, percent: 100 - Math.trunc((avail * 100) / cap) };
}

test('container GC on containerd: dead instances beyond the per-container limit go with their logs at the agent\'s first pass', { timeout: 180_000 }, async () => {
  await containerGcScenario({ endpoint: ctrd!.endpoint, image: BUSYBOX_IMAGE });
});

test('image GC on containerd with a 48 MiB tmpfs root: from the high threshold to the low one; used and sandbox images stay', { timeout: 180_000 }, async (t) => {
  const rt = small!;
  const cri = new CriClient({ endpoint: rt.endpoint, timeoutMs: 60_000 });
  const manifests = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-gc-img-'));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-gc-img-root-'));
  writePodManifest(manifests, 'img-user', { image: BUSYBOX_IMAGE });
  let agent = await startAgent({ endpoint: rt.endpoint, manifestDir: manifests, rootDir: root, extraArgs: ['--image-gc-high-threshold', '100'] });
  try {
    const first = agent;
    await pollUntil(async () => ((await first.pods()).some((p) => p.metadata?.name?.startsWith('img-user') === true && isRunning(p)) ? true : undefined), { what: 'img-user running', timeoutMs: 60_000 });
    assert.equal(await first.stop(), 0);

    const mount = (await cri.imageFsInfo()).imageFilesystems[0]?.fsId?.mountpoint ?? '';
    assert.ok(mount.startsWith(rt.tmpDir), `containerd measures its own root (${mount})`);
    const images = await cri.listImages();
    const fillerIds = new Set(fillers.map((f) => f.id));
    const sizes = images.filter((i) => fillerIds.has(i.id)).map((i) => Number(i.size));
    assert.equal(sizes.length, 4, 'the four fillers are imported');
    const S = Math.max(...sizes);
    const u = usageOf(mount);
    // Free 1.5 fillers' worth (more than one, less than two, whatever the percent rounding adds).
    const low = Math.floor(100 - ((u.avail + 1.5 * S) * 100) / u.cap);
    const high = u.percent - 2;
    t.diagnostic(`image fs ${mount}: ${u.percent}% of ${u.cap} bytes used; filler size ${S}; thresholds high ${high} low ${low}`);
    assert.ok(low >= 0 && high > low && u.cap / 100 < 0.5 * S, 'the tmpfs is filled as planned');

    agent = await startAgent({ endpoint: rt.endpoint, manifestDir: manifests, rootDir: root, extraArgs: ['--image-gc-high-threshold', String(high), '--image-gc-low-threshold', String(low)] });
    const a = agent;
    const metrics = await pollUntil(async () => {
      const m = (await a.get('/metrics')).body;
      return metricValue(m, 'shardlet_gc_pass_duration_seconds_count', { gc: 'image' }) >= 1 ? m : undefined;
    }, { what: 'the first image GC pass', timeoutMs: 60_000 });
    assert.equal(metricValue(metrics, 'shardlet_gc_pass_duration_seconds_count', { gc: 'image', result: 'ok' }), 1, 'the pass freed what it had to');
    assert.equal(metricValue(metrics, 'kubelet_image_garbage_collected_total', { reason: 'space' }), 2);
    const left = new Set((await cri.listImages()).map((i) => i.id));
    assert.equal([...fillerIds].filter((id) => left.has(id)).length, 2, 'exactly two fillers removed');
    assert.ok(left.has(rt.images.busybox.id), 'the image in use stays');
    assert.ok(left.has(rt.images.pause.id), `containerd's sandbox image (${PAUSE_IMAGE}) stays`);
    const after = usageOf(mount);
    t.diagnostic(`after: ${after.percent}%`);
    assert.ok(after.percent <= low, `usage ${after.percent}% is at or below the low threshold ${low}%`);
  } finally {
    await agent.kill();
    cri.close();
    fs.rmSync(manifests, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  }
});
