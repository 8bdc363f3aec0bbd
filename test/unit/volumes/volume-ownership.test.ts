/**
 * fsGroup ownership of emptyDir and payload volumes (volume-ownership.ts, as the plugins call it).
 * Needs root (lchown to another group), as the agent does; as non-root these fail loudly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { EmptyDirPlugin } from '../../../workers/volumes/plugin-empty-dir.js';
import { PayloadVolumePlugin } from '../../../workers/volumes/plugin-payload.js';
import type { TmpfsMounter } from '../../../workers/volumes/tmpfs-mounter.js';
import { fsGroupOf } from '../../../workers/volumes/volume-ownership.js';

const noTmpfs: TmpfsMounter = { isMountPoint: async () => false, mount: async () => undefined, unmount: async () => undefined } as unknown as TmpfsMounter;

function pod(fsGroup: number | undefined, volumes: V1Volume[]): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u1', labels: { app: 'x' } },
    spec: { ...(fsGroup !== undefined ? { securityContext: { fsGroup } } : {}), containers: [{ name: 'c', image: 'busybox' }], volumes },
  };
}

test('fsGroupOf reads only a valid gid', () => {
  assert.equal(fsGroupOf(pod(2000, [])), 2000);
  assert.equal(fsGroupOf(pod(undefined, [])), undefined);
  assert.equal(fsGroupOf({ spec: { securityContext: { fsGroup: -1 } } }), undefined);
});

test('emptyDir with fsGroup: group fsGroup, rwx + setgid for the group (the kubelet: 02777)', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fsgroup-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const plugin = new EmptyDirPlugin(noTmpfs, 1 << 30);
  const dir = path.join(root, 'data');
  const p = pod(2000, [{ name: 'data', emptyDir: {} }]);
  const r = await plugin.setUp({ pod: p, volume: p.spec!.volumes![0]!, dir, objects: undefined, previous: undefined });
  assert.ok(r.ok);
  const st = fs.statSync(dir);
  assert.equal(st.gid, 2000);
  assert.equal(st.mode & 0o7777, 0o2777);
  const plainDir = path.join(root, 'plain');
  const q = pod(undefined, [{ name: 'plain', emptyDir: {} }]);
  assert.ok((await plugin.setUp({ pod: q, volume: q.spec!.volumes![0]!, dir: plainDir, objects: undefined, previous: undefined })).ok);
  assert.equal(fs.statSync(plainDir).mode & 0o7777, 0o777, 'no fsGroup: untouched');
});

test('downwardAPI with fsGroup: every file and directory in group fsGroup, files r for the group, links untouched', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fsgroup-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const plugin = new PayloadVolumePlugin('downwardAPI', { mounter: noTmpfs, clock: new FakeClock(1_700_000_000_000), field: { nodeName: 'n', hostIP: '10.0.0.1', podIPs: [] } });
  const dir = path.join(root, 'info');
  const p = pod(3000, [{ name: 'info', downwardAPI: { defaultMode: 0o600, items: [{ path: 'sub/name', fieldRef: { fieldPath: 'metadata.name' } }] } }]);
  const r = await plugin.setUp({ pod: p, volume: p.spec!.volumes![0]!, dir, objects: undefined, previous: undefined });
  assert.ok(r.ok, r.ok ? '' : r.message);
  const file = fs.realpathSync(path.join(dir, 'sub', 'name'));
  assert.equal(fs.readFileSync(file, 'utf8'), 'p');
  assert.equal(fs.statSync(file).gid, 3000);
  assert.equal(fs.statSync(file).mode & 0o7777, 0o640, '0600 | 0440');
  assert.equal(fs.statSync(dir).gid, 3000);
  assert.equal(fs.statSync(dir).mode & 0o2000, 0o2000, 'directories are setgid');
  assert.equal(fs.lstatSync(path.join(dir, '..data')).gid, 3000, 'the ..data link itself is chowned');
});
