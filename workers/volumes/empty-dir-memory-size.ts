/**
 * The size of a memory-medium emptyDir's tmpfs, as the kubelet's calculateEmptyDirMemorySize
 * (pkg/volume/emptydir/empty_dir.go) computes it: start from node allocatable memory (pods
 * cannot use more memory than all pods may); a pod memory limit in (0, size] lowers it; the
 * volume's sizeLimit in (0, size] lowers it again. A hostile `sizeLimit: 8Ei` thus never
 * reaches mount(8) as is, and a volume without a sizeLimit is still bounded.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podMemoryLimitBytes } from '../../src/shared/resources/pod-resource-totals.js';
import { unitValueOrZero } from '../../src/shared/resources/quantity.js';

/** Bytes of tmpfs for the volume; `nodeAllocatableMemoryBytes` > 0. */
export function emptyDirMemorySizeBytes(pod: V1Pod, sizeLimit: unknown, nodeAllocatableMemoryBytes: number): number {
  let size = nodeAllocatableMemoryBytes;
  const podLimit = podMemoryLimitBytes(pod);
  if (podLimit !== undefined && podLimit > 0 && podLimit <= size) size = podLimit;
  const volumeLimit = sizeLimit === undefined || sizeLimit === null ? 0 : unitValueOrZero(String(sizeLimit));
  if (volumeLimit > 0 && volumeLimit <= size) size = volumeLimit;
  return size;
}
