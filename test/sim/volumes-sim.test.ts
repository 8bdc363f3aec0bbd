/**
 * Volumes end to end on the simulated runtime (volume-sim-harness.ts). What a user would check with
 * kubectl exec is checked with ExecSync `cat` (the simulator reads the mounted host file).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { SyncPodOutcome } from '../../workers/pod-sync.js';
import { relist } from './cri-relist.js';
import { startVolumeSim, volumePod } from './volume-sim-harness.js';

const phases = (o: SyncPodOutcome): string => [o.apiStatus.phase, ...(o.apiStatus.containerStatuses ?? []).map((c) => `${c.name}=${c.state?.running ? 'running' : `waiting:${c.state?.waiting?.reason ?? ''}`}`)].join(' ');

test('sim volumes: emptyDir shared by two containers, hostPath DirectoryOrCreate, subPath and subPathExpr; teardown removes the pod dir', async (t) => {
  const h = await startVolumeSim();
  t.after(() => h.close());
  const hostDir = path.join(h.root, '..', 'host-data');
  const p = volumePod('shared', {
    volumes: [{ name: 'scratch', emptyDir: {} }, { name: 'host', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } }],
    containers: [
      { name: 'writer', image: 'busybox:1.36', command: ['sleep', '1000'], volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }, { name: 'host', mountPath: '/host', readOnly: true }] },
      {
        name: 'reader', image: 'busybox:1.36', command: ['sleep', '1000'], env: [{ name: 'SUB', value: 'per-pod' }],
        volumeMounts: [{ name: 'scratch', mountPath: '/in', subPath: 'dir' }, { name: 'scratch', mountPath: '/expr', subPathExpr: '$(SUB)' }],
      },
    ],
  });
  const out = await h.sync(p);
  assert.equal(out.error, undefined);
  assert.equal(phases(await h.sync(p)), 'Running reader=running writer=running');

  const vol = path.join(h.root, 'pods', 'uid-shared', 'volumes', 'kubernetes.io~empty-dir', 'scratch');
  assert.equal(fs.statSync(vol).mode & 0o777, 0o777, 'emptyDir is 0777 as the kubelet leaves it');
  assert.ok(fs.statSync(path.join(vol, 'dir')).isDirectory(), 'the subPath directory was created');
  assert.ok(fs.statSync(path.join(vol, 'per-pod')).isDirectory(), 'the subPathExpr directory was created');
  assert.ok(fs.statSync(hostDir).isDirectory(), 'DirectoryOrCreate created the host path');

  // What one container writes into the shared emptyDir, the other reads (through its subPath mount).
  fs.writeFileSync(path.join(vol, 'dir', 'greeting'), 'hello from the emptyDir\n');
  assert.deepEqual(await h.exec(p, 'reader', ['cat', '/in/greeting']), { stdout: 'hello from the emptyDir\n', stderr: '', exitCode: 0 });
  assert.deepEqual(await h.exec(p, 'writer', ['/bin/busybox', 'cat', '/scratch/dir/greeting']), { stdout: 'hello from the emptyDir\n', stderr: '', exitCode: 0 });
  assert.equal((await h.exec(p, 'writer', ['cat', '/nope'])).stderr, "cat: can't open '/nope': No such file or directory\n");

  const st = await relist(h.client, 'uid-shared');
  const writer = st.containers.find((c) => c.name === 'writer')!;
  const mounts = (await h.client.containerStatus(writer.id)).status!.mounts.map((m) => `${m.containerPath}<-${path.relative(h.root, m.hostPath)}${m.readonly ? ':ro' : ''}`);
  assert.deepEqual(mounts, ['/scratch<-pods/uid-shared/volumes/kubernetes.io~empty-dir/scratch', `/host<-${path.relative(h.root, hostDir)}:ro`]);

  // Stop everything (the runtime removes containers at cleanup), then the volumes go.
  const res = await h.cleanup(p);
  assert.deepEqual(res, {});
  assert.equal(fs.existsSync(path.join(h.root, 'pods', 'uid-shared')), false, 'the pod directory is gone');
  assert.ok(fs.existsSync(hostDir), 'a hostPath is never removed');
});

test('sim volumes: an unsupported volume type keeps the pod waiting with FailedMount naming the type; nothing is created', async (t) => {
  const h = await startVolumeSim();
  t.after(() => h.close());
  const p = volumePod('claim', {
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }, { name: 'ok', emptyDir: {} }],
    containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
  });
  const out = await h.sync(p);
  assert.equal(out.error?.code, 'ERR_FAILED_MOUNT');
  assert.equal(out.error?.message, 'unmounted volumes=[data]: MountVolume.SetUp failed for volume "data" : volume type persistentVolumeClaim is not supported by shardlet');
  assert.equal(phases(out), 'Pending app=waiting:ContainerCreating');
  assert.equal(out.requeueAfterMs, 2_000);
  const st = await relist(h.client, 'uid-claim');
  assert.equal(st.sandboxes.length + st.containers.length, 0, 'no sandbox, no container');
});

test('sim volumes: hostPath type checks fail with the kubelet messages', async (t) => {
  const h = await startVolumeSim();
  t.after(() => h.close());
  const file = path.join(h.root, '..', 'a-file');
  fs.writeFileSync(file, 'x');
  const cases: [string, string, string][] = [
    [path.join(h.root, '..', 'missing'), 'Directory', 'is not a directory'],
    [file, 'Directory', 'is not a directory'],
    [path.join(h.root, '..', 'missing'), 'File', 'is not a file'],
    [file, 'Socket', 'is not a socket file'],
    [file, 'CharDevice', 'is not a character device'],
    [file, 'BlockDevice', 'is not a block device'],
    [file, 'Bogus', 'Bogus is an invalid volume type'],
  ];
  for (const [i, [p0, type, want]] of cases.entries()) {
    const p = volumePod(`hp${i}`, { volumes: [{ name: 'h', hostPath: { path: p0, type } }], containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1'] }] });
    const out = await h.sync(p);
    assert.equal(out.error?.code, 'ERR_FAILED_MOUNT', `${type} on ${p0}`);
    assert.ok(out.error?.message.endsWith(type === 'Bogus' ? want : `hostPath type check failed: ${p0} ${want}`), out.error?.message);
  }
  const created = path.join(h.root, '..', 'new-file');
  const ok = volumePod('fc', { volumes: [{ name: 'h', hostPath: { path: created, type: 'FileOrCreate' } }], containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '100'], volumeMounts: [{ name: 'h', mountPath: '/f' }] }] });
  assert.equal((await h.sync(ok)).error, undefined);
  assert.ok(fs.statSync(created).isFile(), 'FileOrCreate created an empty file');
});

test('sim volumes: a subPath through a symlink out of the volume is a CreateContainerConfigError', async (t) => {
  const h = await startVolumeSim();
  t.after(() => h.close());
  const p = volumePod('escape', {
    volumes: [{ name: 'scratch', emptyDir: {} }],
    containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000'], volumeMounts: [{ name: 'scratch', mountPath: '/x', subPath: 'link/etc' }] }],
  });
  // The first sync sets the volume up; a container of the pod then plants a symlink to / in it.
  const vol = path.join(h.root, 'pods', 'uid-escape', 'volumes', 'kubernetes.io~empty-dir', 'scratch');
  fs.mkdirSync(vol, { recursive: true });
  fs.symlinkSync('/', path.join(vol, 'link'));
  const out = await h.sync(p);
  assert.equal(out.error?.code, 'ERR_CREATE_CONTAINER_CONFIG');
  assert.match(out.error?.message ?? '', /resolves outside the volume/);
  assert.equal(phases(out), 'Pending app=waiting:CreateContainerConfigError');
});

test('sim runtime: a missing bind source is created at CreateContainer (as containerd does); one removed before StartContainer fails with runc\'s error', async (t) => {
  const h = await startVolumeSim();
  t.after(() => h.close());
  const sandboxConfig = { metadata: { name: 'm', uid: 'uid-m', namespace: 'default', attempt: 0 }, logDirectory: '' };
  const sb = await h.client.runPodSandbox({ config: sandboxConfig });
  const src = path.join(h.root, '..', 'made-by-runtime', 'dir');
  const create = (name: string) => h.client.createContainer({
    podSandboxId: sb, sandboxConfig,
    config: { metadata: { name, attempt: 0 }, image: { image: 'busybox:1.36' }, command: ['sleep', '10'], mounts: [{ containerPath: '/data', hostPath: src }] },
  });
  const first = await create('c1');
  assert.ok(fs.statSync(src).isDirectory(), 'containerd creates the missing source directory');
  await h.client.startContainer(first);
  const second = await create('c2');
  fs.rmSync(path.join(h.root, '..', 'made-by-runtime'), { recursive: true });
  await assert.rejects(h.client.startContainer(second), new RegExp(`error mounting "${src}" to rootfs at "/data": stat ${src}: no such file or directory`));
});
