/**
 * The simulated image filesystem: what ImageFsInfo reports and what tests set to create disk
 * pressure deterministically.
 *
 * Usage (reported over CRI, ImageFsInfo):
 *   - imageFilesystems[0]: the images' sizes (sim-images.ts: 1–50 MB, stable per reference) plus
 *     `extraUsedBytes` (anything else on the disk: what a test sets to push usage up); inodes
 *     150 per image (a small image's file count);
 *   - containerFilesystems[0]: the writable layers of every container that exists, whatever its
 *     state (containerd keeps a container's snapshot until RemoveContainer): 4096 bytes and 3
 *     inodes each, or `sim.shardlet.io/writable-layer-bytes` of the container (sim-annotations.ts).
 *     containerd 2.x reports this entry (1.6 left it empty); it names the same mountpoint.
 * Capacity: CRI carries none (the kubelet reads it from the filesystem with statfs). The
 * simulated disk's `capacityBytes` is kept here for in-process tests and benches, which hand
 * the agent a capacity source built from {@link SimImageFs.figures}; available = capacity −
 * everything used, never below 0.
 */
import type { ImageFsInfoResponse } from '../shared/cri/cri-types.js';
import { simNumber } from './sim-annotations.js';
import type { SimImage } from './sim-images.js';
import type { ContainerRecord } from './sim-state.js';
import { msToNs } from './sim-views.js';

export const WRITABLE_LAYER_DEFAULT_BYTES = 4096;
const WRITABLE_LAYER_INODES = 3;
const INODES_PER_IMAGE = 150;

export interface SimImageFsSettings {
  /** Simulated disk size in bytes (default 100 GiB). */
  capacityBytes: number;
  /** Bytes used by something other than images and writable layers (default 0). */
  extraUsedBytes: number;
}

export interface SimImageFsFigures {
  imageBytes: number;
  imageInodes: number;
  containerBytes: number;
  containerInodes: number;
  extraUsedBytes: number;
  capacityBytes: number;
  availableBytes: number;
}

export class SimImageFsError extends Error {
  readonly code = 'ERR_SIM_IMAGE_FS';
}

/** A container's writable layer in bytes (annotation, else the default). */
export function writableLayerBytes(c: ContainerRecord): number {
  if (c.usage?.writableLayerBytes !== undefined) return c.usage.writableLayerBytes;
  const n = simNumber({ own: c.config.annotations, pod: c.sandboxAnnotations, containerName: c.config.metadata?.name ?? '' }, 'writable-layer-bytes');
  return n !== undefined && Number.isSafeInteger(n) ? n : WRITABLE_LAYER_DEFAULT_BYTES;
}

export class SimImageFs {
  #s: SimImageFsSettings = { capacityBytes: 100 * 1024 ** 3, extraUsedBytes: 0 };
  readonly #mountpoint: string;
  readonly #images: () => readonly SimImage[];
  readonly #containers: () => Iterable<ContainerRecord>;

  constructor(deps: { mountpoint: string; images: () => readonly SimImage[]; containers: () => Iterable<ContainerRecord>; settings?: Partial<SimImageFsSettings> }) {
    this.#mountpoint = deps.mountpoint;
    this.#images = deps.images;
    this.#containers = deps.containers;
    if (deps.settings) this.set(deps.settings);
  }

  get settings(): Readonly<SimImageFsSettings> {
    return this.#s;
  }

  /** Changes the simulated disk (unset fields keep their value). */
  set(s: Partial<SimImageFsSettings>): void {
    const next = { ...this.#s, ...s };
    for (const k of ['capacityBytes', 'extraUsedBytes'] as const) {
      if (!Number.isSafeInteger(next[k]) || next[k] < 0) throw new SimImageFsError(`${k} must be a non-negative integer, got ${next[k]}`);
    }
    this.#s = next;
  }

  figures(): SimImageFsFigures {
    const images = this.#images();
    let imageBytes = 0;
    for (const i of images) imageBytes += i.size;
    let containerBytes = 0;
    let n = 0;
    for (const c of this.#containers()) {
      containerBytes += writableLayerBytes(c);
      n++;
    }
    const used = imageBytes + containerBytes + this.#s.extraUsedBytes;
    return {
      imageBytes, imageInodes: images.length * INODES_PER_IMAGE, containerBytes, containerInodes: n * WRITABLE_LAYER_INODES,
      extraUsedBytes: this.#s.extraUsedBytes, capacityBytes: this.#s.capacityBytes, availableBytes: Math.max(0, this.#s.capacityBytes - used),
    };
  }

  imageFsInfo(nowMs: number): ImageFsInfoResponse {
    const f = this.figures();
    const timestamp = msToNs(nowMs);
    const fsId = { mountpoint: this.#mountpoint };
    return {
      imageFilesystems: [{ timestamp, fsId, usedBytes: { value: String(f.imageBytes + f.extraUsedBytes) }, inodesUsed: { value: String(f.imageInodes) } }],
      containerFilesystems: [{ timestamp, fsId, usedBytes: { value: String(f.containerBytes) }, inodesUsed: { value: String(f.containerInodes) } }],
    };
  }
}
