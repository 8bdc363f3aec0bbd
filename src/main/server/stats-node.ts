/**
 * Node-level CPU and memory for /stats/summary and /metrics/resource. The kubelet reads the root
 * cgroup through cAdvisor; shardlet reads the kernel's totals instead:
 * - CPU: /proc/stat's aggregate `cpu` line, every non-idle field (user, nice, system, irq,
 *   softirq, steal) in USER_HZ ticks (100/s on Linux) → core-seconds;
 * - memory: /proc/meminfo, usage = MemTotal − MemFree, working set = MemTotal − MemAvailable
 *   (what cannot be reclaimed, the closest figure to cAdvisor's usage − inactive_file),
 *   available = MemAvailable.
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

export const procNodeStats: NodeStatsReader = Object.freeze({
  async read(): Promise<NodeStats> {
    const [stat, meminfo] = await Promise.all([fs.promises.readFile('/proc/stat', 'utf8'), fs.promises.readFile('/proc/meminfo', 'utf8')]);
    const m = parseMeminfo(meminfo);
    return {
      cpuUsageCoreSeconds: parseProcStat(stat),
      memoryUsageBytes: m.totalBytes - m.freeBytes,
      memoryWorkingSetBytes: m.totalBytes - m.availableBytes,
      memoryAvailableBytes: m.availableBytes,
    };
  },
});
