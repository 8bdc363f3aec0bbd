/**
 * Harness for volume scenario tests: the simulated runtime (real gRPC, FakeClock) and a
 * KubeRuntimeSyncer with the real VolumeManager and plugins, as pod-worker-factory.ts wires
 * them, with a recording tmpfs mounter (the real one is exercised on containerd) and the API
 * objects snapshot per pod as the main thread would send it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { FakeClock } from '../../src/shared/clock/fake-clock.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { silentLogger } from '../../src/shared/logging/logger.js';
import { SimulatedRuntime } from '../../src/simruntime/simulated-runtime.js';
import { KubeRuntimeSyncer } from '../../workers/kuberuntime/kuberuntime-syncer.js';
import type { PodEventRecorder } from '../../workers/kuberuntime/pod-events.js';
import type { SyncPodOutcome } from '../../workers/pod-sync.js';
import type { PodApiObjects } from '../../src/shared/protocol/api-object-snapshot.js';
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

/** `events`: the cluster-mode pod event recorder (absent: standalone, no events). */
export async function startVolumeSim(opts: { events?: PodEventRecorder } = {}): Promise<VolumeSim> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'volumes-sim-'));
  const clock = new FakeClock();
  const sim = await SimulatedRuntime.start({ socketPath: path.join(dir, 'cri.sock'), clock, preloadImages: ['busybox:1.36'] });
  const client = new CriClient({ endpoint: sim.endpoint, timeoutMs: 10_000 });
  const root = path.join(dir, 'root');
  const mounter = new RecordingMounter();
  const objects = new Map<string, PodApiObjects>();
  const volumes = new VolumeManager({ rootDir: root, plugins: defaultVolumePlugins(mounter, { clock, field: { nodeName: 'node-1', hostIP: '192.168.1.10', podIPs: [] } }), mounter, logger: silentLogger });
  const syncer = new KubeRuntimeSyncer({
    runtime: client, images: client, clock, random: () => 0, logger: silentLogger,
    podLogsDir: path.join(dir, 'logs'), nodeName: 'node-1', hostIP: '192.168.1.10', volumes, apiObjects: (uid) => objects.get(uid),
    ...(opts.events ? { events: opts.events } : {}),
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

