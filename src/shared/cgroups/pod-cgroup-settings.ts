/**
 * The pod cgroup settings the main thread decides at startup (node-cgroups.ts) and every pod
 * worker starts with (structured-cloned in its thread config), and the one factory both sides
 * build their {@link CgroupManager} with.
 */
import type { CgroupFs } from './cgroup-fs.js';
import type { CgroupLayout } from './cgroup-layout.js';
import type { CgroupManager } from './cgroup-manager.js';
import type { CgroupDriver, CgroupName } from './cgroup-name.js';
import { CgroupError } from './cgroup-errors.js';
import { CgroupfsManager } from './cgroupfs-manager.js';
import { NamesOnlyCgroupManager } from './names-only-cgroup-manager.js';

export type PodCgroupMode =
  /** Pod cgroups are created, limited and removed on the host's cgroup filesystem. */
  | { readonly kind: 'host'; readonly layout: CgroupLayout }
  /** The simulated runtime: names (and cgroupParent) only, nothing on the host. */
  | { readonly kind: 'names-only' };

/** Present only with --cgroups-per-qos=true (absent: no pod cgroups, no cgroupParent). */
export interface PodCgroupSettings {
  readonly driver: CgroupDriver;
  /** --cgroup-root as a name (the QoS cgroups live under `<root>/kubepods`). */
  readonly root: CgroupName;
  readonly mode: PodCgroupMode;
}

/** Why the systemd driver cannot write host cgroups (the one message, at startup and here). */
export const SYSTEMD_HOST_UNSUPPORTED =
  '--cgroup-driver=systemd: shardlet creates the QoS and pod cgroups itself only with the cgroupfs driver (systemd slices need systemd\'s D-Bus API, which shardlet does not speak); ' +
  'use --cgroup-driver=cgroupfs with the runtime\'s cgroupfs driver (containerd: SystemdCgroup = false), or --cgroups-per-qos=false --enforce-node-allocatable=none';

export function cgroupManagerFor(settings: PodCgroupSettings, fs: CgroupFs): CgroupManager {
  const mode = settings.mode;
  switch (mode.kind) {
    case 'host':
      if (settings.driver !== 'cgroupfs') throw new CgroupError('ERR_CGROUP_CONFIG', SYSTEMD_HOST_UNSUPPORTED);
      return new CgroupfsManager({ fs, layout: mode.layout });
    case 'names-only':
      return new NamesOnlyCgroupManager(settings.driver);
    default: {
      const never: never = mode;
      return never;
    }
  }
}
