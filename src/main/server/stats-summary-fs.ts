/**
 * The filesystem and process figures of /stats/summary that the kubelet's CRI stats provider
 * adds to CPU and memory, and that the eviction manager ranks and thresholds on:
 *   - container `rootfs`: the writable layer as ListContainerStats reports it (usedBytes,
 *     inodesUsed; cri_stats_provider makeContainerStats);
 *   - container `logs`: the bytes and files under the container's log directory
 *     (<podLogsDir>/<ns>_<name>_<uid>/<container>/, the current file and its rotations; the
 *     kubelet asks cadvisor for the same directory's usage);
 *   - pod `ephemeral-storage`: the sum over the pod's containers of rootfs + logs (plus the
 *     local volumes' usage where a volume source reports it), as makePodStorageStats sums them;
 *   - node `fs`: statfs of the agent's --root-dir (the kubelet's nodefs: the filesystem of its
 *     root directory), and node `rlimit`: maxpid = min(kernel.pid_max, kernel.threads-max),
 *     curproc = the task count of /proc/loadavg (pidlimit.Stats).
 * Figures the machine does not give are left out, never invented. Log directories are read
 * with at most {@link MAX_LOG_ENTRIES} entries each (a rotation keeps a handful of files).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../shared/clock/clock.js';
import type { ContainerStats } from '../../shared/cri/cri-types.js';
import { podLogsDirectoryOf } from '../../shared/kubetypes/pod-log-paths.js';
import { isPathSegment } from '../../shared/paths/path-segment.js';
import type { FsCapacitySource, FsStats } from '../gc/image-fs-stats.js';

export const MAX_LOG_ENTRIES = 64;

/** stats/v1alpha1 RlimitStats. */
export interface RlimitStats {
  time: string;
  maxpid?: number;
  curproc?: number;
}

function isoOf(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function num(v: { value?: unknown } | null | undefined): number | undefined {
  const raw = v?.value;
  if (raw === undefined || raw === null || raw === '') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** The container's writable layer as `rootfs`, or undefined when the runtime reports none. */
export function rootfsOf(c: ContainerStats, time: string): FsStats | undefined {
  const w = c.writableLayer;
  if (w === undefined || w === null) return undefined;
  const out: FsStats = { time };
  const used = num(w.usedBytes);
  const inodes = num(w.inodesUsed);
  if (used !== undefined) out.usedBytes = used;
  if (inodes !== undefined) out.inodesUsed = inodes;
  return out;
}

/** Bytes and files under one container's log directory (0/0 when it does not exist). */
export async function containerLogsUsage(podLogsDir: string, namespace: string, name: string, uid: string, container: string): Promise<{ usedBytes: number; inodesUsed: number } | undefined> {
  if (!isPathSegment(namespace) || !isPathSegment(name) || !isPathSegment(uid) || !isPathSegment(container)) return undefined;
  const dir = path.join(podLogsDirectoryOf(podLogsDir, namespace, name, uid), container);
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(dir, { withFileTypes: true });
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? { usedBytes: 0, inodesUsed: 0 } : undefined;
  }
  let usedBytes = 0;
  let inodesUsed = 1; // the directory itself
  for (const e of entries.slice(0, MAX_LOG_ENTRIES)) {
    if (!e.isFile()) continue;
    try {
      const st = await fs.promises.lstat(path.join(dir, e.name));
      usedBytes += st.size;
      inodesUsed++;
    } catch {
      // removed meanwhile (rotation): not counted
    }
  }
  return { usedBytes, inodesUsed };
}

/** The node filesystem (the kubelet's nodefs): statfs of the root directory. */
export async function nodeFsStats(rootDir: string, capacity: FsCapacitySource, clock: Clock): Promise<FsStats | undefined> {
  const cap = await capacity.statfs(rootDir);
  if (cap === undefined) return undefined;
  return {
    time: isoOf(clock.now()),
    availableBytes: cap.availableBytes,
    capacityBytes: cap.capacityBytes,
    usedBytes: Math.max(0, cap.capacityBytes - cap.availableBytes),
    inodesFree: cap.inodesFree,
    inodes: cap.inodes,
    inodesUsed: Math.max(0, cap.inodes - cap.inodesFree),
  };
}

/** Where the task limits and count come from (a seam: tests set them). */
export interface RlimitSource {
  read(): Promise<{ maxPid?: number; runningTasks?: number }>;
}

/** /proc/loadavg's 4th field "running/total": the total is the kernel's task count. */
export function parseLoadavgTasks(text: string): number | undefined {
  const m = /^\S+\s+\S+\s+\S+\s+\d+\/(\d+)\s/.exec(text);
  return m ? Number(m[1]) : undefined;
}

export const procRlimitSource: RlimitSource = Object.freeze({
  async read(): Promise<{ maxPid?: number; runningTasks?: number }> {
    const int = async (p: string): Promise<number | undefined> => {
      try {
        const n = Number((await fs.promises.readFile(p, 'utf8')).trim());
        return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
      } catch {
        return undefined;
      }
    };
    const [pidMax, threadsMax, loadavg] = await Promise.all([
      int('/proc/sys/kernel/pid_max'),
      int('/proc/sys/kernel/threads-max'),
      fs.promises.readFile('/proc/loadavg', 'utf8').catch(() => ''),
    ]);
    const out: { maxPid?: number; runningTasks?: number } = {};
    // As pidlimit.Stats: the smaller of the two system-wide task limits, only when both are known.
    if (pidMax !== undefined && threadsMax !== undefined) out.maxPid = Math.min(pidMax, threadsMax);
    const tasks = parseLoadavgTasks(loadavg);
    if (tasks !== undefined) out.runningTasks = tasks;
    return out;
  },
});

export async function rlimitStats(source: RlimitSource, clock: Clock): Promise<RlimitStats> {
  const r = await source.read();
  const out: RlimitStats = { time: isoOf(clock.now()) };
  if (r.maxPid !== undefined) out.maxpid = r.maxPid;
  if (r.runningTasks !== undefined) out.curproc = r.runningTasks;
  return out;
}
