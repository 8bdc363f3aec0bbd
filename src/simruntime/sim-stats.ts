/**
 * Plausible, deterministic resource statistics for ListContainerStats / ListPodSandboxStats:
 * a running container uses 2 ms of CPU per second it has run (0.2% of a core) and a stable
 * working set of 1–8 MiB derived from its id, or what a test set (workingSetOf); a sandbox adds
 * the pause container's 0.5 MiB.
 * Only running containers and ready sandboxes report stats (containerd reports what has a task).
 * Message shapes follow the proto (uint64 as decimal strings, wrapped in {value}).
 */
import type { ContainerRecord, SandboxRecord } from './sim-state.js';
import { msToNs } from './sim-views.js';
import { writableLayerBytes } from './sim-image-fs.js';
import { simNumber } from './sim-annotations.js';

const CPU_NS_PER_RUNNING_MS = 2_000; // 2 ms CPU per s

/** Set usage, else the `memory-working-set-bytes` annotation, else 1–8 MiB derived from the id. */
export function workingSetOf(c: ContainerRecord): number {
  if (c.usage?.workingSetBytes !== undefined) return c.usage.workingSetBytes;
  const n = simNumber({ own: c.config.annotations, pod: c.sandboxAnnotations, containerName: c.config.metadata?.name ?? '' }, 'memory-working-set-bytes');
  if (n !== undefined && Number.isSafeInteger(n)) return n;
  return (1 + (Number.parseInt(c.id.slice(0, 6), 16) % 8)) * 1024 * 1024;
}

export function containerStatsOf(c: ContainerRecord, nowMs: number): unknown {
  const ts = msToNs(nowMs);
  const runMs = Math.max(0, nowMs - c.startedAtMs);
  const ws = workingSetOf(c);
  return {
    attributes: { id: c.id, metadata: { ...c.config.metadata }, labels: { ...c.config.labels }, annotations: { ...c.config.annotations } },
    cpu: { timestamp: ts, usageCoreNanoSeconds: { value: String(Math.round(runMs * CPU_NS_PER_RUNNING_MS)) }, usageNanoCores: { value: '2000000' } },
    memory: {
      timestamp: ts,
      workingSetBytes: { value: String(ws) },
      usageBytes: { value: String(ws + 262_144) },
      rssBytes: { value: String(Math.floor(ws * 0.75)) },
      pageFaults: { value: '1200' },
      majorPageFaults: { value: '0' },
    },
    writableLayer: { timestamp: ts, fsId: { mountpoint: '/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs' }, usedBytes: { value: String(writableLayerBytes(c)) }, inodesUsed: { value: '3' } },
  };
}

export function sandboxStatsOf(s: SandboxRecord, containers: ContainerRecord[], nowMs: number): unknown {
  const ts = msToNs(nowMs);
  const running = containers.filter((c) => c.state === 'CONTAINER_RUNNING');
  const cStats = running.map((c) => containerStatsOf(c, nowMs));
  const cpu = running.reduce((sum, c) => sum + Math.max(0, nowMs - c.startedAtMs) * CPU_NS_PER_RUNNING_MS, 0);
  const mem = running.reduce((sum, c) => sum + workingSetOf(c), 512 * 1024);
  return {
    attributes: { id: s.id, metadata: { ...s.config.metadata }, labels: { ...s.config.labels }, annotations: { ...s.config.annotations } },
    linux: {
      cpu: { timestamp: ts, usageCoreNanoSeconds: { value: String(Math.round(cpu)) } },
      memory: { timestamp: ts, workingSetBytes: { value: String(mem) } },
      network: { timestamp: ts, defaultInterface: { name: 'eth0', rxBytes: { value: '0' }, rxErrors: { value: '0' }, txBytes: { value: '0' }, txErrors: { value: '0' } }, interfaces: [] },
      process: { timestamp: ts, processCount: { value: String(1 + running.length) } },
      containers: cStats,
    },
  };
}
