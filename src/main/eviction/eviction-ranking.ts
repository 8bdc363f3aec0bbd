/**
 * Which pod goes first, and what its status message says: the kubelet's rank functions and
 * evictionMessage (pkg/kubelet/eviction/helpers.go), over /stats/summary pod figures.
 *
 *   memory    rankMemoryPressure: pods whose working set exceeds their memory request first
 *             (and pods with no stats before any), then lower priority first, then the larger
 *             working set above the request first.
 *   disk      rankDiskPressureFunc: the same with the pod's disk usage of the measured kinds
 *             (rootfs, logs; images are not per pod) against its ephemeral-storage request, or
 *             inodes against 0.
 *   pids      rankPIDPressure: lower priority first, then more processes first.
 * Sorts are stable (Go's sort.Sort is not; equal pods keep the active-pods order here).
 * Pure.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { podRequests } from '../../shared/resources/pod-requests.js';
import { parseQuantity, unitValue } from '../../shared/resources/quantity.js';
import type { PodSummary } from '../server/stats-summary.js';
import { formatOfText, formatQuantity } from './eviction-quantity.js';
import { formatThresholdQuantity, SIGNAL_RESOURCE, type Observations, type Signal, type StarvedResource, type Threshold } from './eviction-thresholds.js';

export type StatsOf = (pod: V1Pod) => PodSummary | undefined;

/** Which per-container figures a disk signal counts (fsStatsType). */
export type FsStatsKind = 'root' | 'logs';

type Cmp = (a: V1Pod, b: V1Pod) => number;

/** cmpBool: true before false. */
function cmpBool(a: boolean, b: boolean): number {
  return a === b ? 0 : a ? -1 : 1;
}

function orderedBy(pods: V1Pod[], ...cmps: Cmp[]): V1Pod[] {
  return pods
    .map((p, i) => ({ p, i }))
    .sort((x, y) => {
      for (const c of cmps) {
        const r = c(x.p, y.p);
        if (r !== 0) return r;
      }
      return x.i - y.i;
    })
    .map((e) => e.p);
}

export function podPriority(p: V1Pod): number {
  const v = p.spec?.priority;
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** priority: lower first. */
const priority: Cmp = (a, b) => Math.sign(podPriority(a) - podPriority(b));

/** Both pods' stats, or a comparison that puts a pod without stats first. */
function withStats(stats: StatsOf, a: V1Pod, b: V1Pod, f: (sa: PodSummary, sb: PodSummary) => number): number {
  const sa = stats(a);
  const sb = stats(b);
  if (sa === undefined || sb === undefined) return cmpBool(sa === undefined, sb === undefined);
  return f(sa, sb);
}

function workingSet(s: PodSummary): number {
  return s.memory?.workingSetBytes ?? 0;
}

export function rankMemoryPressure(pods: readonly V1Pod[], stats: StatsOf): V1Pod[] {
  const exceeds: Cmp = (a, b) => withStats(stats, a, b, (sa, sb) => cmpBool(workingSet(sa) > podRequests(a).memoryBytes, workingSet(sb) > podRequests(b).memoryBytes));
  const memory: Cmp = (a, b) => withStats(stats, a, b, (sa, sb) => Math.sign((workingSet(sb) - podRequests(b).memoryBytes) - (workingSet(sa) - podRequests(a).memoryBytes)));
  return orderedBy([...pods], exceeds, priority, memory);
}

/** podDiskUsage over the measured kinds: [bytes, inodes]. */
export function podDiskUsage(s: PodSummary, kinds: readonly FsStatsKind[]): { bytes: number; inodes: number } {
  let bytes = 0;
  let inodes = 0;
  for (const c of s.containers) {
    if (kinds.includes('root')) {
      bytes += c.rootfs?.usedBytes ?? 0;
      inodes += c.rootfs?.inodesUsed ?? 0;
    }
    if (kinds.includes('logs')) {
      bytes += c.logs?.usedBytes ?? 0;
      inodes += c.logs?.inodesUsed ?? 0;
    }
  }
  return { bytes, inodes };
}

export function rankDiskPressure(pods: readonly V1Pod[], stats: StatsOf, kinds: readonly FsStatsKind[], resource: 'ephemeral-storage' | 'inodes'): V1Pod[] {
  const usage = (s: PodSummary): number => (resource === 'inodes' ? podDiskUsage(s, kinds).inodes : podDiskUsage(s, kinds).bytes);
  const request = (p: V1Pod): number => (resource === 'inodes' ? 0 : podRequests(p).ephemeralStorageBytes);
  const exceeds: Cmp = (a, b) => withStats(stats, a, b, (sa, sb) => cmpBool(usage(sa) > request(a), usage(sb) > request(b)));
  // (the kubelet subtracts the ephemeral-storage request for inodes too; it is the same request)
  const disk: Cmp = (a, b) => withStats(stats, a, b, (sa, sb) => Math.sign((usage(sb) - podRequests(b).ephemeralStorageBytes) - (usage(sa) - podRequests(a).ephemeralStorageBytes)));
  return orderedBy([...pods], exceeds, priority, disk);
}

export function rankPidPressure(pods: readonly V1Pod[], stats: StatsOf): V1Pod[] {
  const procs = (s: PodSummary | undefined): number => s?.process_stats?.process_count ?? 0;
  const process: Cmp = (a, b) => withStats(stats, a, b, (sa, sb) => Math.sign(procs(sb) - procs(sa)));
  return orderedBy([...pods], priority, process);
}

/**
 * The rank function of a signal (buildSignalToRankFunc). shardlet has no separate image
 * filesystem detection for ranking: images, writable layers and logs share the node
 * filesystem (the kubelet's "without an imagefs" case), so every disk signal counts rootfs
 * and logs.
 */
export function rankFor(signal: Signal): (pods: readonly V1Pod[], stats: StatsOf) => V1Pod[] {
  switch (SIGNAL_RESOURCE[signal]) {
    case 'memory':
      return rankMemoryPressure;
    case 'pids':
      return rankPidPressure;
    case 'ephemeral-storage':
      return (pods, stats) => rankDiskPressure(pods, stats, ['root', 'logs'], 'ephemeral-storage');
    case 'inodes':
      return (pods, stats) => rankDiskPressure(pods, stats, ['root', 'logs'], 'inodes');
    default: {
      const never: never = SIGNAL_RESOURCE[signal];
      throw new TypeError(`no rank function for ${String(never)}`);
    }
  }
}

/** A container's request of the resource as Quantity.String() prints it ("0" when absent). */
function requestText(c: V1Container, resource: StarvedResource): { bytes: number; text: string } {
  const raw: unknown = c.resources?.requests?.[resource];
  const q = parseQuantity(raw);
  if (q === undefined) return { bytes: 0, text: '0' };
  const bytes = unitValue(q);
  return { bytes, text: formatQuantity(bytes, formatOfText(String(raw))) };
}

/**
 * evictionMessage: "The node was low on resource: R. Threshold quantity: Q, available: A. "
 * then, for memory and ephemeral-storage, one "Container c was using U, request is Q, has
 * larger consumption of R. " per container whose usage exceeds its request (regular, then
 * init containers, in the pod's stats order).
 */
export function evictionMessage(resource: StarvedResource, pod: V1Pod, stats: StatsOf, thresholds: readonly Threshold[], obs: Observations): string {
  let message = `The node was low on resource: ${resource}. `;
  for (const t of thresholds) {
    if (SIGNAL_RESOURCE[t.signal] !== resource) continue;
    const o = obs.get(t.signal);
    if (o === undefined) continue;
    const fmt = resource === 'memory' || resource === 'ephemeral-storage' ? 'BinarySI' : 'DecimalSI';
    message += `Threshold quantity: ${formatThresholdQuantity(t, o.capacity)}, available: ${formatQuantity(o.available, fmt)}. `;
    break;
  }
  const s = stats(pod);
  if (s === undefined) return message;
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  for (const cs of s.containers) {
    const c = containers.find((x) => x.name === cs.name);
    if (c === undefined) continue;
    let usage: number | undefined;
    if (resource === 'memory') usage = cs.memory?.workingSetBytes;
    else if (resource === 'ephemeral-storage' && cs.rootfs?.usedBytes !== undefined && cs.logs?.usedBytes !== undefined) usage = cs.rootfs.usedBytes + cs.logs.usedBytes;
    if (usage === undefined) continue;
    const req = requestText(c, resource);
    if (usage > req.bytes) message += `Container ${c.name} was using ${formatQuantity(usage, 'BinarySI')}, request is ${req.text}, has larger consumption of ${resource}. `;
  }
  return message;
}
