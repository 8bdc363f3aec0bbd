/**
 * Node-level CPU and memory for /stats/summary and /metrics/resource. The kubelet reads the root
 * cgroup through cAdvisor; shardlet reads the kernel's totals instead:
 * - CPU: /proc/stat's aggregate `cpu` line, every non-idle field (user, nice, system, irq,
 *   softirq, steal) in USER_HZ ticks (100/s on Linux) → core-seconds;
 * - memory: as cAdvisor reads the root cgroup: working set = usage − inactive_file, with usage
 *   the root cgroup's memory.usage_in_bytes (cgroup v1) or MemTotal − MemFree (cgroup v2, whose
 *   root has no memory.current: runc's rootStatsFromMeminfo) and inactive_file from the root's
 *   memory.stat (v1 total_inactive_file); available = MemTotal − working set (what the eviction
 *   manager's memory.available is). Without a readable root cgroup: working set = MemTotal −
 *   MemAvailable, available = MemAvailable.
 */
import fs from 'node:fs';

export interface NodeStats {
  cpuUsageCoreSeconds: number;
  memoryUsageBytes: number;
  memoryWorkingSetBytes: number;
  memoryAvailableBytes: number;
}

export interface NodeStatsReader {
  read(): Promise<NodeStats>;
}

const USER_HZ = 100;

export function parseProcStat(text: string): number {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (line === undefined) throw new Error('/proc/stat: no aggregate cpu line');
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) / USER_HZ;
}

export function parseMeminfo(text: string): { totalBytes: number; freeBytes: number; availableBytes: number } {
  const kib = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
    if (!m) throw new Error(`/proc/meminfo: no ${key}`);
    return Number(m[1]) * 1024;
  };
  return { totalBytes: kib('MemTotal'), freeBytes: kib('MemFree'), availableBytes: kib('MemAvailable') };
}

/** A `key value` line of a cgroup memory.stat, or undefined. */
export function memoryStatField(text: string, key: string): number | undefined {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** The root cgroup's memory usage and working set (cAdvisor's), or undefined when unreadable. */
export async function rootCgroupMemory(m: { totalBytes: number; freeBytes: number }, root = '/sys/fs/cgroup'): Promise<{ usageBytes: number; workingSetBytes: number } | undefined> {
  const read = (p: string): Promise<string | undefined> => fs.promises.readFile(p, 'utf8').catch(() => undefined);
  let usage: number | undefined;
  let inactive: number | undefined;
  if ((await read(`${root}/cgroup.controllers`)) !== undefined) {
    usage = m.totalBytes - m.freeBytes;
    const stat = await read(`${root}/memory.stat`);
    inactive = stat === undefined ? undefined : memoryStatField(stat, 'inactive_file');
  } else {
    const u = await read(`${root}/memory/memory.usage_in_bytes`);
    usage = u === undefined ? undefined : Number(u.trim());
    const stat = await read(`${root}/memory/memory.stat`);
    inactive = stat === undefined ? undefined : memoryStatField(stat, 'total_inactive_file');
  }
  if (usage === undefined || inactive === undefined || !Number.isFinite(usage)) return undefined;
  return { usageBytes: usage, workingSetBytes: Math.max(0, usage - inactive) };
}

export const procNodeStats: NodeStatsReader = Object.freeze({
  async read(): Promise<NodeStats> {
    const [stat, meminfo] = await Promise.all([fs.promises.readFile('/proc/stat', 'utf8'), fs.promises.readFile('/proc/meminfo', 'utf8')]);
    const m = parseMeminfo(meminfo);
    const cg = await rootCgroupMemory(m);
    if (cg !== undefined) {
      const ws = Math.min(cg.workingSetBytes, m.totalBytes);
      return { cpuUsageCoreSeconds: parseProcStat(stat), memoryUsageBytes: cg.usageBytes, memoryWorkingSetBytes: ws, memoryAvailableBytes: m.totalBytes - ws };
    }
    return {
      cpuUsageCoreSeconds: parseProcStat(stat),
      memoryUsageBytes: m.totalBytes - m.freeBytes,
      memoryWorkingSetBytes: m.totalBytes - m.availableBytes,
      memoryAvailableBytes: m.availableBytes,
    };
  },
});
