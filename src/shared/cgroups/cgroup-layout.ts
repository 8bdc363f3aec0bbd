/**
 * Where the cgroup hierarchies are mounted and which version they are (runc's
 * IsCgroup2UnifiedMode: /sys/fs/cgroup is cgroup2 → v2, anything else → v1, a hybrid host's
 * /sys/fs/cgroup/unified included, as runc and containerd treat it).
 *
 *   v2: one tree at `root`; a cgroup's controllers are those its parent enables in
 *       cgroup.subtree_control.
 *   v1: one tree per controller (`cpu` may share a mount with `cpuacct`), each mount point found
 *       in /proc/self/mountinfo; a cgroup exists once per hierarchy.
 *
 * Plain data (structured-cloned to the pod-worker threads in their start config).
 */
import fsp from 'node:fs/promises';

export type CgroupLayout =
  | { readonly version: 'v2'; readonly root: string }
  | {
      readonly version: 'v1';
      /**
       * Mount point of each v1 hierarchy, keyed by one of its controllers or `name=...`, and a
       * hybrid host's cgroup2 tree as `unified` (created and removed like the others, no limits).
       */
      readonly mounts: Readonly<Record<string, string>>;
    };

/** The kernel's cgroup v1 controllers (a super option naming one marks its hierarchy). */
const V1_CONTROLLERS = new Set(['cpu', 'cpuacct', 'cpuset', 'memory', 'devices', 'freezer', 'net_cls', 'net_prio', 'blkio', 'perf_event', 'hugetlb', 'pids', 'rdma', 'misc']);

/** statfs f_type of a cgroup2 mount (CGROUP2_SUPER_MAGIC). */
const CGROUP2_SUPER_MAGIC = 0x63677270;

export const DEFAULT_CGROUP_MOUNT = '/sys/fs/cgroup';

/** The key of a hybrid host's cgroup2 mount among the v1 mounts. */
export const UNIFIED_KEY = 'unified';

/**
 * The v1 hierarchies in a mountinfo text: fstype `cgroup`, each controller (or `name=x`) of its
 * super options mapped to the mount point, and a cgroup2 mount (hybrid hosts) as `unified`.
 * The first mount of a hierarchy wins.
 */
export function v1MountsFromMountinfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const pre = line.slice(0, sep).split(' ');
    const post = line.slice(sep + 3).split(' ');
    const mountPoint = (pre[4] ?? '').replace(/\\040/g, ' ');
    if (mountPoint === '') continue;
    // A hybrid host's cgroup2 tree (/sys/fs/cgroup/unified): runc puts containers there too.
    if (post[0] === 'cgroup2') {
      if (!(UNIFIED_KEY in out)) out[UNIFIED_KEY] = mountPoint;
      continue;
    }
    if (post[0] !== 'cgroup') continue;
    for (const opt of (post[2] ?? '').split(',')) {
      // Super options also carry mount flags (rw, xattr, noprefix, release_agent=...).
      if (!V1_CONTROLLERS.has(opt) && !/^name=[a-z_0-9.-]+$/.test(opt)) continue;
      if (!(opt in out)) out[opt] = mountPoint;
    }
  }
  return out;
}

/** Detects the layout under `mount` (default /sys/fs/cgroup). Async: statfs and a file read. */
export async function detectCgroupLayout(mount = DEFAULT_CGROUP_MOUNT, mountinfoPath = '/proc/self/mountinfo'): Promise<CgroupLayout> {
  const st = await fsp.statfs(mount);
  if (st.type === CGROUP2_SUPER_MAGIC) return { version: 'v2', root: mount };
  const mounts = v1MountsFromMountinfo(await fsp.readFile(mountinfoPath, 'utf8'));
  return { version: 'v1', mounts };
}

/** The directories one cgroup path spans: one for v2, one per distinct v1 hierarchy. */
export function hierarchyRoots(layout: CgroupLayout): string[] {
  return layout.version === 'v2' ? [layout.root] : [...new Set(Object.values(layout.mounts))];
}
