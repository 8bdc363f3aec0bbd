/**
 * The image filesystem's figures, as the kubelet's CRI stats provider builds them
 * (criStatsProvider.ImageFsStats): usage from CRI ImageFsInfo (the runtime knows what its images
 * and writable layers hold), capacity and availability from the filesystem holding the
 * mountpoint ImageFsInfo names. The kubelet asks cadvisor (GetDirFsInfo: statfs of the device
 * holding that directory); shardlet has no cadvisor and calls statfs itself through the
 * {@link FsCapacitySource} seam:
 *   - `statfsCapacity` (what the agent wires): statfs(2) of the mountpoint, or of its nearest
 *     existing parent when the directory is not on this machine's view (the simulated runtime
 *     names a directory under its --root that need not exist: its images are then measured
 *     against the disk that would hold them). capacity = blocks × bsize, available =
 *     bavail × bsize (what an unprivileged writer can still use, cadvisor's Available).
 *   - tests inject a source with set figures (the simulated runtime's usage is simulated too).
 * Used by image GC (image-gc-manager.ts) and /stats/summary (node.runtime.imageFs / containerFs).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../shared/clock/clock.js';
import type { FilesystemUsage } from '../../shared/cri/cri-types.js';
import type { ImageService } from '../../shared/cri/runtime-service.js';

export interface FsCapacity {
  capacityBytes: number;
  availableBytes: number;
  inodes: number;
  inodesFree: number;
}

/** Capacity of the filesystem holding a path; undefined when it cannot be told. */
export interface FsCapacitySource {
  statfs(dir: string): Promise<FsCapacity | undefined>;
}

/** stats/v1alpha1 FsStats, as /stats/summary prints it (fields absent when unknown). */
export interface FsStats {
  time: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export class ImageFsStatsError extends Error {
  override readonly name = 'ImageFsStatsError';
  readonly code = 'ERR_IMAGE_FS_STATS';
}

export const statfsCapacity: FsCapacitySource = Object.freeze({
  async statfs(dir: string): Promise<FsCapacity | undefined> {
    if (!path.isAbsolute(dir)) return undefined;
    for (let d = path.resolve(dir); ; d = path.dirname(d)) {
      try {
        const st = await fs.promises.statfs(d);
        return { capacityBytes: st.blocks * st.bsize, availableBytes: st.bavail * st.bsize, inodes: st.files, inodesFree: st.ffree };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || d === path.dirname(d)) return undefined;
      }
    }
  },
});

function num(v: { value?: unknown } | null | undefined): number | undefined {
  const raw = v?.value;
  if (raw === undefined || raw === null || raw === '') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

async function fsStatsOf(u: FilesystemUsage, capacity: FsCapacitySource, clock: Clock): Promise<FsStats> {
  // Runtime data: a timestamp that is not a decimal count of ns is ignored (now is used).
  const tsNs = /^[1-9]\d{0,20}$/.test(u.timestamp ?? '') ? BigInt(u.timestamp) / 1_000_000n : undefined;
  const out: FsStats = { time: new Date(tsNs !== undefined ? Number(tsNs) : clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  const used = num(u.usedBytes);
  const inodesUsed = num(u.inodesUsed);
  if (used !== undefined) out.usedBytes = used;
  if (inodesUsed !== undefined) out.inodesUsed = inodesUsed;
  const mount = u.fsId?.mountpoint;
  const cap = mount ? await capacity.statfs(mount) : undefined;
  if (cap) {
    out.availableBytes = cap.availableBytes;
    out.capacityBytes = cap.capacityBytes;
    out.inodesFree = cap.inodesFree;
    out.inodes = cap.inodes;
  }
  return out;
}

/**
 * The image filesystem's and the container writable layers' figures. A runtime reporting no
 * container filesystem (containerd 1.6) shares the image one, as the kubelet assumes.
 * Throws ImageFsStatsError when the runtime reports no image filesystem (the kubelet's
 * "imageFs information is unavailable").
 */
export async function imageFsStats(runtime: Pick<ImageService, 'imageFsInfo'>, capacity: FsCapacitySource, clock: Clock): Promise<{ imageFs: FsStats; containerFs: FsStats }> {
  const resp = await runtime.imageFsInfo();
  const img = resp.imageFilesystems[0];
  if (img === undefined) throw new ImageFsStatsError('imageFs information is unavailable');
  const imageFs = await fsStatsOf(img, capacity, clock);
  const ctr = resp.containerFilesystems[0];
  return { imageFs, containerFs: ctr === undefined ? imageFs : await fsStatsOf(ctr, capacity, clock) };
}
