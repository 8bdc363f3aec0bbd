/**
 * CRI ImageService semantics over the {@link SimImageStore}, matching containerd 1.6:
 *  - PullImage: any reference pulls (the simulated registry has everything) and returns the
 *    image id as image_ref, except references containing `notfound` (UNKNOWN, message with
 *    "not found", as containerd reports a missing manifest) and `sim.shardlet.io/pull-fail`
 *    (UNKNOWN registry error). `sim.shardlet.io/pull-delay-ms` delays the answer (clock time).
 *  - ImageStatus: `image: null` when absent — not an error.
 *  - RemoveImage: OK when absent (idempotent).
 *  - ListImages: all, or those matching the filter's image.
 *  - ImageFsInfo: the image filesystem (the overlayfs snapshotter dir under --root) and the
 *    containers' writable layers on it (sim-image-fs.ts, where tests set usage).
 *  - RemoveImage removes an image even while containers use it, as containerd does (the kubelet
 *    never asks for that); a removed image is gone from ListImages and ImageStatus.
 */
import type { Clock } from '../shared/clock/clock.js';
import { CriError } from '../shared/cri/cri-errors.js';
import type { Image, ImageFsInfoResponse, ImageSpec, PullImageRequest } from '../shared/cri/cri-types.js';
import { simFlag, simNumber } from './sim-annotations.js';
import { normalizeImageRef, type SimImage, type SimImageStore } from './sim-images.js';
import { criImageUserOf } from './sim-image-users.js';
import type { SimImageFs } from './sim-image-fs.js';

export function toCriImage(img: SimImage): Image {
  const user = criImageUserOf(img.repoTags[0] ?? '');
  return {
    id: img.id,
    repoTags: [...img.repoTags],
    repoDigests: [...img.repoDigests],
    size: String(img.size),
    uid: user.uid,
    username: user.username,
    spec: { image: img.id, annotations: {} },
    pinned: false,
  };
}

export class SimImageService {
  readonly #store: SimImageStore;
  readonly #clock: Clock;
  readonly #fs: SimImageFs;

  constructor(deps: { store: SimImageStore; clock: Clock; fs: SimImageFs }) {
    this.#store = deps.store;
    this.#clock = deps.clock;
    this.#fs = deps.fs;
  }

  listImages(filter: ImageSpec | null | undefined): Image[] {
    const want = filter?.image ?? '';
    if (want !== '') {
      const img = this.#store.resolve(want);
      return img ? [toCriImage(img)] : [];
    }
    return this.#store.list().map(toCriImage);
  }

  imageStatus(spec: ImageSpec | null | undefined): Image | null {
    const ref = spec?.image ?? '';
    if (ref === '') throw new CriError('ERR_CRI_UNKNOWN', 'ImageStatus', 'ImageStatus: image reference must not be empty');
    const img = this.#store.resolve(ref);
    return img ? toCriImage(img) : null;
  }

  async pullImage(req: PullImageRequest): Promise<string> {
    const ref = req.image?.image ?? '';
    if (ref === '') throw new CriError('ERR_CRI_UNKNOWN', 'PullImage', 'PullImage: failed to pull and unpack image "": invalid reference format');
    const norm = normalizeImageRef(ref);
    const src = { own: req.image?.annotations, pod: req.sandboxConfig?.annotations };
    const delay = simNumber(src, 'pull-delay-ms');
    if (delay !== undefined && delay > 0) await this.#clock.sleep(delay);
    if (norm.includes('notfound')) {
      throw new CriError('ERR_CRI_UNKNOWN', 'PullImage', `failed to pull and unpack image "${norm}": failed to resolve reference "${norm}": ${norm}: not found`);
    }
    if (simFlag(src, 'pull-fail')) {
      throw new CriError('ERR_CRI_UNKNOWN', 'PullImage', `failed to pull and unpack image "${norm}": failed to copy: httpReadSeeker: failed open: unexpected status code 500 Internal Server Error (sim.shardlet.io/pull-fail)`);
    }
    return this.#store.add(ref, true).id;
  }

  removeImage(spec: ImageSpec | null | undefined): void {
    this.#store.remove(spec?.image ?? '');
  }

  imageFsInfo(): ImageFsInfoResponse {
    return this.#fs.imageFsInfo(this.#clock.now());
  }
}
