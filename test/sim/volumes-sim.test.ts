/**
 * Volumes end to end on the simulated runtime (real gRPC, FakeClock): the syncer with the real
 * VolumeManager and plugins, as pod-worker-factory.ts wires them. What a user would check with
 * kubectl exec is checked with ExecSync `cat` (the simulator reads the mounted host file).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { CriClient } from '../../src/cri/cri-client.js';
import { silentLogger } from '../../src/logging/logger.js';
import { SimulatedRuntime } from '../../src/simruntime/simulated-runtime.js';
import { KubeRuntimeSyncer } from '../../workers/kuberuntime/kuberuntime-syncer.js';
import type { SyncPodOutcome } from '../../workers/pod-sync.js';
import type { PodApiObjects } from '../../workers/volumes/api-object-snapshot.js';
import type { TmpfsMounter } from '../../workers/volumes/tmpfs-mounter.js';
import { VolumeManager } from '../../workers/volumes/volume-manager.js';
import { defaultVolumePlugins } from '../../workers/volumes/volume-plugins.js';
import { relist } from './cri-relist.js';

/** A tmpfs mounter that records instead of mounting (the real one is exercised on containerd). */
export class RecordingMounter implements TmpfsMounter {
  readonly mounted = new Set<string>();
  readonly calls: string[] = [];
  async isMountPoint(dir: string): Promise<boolean> {
    return this.mounted.has(dir);
  }
  async mount(dir: string, sizeBytes?: number): Promise<void> {
    this.calls.push(`mount ${path.basename(dir)}${sizeBytes ? ` size=${sizeBytes}` : ''}`);
    this.mounted.add(dir);
  }
  async unmount(dir: string): Promise<void> {
    this.calls.push(`umount ${path.basename(dir)}`);
    this.mounted.delete(dir);
  }
  async mountsUnder(dir: string): Promise<string[]> {
    return [...this.mounted].filter((m) => m.startsWith(`${dir}/`));
  }
}

export interface VolumeSim {
  clock: FakeClock;
  client: CriClient;
  syncer: KubeRuntimeSyncer;
  root: string;
  mounter: RecordingMounter;
  objects: Map<string, PodApiObjects>;
  sync(pod: V1Pod): Promise<SyncPodOutcome>;
  cleanup(pod: V1Pod): Promise<{ error?: { code: string; message: string } }>;
  /** ExecSync in the pod's running container `name`. */
  exec(pod: V1Pod, name: string, cmd: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }>;
  close(): Promise<void>;
}

export async function startVolumeSim(): Promise<VolumeSim> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'volumes-sim-'));
  const clock = new FakeClock();
  const sim = await SimulatedRuntime.start({ socketPath: path.join(dir, 'cri.sock'), clock, preloadImages: ['busybox:1.36'] });
  const client = new CriClient({ endpoint: sim.endpoint, timeoutMs: 10_000 });
  const root = path.join(dir, 'root');
  const mounter = new RecordingMounter();
  const objects = new Map<string, PodApiObjects>();
  const volumes = new VolumeManager({ rootDir: root, plugins: defaultVolumePlugins(mounter), mounter, logger: silentLogger });
  const syncer = new KubeRuntimeSyncer({
    runtime: client, images: client, clock, random: () => 0, logger: silentLogger,
    podLogsDir: path.join(dir, 'logs'), nodeName: 'node-1', hostIP: '192.168.1.10', volumes, apiObjects: (uid) => objects.get(uid),
  });
  const signal = new AbortController().signal;
  return {
    clock, client, syncer, root, mounter, objects,
    sync: async (pod) => syncer.syncPod({ updateType: 'sync', pod, runtimeStatus: await relist(client, pod.metadata!.uid!), signal }),
    cleanup: async (pod) => syncer.cleanupPod({ pod, runtimeStatus: await relist(client, pod.metadata!.uid!), signal }),
    async exec(pod, name, cmd) {
      const st = await relist(client, pod.metadata!.uid!);
      const c = st.containers.find((x) => x.name === name && x.state === 'CONTAINER_RUNNING');
      assert.ok(c, `container ${name} is running`);
      const r = await client.execSync({ containerId: c.id, cmd, timeout: 5 });
      return { stdout: Buffer.from(r.stdout).toString(), stderr: Buffer.from(r.stderr).toString(), exitCode: r.exitCode };
    },
    async close() {
      client.close();
      await sim.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function volumePod(name: string, spec: Partial<V1PodSpec> & { containers: V1Container[] }): V1Pod {
  return { metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations: { 'kubernetes.io/config.source': 'api' } }, spec: { restartPolicy: 'Always', ...spec } };
}

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

test('sim runtime: a bind mount whose source does not exist fails StartContainer with runc\'s error', async (t) => {
  const h = await startVolumeSim();
  t.after(() => h.close());
  const sandboxConfig = { metadata: { name: 'm', uid: 'uid-m', namespace: 'default', attempt: 0 }, logDirectory: '' };
  const sb = await h.client.runPodSandbox({ config: sandboxConfig });
  const id = await h.client.createContainer({
    podSandboxId: sb, sandboxConfig,
    config: { metadata: { name: 'c', attempt: 0 }, image: { image: 'busybox:1.36' }, command: ['sleep', '10'], mounts: [{ containerPath: '/data', hostPath: '/nonexistent/volume/dir' }] },
  });
  await assert.rejects(h.client.startContainer(id), /error mounting "\/nonexistent\/volume\/dir" to rootfs at "\/data": stat \/nonexistent\/volume\/dir: no such file or directory/);
});
