/**
 * emptyDir (the kubelet's kubernetes.io/empty-dir): a directory under the pod's volumes dir,
 * mode 0777 as the kubelet leaves it (with fsGroup: group fsGroup, setgid; volume-ownership.ts); `medium: Memory` mounts a tmpfs on it, bounded by
 * `sizeLimit` when given. Set up once per pod (an existing directory, or an existing tmpfs after
 * an agent restart, is adopted as it is: its content is the pod's data).
 */
import fs from 'node:fs/promises';
import { unitValueOrZero } from '../../src/shared/resources/quantity.js';
import type { TmpfsMounter } from './tmpfs-mounter.js';
import type { VolumePlugin, VolumeSetUpInput, VolumeSetUpResult } from './volume-plugin.js';
import { errorText } from './volume-errors.js';
import { fsGroupOf, setVolumeOwnership } from './volume-ownership.js';

export class EmptyDirPlugin implements VolumePlugin {
  readonly name = 'kubernetes.io/empty-dir';
  readonly dir = 'kubernetes.io~empty-dir' as const;
  readonly #mounter: TmpfsMounter;

  constructor(mounter: TmpfsMounter) {
    this.#mounter = mounter;
  }

  async setUp(input: VolumeSetUpInput): Promise<VolumeSetUpResult> {
    if (input.previous) return { ok: true, state: input.previous };
    const src = input.volume.emptyDir ?? {};
    const medium = src.medium ?? '';
    if (medium !== '' && medium !== 'Memory') return { ok: false, message: `emptyDir medium ${JSON.stringify(String(medium).slice(0, 64))} is not supported by shardlet` };
    try {
      await fs.mkdir(input.dir, { recursive: true, mode: 0o750 });
      if (medium === 'Memory' && !(await this.#mounter.isMountPoint(input.dir))) {
        const size = src.sizeLimit === undefined ? 0 : unitValueOrZero(String(src.sizeLimit));
        await this.#mounter.mount(input.dir, size > 0 ? size : undefined);
      }
      await fs.chmod(input.dir, 0o777);
      // The kubelet ignores an ownership failure here (it logs it); a walk error still fails.
      await setVolumeOwnership(input.dir, fsGroupOf(input.pod), false);
    } catch (err) {
      return { ok: false, message: errorText(err) };
    }
    return { ok: true, state: { hostPath: input.dir, tmpfs: medium === 'Memory' } };
  }
}
