/**
 * configMap, secret, downwardAPI and projected volumes (the kubelet's kubernetes.io/configmap,
 * /secret, /downward-api, /projected): a directory whose files come from API objects and the pod
 * itself (payload-sources.ts), published with the atomic writer so running containers see each
 * update whole. Secret and projected volumes live on a tmpfs (secrets never touch a disk, as
 * the kubelet wraps them in a memory-backed emptyDir); configMap and downwardAPI on disk.
 *
 * Each sync rebuilds the payload in memory and compares its digest with the last one written:
 * an unchanged volume costs no I/O. After an agent restart the first write compares with the
 * files on disk instead (the atomic writer), so adopting a volume rewrites nothing.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import type { Clock } from '../../src/shared/clock/clock.js';
import type { FieldContext } from '../kuberuntime/downward-api.js';
import { writeAtomically, type Payload } from './atomic-writer.js';
import { makePayload } from './payload-sources.js';
import type { TmpfsMounter } from './tmpfs-mounter.js';
import { errorText } from './volume-errors.js';
import { fsGroupOf, setVolumeOwnership } from './volume-ownership.js';
import type { VolumePluginDir } from './volume-paths.js';
import type { VolumePlugin, VolumeSetUpInput, VolumeSetUpResult } from './volume-plugin.js';

export type PayloadVolumeType = 'configMap' | 'secret' | 'downwardAPI' | 'projected';

const PLUGIN: Readonly<Record<PayloadVolumeType, { name: string; dir: VolumePluginDir; tmpfs: boolean }>> = Object.freeze({
  configMap: { name: 'kubernetes.io/configmap', dir: 'kubernetes.io~configmap', tmpfs: false },
  secret: { name: 'kubernetes.io/secret', dir: 'kubernetes.io~secret', tmpfs: true },
  downwardAPI: { name: 'kubernetes.io/downward-api', dir: 'kubernetes.io~downward-api', tmpfs: false },
  projected: { name: 'kubernetes.io/projected', dir: 'kubernetes.io~projected', tmpfs: true },
});

export function payloadDigest(payload: Payload): string {
  const h = createHash('sha256');
  for (const k of [...payload.keys()].sort()) {
    const f = payload.get(k)!;
    h.update(`${k}\0${f.mode}\0${f.data.length}\0`).update(f.data);
  }
  return h.digest('hex');
}

export interface PayloadPluginDeps {
  mounter: TmpfsMounter;
  clock: Pick<Clock, 'now'>;
  /** Node name and host IP for downward API values (pod IPs are not known at volume set-up). */
  field: FieldContext;
}

export class PayloadVolumePlugin implements VolumePlugin {
  readonly name: string;
  readonly dir: VolumePluginDir;
  readonly #type: PayloadVolumeType;
  readonly #tmpfs: boolean;
  readonly #d: PayloadPluginDeps;

  constructor(type: PayloadVolumeType, deps: PayloadPluginDeps) {
    this.#type = type;
    this.name = PLUGIN[type].name;
    this.dir = PLUGIN[type].dir;
    this.#tmpfs = PLUGIN[type].tmpfs;
    this.#d = deps;
  }

  async setUp(input: VolumeSetUpInput): Promise<VolumeSetUpResult> {
    const src = (input.volume as unknown as Record<string, unknown>)[this.#type];
    const built = makePayload(input.pod, this.#type, src, input.objects, this.#d.field);
    if (!built.ok) return built;
    const digest = payloadDigest(built.payload);
    if (input.previous?.digest === digest) return { ok: true, state: input.previous };
    try {
      if (!input.previous) {
        await fs.mkdir(input.dir, { recursive: true, mode: 0o750 });
        if (this.#tmpfs && !(await this.#d.mounter.isMountPoint(input.dir))) await this.#d.mounter.mount(input.dir);
      }
      // fsGroup: on the whole volume, before the new version is published (the kubelet's setPerms).
      const fsGroup = fsGroupOf(input.pod);
      await writeAtomically(input.dir, built.payload, this.#d.clock, fsGroup === undefined ? undefined : () => setVolumeOwnership(input.dir, fsGroup, true));
    } catch (err) {
      return { ok: false, message: errorText(err) };
    }
    return { ok: true, state: { hostPath: input.dir, digest, tmpfs: this.#tmpfs } };
  }
}
