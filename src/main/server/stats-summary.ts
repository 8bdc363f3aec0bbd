/**
 * The Summary API (/stats/summary, stats/v1alpha1) built from CRI stats, as the kubelet's CRI
 * stats provider does: per pod, ListPodSandboxStats (pod CPU and memory) and ListContainerStats
 * (per container), container start times from ListContainers' createdAt; node figures from
 * stats-node.ts. Every pod the agent manages is listed — one the runtime has no stats for yet
 * (being created, or its runtime does not report them) appears with its reference and start time
 * only. Figures are copied, never invented: a missing CRI field is left out of the JSON.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../shared/clock/clock.js';
import type { ContainerStats, PodSandboxStats } from '../../shared/cri/cri-types.js';
import type { RuntimeService } from '../../shared/cri/runtime-service.js';
import { KubernetesContainerNameLabel, KubernetesPodUIDLabel } from '../../shared/kubetypes/kubelet-labels.js';
import type { NodeStats, NodeStatsReader } from './stats-node.js';
import type { FsStats } from '../gc/image-fs-stats.js';
import { containerLogsUsage, rootfsOf, type RlimitStats } from './stats-summary-fs.js';

export interface CpuStats {
  time: string;
  usageCoreNanoSeconds?: number;
  usageNanoCores?: number;
}

export interface MemoryStats {
  time: string;
  workingSetBytes?: number;
  usageBytes?: number;
  rssBytes?: number;
  availableBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface ContainerSummary {
  name: string;
  startTime: string;
  cpu?: CpuStats;
  memory?: MemoryStats;
  /** The writable layer (stats-summary-fs.ts). */
  rootfs?: FsStats;
  /** The container's log files. */
  logs?: FsStats;
}

export interface PodSummary {
  podRef: { name: string; namespace: string; uid: string };
  startTime: string;
  containers: ContainerSummary[];
  cpu?: CpuStats;
  memory?: MemoryStats;
  /** The pod's process count (stats/v1alpha1 ProcessStats), where the runtime reports it. */
  process_stats?: { process_count?: number };
  /** rootfs + logs of the pod's containers (the kubelet's pod ephemeral-storage). */
  'ephemeral-storage'?: FsStats;
}

export interface Summary {
  node: { nodeName: string; startTime: string; cpu: CpuStats; memory: MemoryStats; fs?: FsStats; systemContainers: []; runtime?: RuntimeFsStats; rlimit?: RlimitStats };
  pods: PodSummary[];
}

/** node.runtime: the image filesystem and the containers' writable layers (image-fs-stats.ts). */
export interface RuntimeFsStats {
  imageFs: FsStats;
  containerFs: FsStats;
}

type StatsRuntime = Pick<RuntimeService, 'listContainerStats' | 'listPodSandboxStats' | 'listContainers'>;

export interface SummaryProviderOptions {
  runtime: StatsRuntime;
  pods: () => readonly V1Pod[];
  node: NodeStatsReader;
  nodeName: string;
  clock: Clock;
  /** Wall-clock ms the node (agent) started: the node's startTime. */
  startedAtMs: number;
  /** node.runtime's figures; absent, or failing (logged by the caller), leaves node.runtime out. */
  runtimeFs?: () => Promise<RuntimeFsStats | undefined>;
  /** Where container logs live: with it, containers get `logs` and pods `ephemeral-storage`. */
  podLogsDir?: string;
  /** node.fs (the root directory's filesystem); absent or failing leaves it out. */
  nodeFs?: () => Promise<FsStats | undefined>;
  /** node.rlimit; absent or failing leaves it out. */
  rlimit?: () => Promise<RlimitStats | undefined>;
  /** Told once when ListPodSandboxStats fails (pod figures then sum the containers'). */
  onSandboxStatsError?: (err: unknown) => void;
}

function num(v: { value?: unknown } | null | undefined): number | undefined {
  const raw = v?.value;
  if (raw === undefined || raw === null) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

function nsToIso(ns: string | undefined): string | undefined {
  if (ns === undefined || ns === '' || ns === '0') return undefined;
  const ms = Number(BigInt(ns) / 1_000_000n);
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace('.000Z', 'Z') : undefined;
}

function isoOf(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function cpuOf(cpu: unknown, time: string): CpuStats | undefined {
  if (typeof cpu !== 'object' || cpu === null) return undefined;
  const c = cpu as { usageCoreNanoSeconds?: { value?: unknown } | null; usageNanoCores?: { value?: unknown } | null };
  const out: CpuStats = { time };
  const total = num(c.usageCoreNanoSeconds);
  const rate = num(c.usageNanoCores);
  if (total !== undefined) out.usageCoreNanoSeconds = total;
  if (rate !== undefined) out.usageNanoCores = rate;
  return out;
}

function memoryOf(mem: unknown, time: string): MemoryStats | undefined {
  if (typeof mem !== 'object' || mem === null) return undefined;
  const m = mem as Record<string, { value?: unknown } | null | undefined>;
  const out: MemoryStats = { time };
  for (const k of ['workingSetBytes', 'usageBytes', 'rssBytes', 'availableBytes', 'pageFaults', 'majorPageFaults'] as const) {
    const v = num(m[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

export class SummaryProvider {
  readonly #o: SummaryProviderOptions;
  #sandboxStatsWarned = false;

  constructor(opts: SummaryProviderOptions) {
    for (const k of ['runtime', 'pods', 'node', 'clock'] as const) if (!opts?.[k]) throw new TypeError(`SummaryProvider: ${k} is required`);
    this.#o = opts;
  }

  async summary(): Promise<Summary> {
    const o = this.#o;
    const time = isoOf(o.clock.now());
    const [sandboxStats, containerStats, containers, node, runtimeFs, nodeFs, rlimit] = await Promise.all([
      // Runtimes without pod-level stats (containerd 1.6 answers Unimplemented): pod figures are
      // then the sum of the pod's containers (see below).
      o.runtime.listPodSandboxStats().catch((err: unknown) => {
        if (!this.#sandboxStatsWarned) {
          this.#sandboxStatsWarned = true;
          o.onSandboxStatsError?.(err);
        }
        return [] as PodSandboxStats[];
      }),
      o.runtime.listContainerStats(),
      o.runtime.listContainers({ state: { state: 'CONTAINER_RUNNING' } }),
      o.node.read(),
      o.runtimeFs?.().catch(() => undefined),
      o.nodeFs?.().catch(() => undefined),
      o.rlimit?.().catch(() => undefined),
    ]);
    const startedNs = new Map(containers.map((c) => [c.id, c.createdAt]));
    const sandboxByUid = new Map<string, PodSandboxStats>();
    for (const s of sandboxStats) {
      const uid = s.attributes?.metadata?.uid;
      if (uid) sandboxByUid.set(uid, s);
    }
    const containersByUid = new Map<string, ContainerStats[]>();
    for (const c of containerStats) {
      const uid = c.attributes?.labels?.[KubernetesPodUIDLabel];
      if (!uid) continue;
      const list = containersByUid.get(uid) ?? [];
      list.push(c);
      containersByUid.set(uid, list);
    }
    const pods: PodSummary[] = [];
    for (const pod of o.pods()) {
      const uid = pod.metadata?.uid ?? '';
      const podStart = pod.status?.startTime ? isoOf(new Date(pod.status.startTime).getTime()) : time;
      const entry: PodSummary = {
        podRef: { name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', uid },
        startTime: podStart,
        containers: (containersByUid.get(uid) ?? []).map((c) => {
          const cs: ContainerSummary = {
            name: c.attributes?.metadata?.name ?? c.attributes?.labels?.[KubernetesContainerNameLabel] ?? '',
            startTime: nsToIso(startedNs.get(c.attributes?.id ?? '')) ?? podStart,
          };
          const cpu = cpuOf(c.cpu, time);
          const memory = memoryOf(c.memory, time);
          if (cpu) cs.cpu = cpu;
          if (memory) cs.memory = memory;
          const rootfs = rootfsOf(c, time);
          if (rootfs) cs.rootfs = rootfs;
          return cs;
        }),
      };
      if (o.podLogsDir !== undefined) await this.#addStorage(entry, o.podLogsDir, time);
      const sandbox = sandboxByUid.get(uid);
      if (sandbox !== undefined) {
        const linux = sandbox.linux as { cpu?: unknown; memory?: unknown; process?: { processCount?: { value?: unknown } | null } | null } | undefined;
        const podCpu = cpuOf(linux?.cpu, time);
        const podMem = memoryOf(linux?.memory, time);
        if (podCpu) entry.cpu = podCpu;
        if (podMem) entry.memory = podMem;
        const procs = num(linux?.process?.processCount);
        if (procs !== undefined) entry.process_stats = { process_count: procs };
      } else if (entry.containers.length > 0) {
        // No sandbox stats: the pod's figures are its containers' sums (what cgroup totals would
        // show, less the pause container's few hundred KiB).
        entry.cpu = { time, usageCoreNanoSeconds: entry.containers.reduce((a, c) => a + (c.cpu?.usageCoreNanoSeconds ?? 0), 0) };
        entry.memory = { time, workingSetBytes: entry.containers.reduce((a, c) => a + (c.memory?.workingSetBytes ?? 0), 0) };
      }
      pods.push(entry);
    }
    const nodeOut = nodeSummary(o, node, time);
    if (nodeFs !== undefined) nodeOut.fs = nodeFs;
    if (runtimeFs !== undefined) nodeOut.runtime = runtimeFs;
    if (rlimit !== undefined) nodeOut.rlimit = rlimit;
    return { node: nodeOut, pods };
  }

  /** Each container's `logs`, and the pod's `ephemeral-storage` = Σ (rootfs + logs). */
  async #addStorage(entry: PodSummary, podLogsDir: string, time: string): Promise<void> {
    const { namespace, name, uid } = entry.podRef;
    let used = 0;
    let inodes = 0;
    for (const c of entry.containers) {
      const logs = await containerLogsUsage(podLogsDir, namespace, name, uid, c.name);
      if (logs !== undefined) {
        c.logs = { time, ...logs };
        used += logs.usedBytes;
        inodes += logs.inodesUsed;
      }
      used += c.rootfs?.usedBytes ?? 0;
      inodes += c.rootfs?.inodesUsed ?? 0;
    }
    entry['ephemeral-storage'] = { time, usedBytes: used, inodesUsed: inodes };
  }
}

function nodeSummary(o: SummaryProviderOptions, n: NodeStats, time: string): Summary['node'] {
  return {
    nodeName: o.nodeName,
    startTime: isoOf(o.startedAtMs),
    cpu: { time, usageCoreNanoSeconds: Math.round(n.cpuUsageCoreSeconds * 1e9) },
    memory: { time, usageBytes: n.memoryUsageBytes, workingSetBytes: n.memoryWorkingSetBytes, availableBytes: n.memoryAvailableBytes },
    systemContainers: [],
  };
}
