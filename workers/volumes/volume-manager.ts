/**
 * The worker-side volume manager (the kubelet's volumemanager + its reconciler, without
 * attach/detach): per pod, inside the pod's serialized loop on its worker thread.
 *
 * Timeline of one pod's volumes:
 *   first sync ─ setUpPod: every volume set up (plugin by source type) before any sandbox or
 *                container is created; a failure leaves the pod waiting (FailedMount), nothing
 *                of it is started, and the next sync tries again
 *   each sync  ─ setUpPod again: cheap for volumes already set up; payload volumes (configMap,
 *                secret, downwardAPI, projected) rewritten atomically when their content changed
 *   cleanup    ─ tearDownPod after the pod's containers and sandboxes are removed: tmpfs mounts
 *                under the pod's directory unmounted, then `<rootDir>/pods/<uid>` removed
 *
 * State: `#pods` (uid → volume name → what its plugin set up), this thread's memory only. After
 * an agent restart it is empty and rebuilt from the disk layout: plugins adopt what they find.
 *
 * Unsupported volume types (persistentVolumeClaim, csi, nfs, ...) fail set-up with a message
 * naming the type: a pod that needs one never starts without it.
 */
import fs from 'node:fs/promises';
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import type { Logger } from '../../src/shared/logging/logger.js';
import type { PodApiObjects } from '../../src/shared/protocol/api-object-snapshot.js';
import type { TmpfsMounter } from './tmpfs-mounter.js';
import { errorText, setUpFailedMessage } from './volume-errors.js';
import { checkPathSegment } from '../../src/shared/paths/path-segment.js';
import { podDir, volumeDir } from './volume-paths.js';
import type { VolumePlugin, VolumeState } from './volume-plugin.js';

/** The source fields of V1Volume (every key but `name`); the first one present is the type. */
export function volumeSourceType(v: V1Volume): string {
  for (const k of Object.keys(v)) if (k !== 'name' && (v as unknown as Record<string, unknown>)[k] !== undefined && (v as unknown as Record<string, unknown>)[k] !== null) return k;
  return 'emptyDir';
}

export interface VolumeManagerOptions {
  rootDir: string;
  /** Plugins by V1Volume source field (emptyDir, hostPath, configMap, ...). */
  plugins: ReadonlyMap<string, VolumePlugin>;
  mounter: TmpfsMounter;
  logger: Logger;
}

export type PodVolumesResult =
  | { ok: true; volumes: ReadonlyMap<string, string> }
  | {
    ok: false;
    message: string;
    unmounted: string[];
    /** Each failed volume's own message (`MountVolume.SetUp failed for volume "x" : ...`), as the kubelet's FailedMount event per failed mount. */
    failures: { volume: string; message: string }[];
  };

export class VolumeManager {
  readonly #o: VolumeManagerOptions;
  readonly #pods = new Map<string, Map<string, VolumeState>>();

  constructor(opts: VolumeManagerOptions) {
    if (typeof opts?.rootDir !== 'string' || opts.rootDir === '') throw new TypeError('VolumeManager: rootDir is required');
    if (!opts.plugins || !opts.mounter || !opts.logger) throw new TypeError('VolumeManager: plugins, mounter and logger are required');
    this.#o = opts;
  }

  /** Pods with volume state held here (leak checks). */
  get trackedPods(): number {
    return this.#pods.size;
  }

  /**
   * Sets up every volume of the pod (see the module comment). Returns the host path of each
   * volume by name, or the first failure's message (all volumes are still attempted).
   */
  async setUpPod(pod: V1Pod, objects: PodApiObjects | undefined): Promise<PodVolumesResult> {
    const uid = pod.metadata?.uid ?? '';
    const volumes = pod.spec?.volumes ?? [];
    const badUid = checkPathSegment(uid);
    if (badUid !== undefined) return { ok: false, message: `pod uid: ${badUid}`, unmounted: volumes.map((v) => v.name), failures: [] };
    let states = this.#pods.get(uid);
    if (!states) this.#pods.set(uid, (states = new Map()));
    const out = new Map<string, string>();
    const unmounted: string[] = [];
    const failures: { volume: string; message: string }[] = [];
    for (const volume of volumes) {
      const type = volumeSourceType(volume);
      const plugin = this.#o.plugins.get(type);
      let failure: string | undefined;
      if (!plugin) {
        failure = `volume type ${type} is not supported by shardlet`;
      } else {
        try {
          const dir = plugin.dir === null ? '' : volumeDir(this.#o.rootDir, uid, plugin.dir, volume.name);
          const r = await plugin.setUp({ pod, volume, dir, objects, previous: states.get(volume.name) });
          if (r.ok) {
            states.set(volume.name, r.state);
            out.set(volume.name, r.state.hostPath);
          } else failure = r.message;
        } catch (err) {
          failure = errorText(err);
        }
      }
      if (failure !== undefined) {
        unmounted.push(volume.name);
        failures.push({ volume: volume.name, message: setUpFailedMessage(volume.name, failure) });
      }
    }
    if (failures.length > 0) return { ok: false, message: `unmounted volumes=[${unmounted.join(' ')}]: ${failures[0]!.message}`, unmounted, failures };
    return { ok: true, volumes: out };
  }

  /**
   * Removes the pod's volumes: unmounts every mount below `<rootDir>/pods/<uid>` (what this
   * thread mounted and what a previous agent did), then removes the directory. Returns a failure
   * message, or undefined. A directory with a mount left in it is never removed (rm -rf would
   * reach into it).
   */
  async tearDownPod(uid: string): Promise<string | undefined> {
    this.#pods.delete(uid);
    let dir: string;
    try {
      dir = podDir(this.#o.rootDir, uid);
    } catch (err) {
      return errorText(err);
    }
    try {
      // Most pods never had a volume directory: no mount table read for them.
      if (!(await exists(dir))) return undefined;
      for (const m of await this.#o.mounter.mountsUnder(dir)) await this.#o.mounter.unmount(m);
      if ((await this.#o.mounter.mountsUnder(dir)).length > 0) return `volumes of pod ${uid}: mounts remain under ${dir}`;
      await fs.rm(dir, { recursive: true, force: true });
    } catch (err) {
      const message = `tearing down volumes of pod ${uid}: ${errorText(err)}`;
      this.#o.logger.error('volume teardown failed', { podUID: uid, error: message });
      return message;
    }
    return undefined;
  }

  /** Forget a pod's in-memory state (its directories are left to tearDownPod). */
  forgetPod(uid: string): void {
    this.#pods.delete(uid);
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
