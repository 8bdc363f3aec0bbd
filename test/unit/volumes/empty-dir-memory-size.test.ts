/**
 * Issue 27 item 7: a memory-medium emptyDir's tmpfs is sized as the kubelet's
 * calculateEmptyDirMemorySize does: node allocatable memory, lowered to the pod's memory limit
 * (when every container declares one), lowered to the volume's sizeLimit — never `8Ei` as is.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Container, V1Pod, V1Volume } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { TmpfsMounter } from '../../../workers/volumes/tmpfs-mounter.js';
import { defaultVolumePlugins } from '../../../workers/volumes/volume-plugins.js';

const GI = 1024 ** 3;
const MI = 1024 ** 2;

class SizeRecorder implements TmpfsMounter {
  sizes: Array<number | undefined> = [];
  async isMountPoint(): Promise<boolean> { return false; }
  async mount(_dir: string, sizeBytes?: number): Promise<void> { this.sizes.push(sizeBytes); }
  async unmount(): Promise<void> {}
  async mountsUnder(): Promise<string[]> { return []; }
}

const ctr = (name: string, memoryLimit?: string): V1Container => ({ name, image: 'i', ...(memoryLimit ? { resources: { limits: { memory: memoryLimit } } } : {}) });

async function tmpfsSize(volume: V1Volume, pod: Partial<V1Pod['spec']> & { containers: V1Container[] }, allocatable: number): Promise<number | undefined> {
  const mounter = new SizeRecorder();
  const plugins = defaultVolumePlugins(mounter, { clock: new FakeClock(), field: { nodeName: 'n', hostIP: '10.0.0.1', podIPs: [] }, nodeAllocatableMemoryBytes: allocatable });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'emptydir-size-'));
  try {
    const r = await plugins.get('emptyDir')!.setUp({ pod: { metadata: { name: 'p', uid: 'u' }, spec: pod }, volume, dir: path.join(dir, 'v'), objects: undefined, previous: undefined });
    assert.ok(r.ok, r.ok ? '' : r.message);
    assert.equal(mounter.sizes.length, 1);
    return mounter.sizes[0];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const mem = (sizeLimit?: string): V1Volume => ({ name: 'm', emptyDir: { medium: 'Memory', ...(sizeLimit !== undefined ? { sizeLimit } : {}) } });

test('7: sizeLimit 8Ei on a pod without memory limits is capped at node allocatable memory', async () => {
  assert.equal(await tmpfsSize(mem('8Ei'), { containers: [ctr('a')] }, 4 * GI), 4 * GI);
});

test('7: the pod memory limit caps it when every container declares one (sum of app containers, max with init, plus overhead)', async () => {
  assert.equal(await tmpfsSize(mem('8Ei'), { containers: [ctr('a', '256Mi'), ctr('b', '256Mi')] }, 4 * GI), 512 * MI);
  assert.equal(await tmpfsSize(mem('8Ei'), { containers: [ctr('a', '256Mi')], initContainers: [ctr('i', '1Gi')] }, 4 * GI), GI);
  assert.equal(await tmpfsSize(mem('8Ei'), { containers: [ctr('a', '256Mi')], overhead: { memory: '64Mi' } }, 4 * GI), 320 * MI);
  // A container without a memory limit: the pod has no memory limit (ResourceConfigForPod).
  assert.equal(await tmpfsSize(mem('8Ei'), { containers: [ctr('a', '256Mi'), ctr('b')] }, 4 * GI), 4 * GI);
});

test('7: a smaller sizeLimit wins; no sizeLimit still gets a bound (node allocatable or the pod limit)', async () => {
  assert.equal(await tmpfsSize(mem('64Mi'), { containers: [ctr('a', '256Mi')] }, 4 * GI), 64 * MI);
  assert.equal(await tmpfsSize(mem(), { containers: [ctr('a')] }, 4 * GI), 4 * GI);
  assert.equal(await tmpfsSize(mem(), { containers: [ctr('a', '128Mi')] }, 4 * GI), 128 * MI);
  assert.equal(await tmpfsSize(mem('0'), { containers: [ctr('a')] }, 4 * GI), 4 * GI);
});
