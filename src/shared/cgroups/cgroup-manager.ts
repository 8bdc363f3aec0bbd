/**
 * The cgroup manager seam (the kubelet's CgroupManager, cgroup_manager_linux.go): what the QoS
 * cgroups (main thread) and the pod cgroups (pod workers) need from the host. Implementations:
 * cgroupfs-manager.ts (writes the host's cgroup filesystem, v1 or v2) and
 * names-only-cgroup-manager.ts (the embedded simulated runtime: names, no host cgroups).
 * All methods are async and never block the thread.
 */
import type { CgroupName } from './cgroup-name.js';
import type { ResourceConfig } from './cgroup-resources.js';

export interface CgroupManager {
  /** Whether this manager creates real cgroups on the host (false: names only, see its module). */
  readonly writesHost: boolean;
  /** The driver's spelling of `name`, as the runtime is given it (linux.cgroupParent). */
  name(name: CgroupName): string;
  /** Whether the cgroup exists (in every hierarchy it spans). */
  exists(name: CgroupName): Promise<boolean>;
  /** Creates the cgroup (missing ancestors too) and applies `resources`. Idempotent. Throws CgroupError. */
  create(name: CgroupName, resources: ResourceConfig): Promise<void>;
  /** Applies `resources` to an existing cgroup. Throws CgroupError. */
  update(name: CgroupName, resources: ResourceConfig): Promise<void>;
  /**
   * Removes the cgroup, its empty child cgroups first; gone already is success. Throws
   * CgroupError (ERR_CGROUP_BUSY while processes remain).
   */
  destroy(name: CgroupName): Promise<void>;
  /** Names (last components) of the child cgroups; [] when the cgroup does not exist. */
  children(name: CgroupName): Promise<string[]>;
}
