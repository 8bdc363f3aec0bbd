/**
 * The image-filesystem capacity source for agents run against the in-process simulated runtime:
 * the simulated disk's capacity and availability (sim-image-fs.ts), through the same seam the
 * agent's statfs source implements (src/main/gc/image-fs-stats.ts). CRI carries no capacity,
 * so tests hand this to the GC in place of statfs.
 */
import type { FsCapacitySource } from '../../src/main/gc/image-fs-stats.js';
import type { SimulatedRuntime } from '../../src/simruntime/simulated-runtime.js';

export function simCapacitySource(rt: SimulatedRuntime, inodes = 1_000_000): FsCapacitySource {
  return {
    async statfs() {
      const f = rt.imageFs.figures();
      return { capacityBytes: f.capacityBytes, availableBytes: f.availableBytes, inodes, inodesFree: Math.max(0, inodes - f.imageInodes - f.containerInodes) };
    },
  };
}
