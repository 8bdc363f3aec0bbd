/**
 * makeSignalObservations: the eviction signals read off a /stats/summary, as the kubelet reads
 * them (helpers.go, helpers_linux makeMemoryAvailableSignalObservation):
 *   memory.available    node.memory.availableBytes; capacity = available + workingSetBytes
 *   nodefs.available    node.fs availableBytes / capacityBytes
 *   nodefs.inodesFree   node.fs inodesFree / inodes
 *   imagefs.available   node.runtime.imageFs availableBytes / capacityBytes
 *   imagefs.inodesFree  node.runtime.imageFs inodesFree / inodes
 *   pid.available       node.rlimit maxpid − curproc; capacity = maxpid
 * A signal whose figures are missing is not observed (its thresholds are then never met, and
 * the manager logs it). Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { FsStats } from '../gc/image-fs-stats.js';
import type { PodSummary, Summary } from '../server/stats-summary.js';
import type { Observation, Signal } from './eviction-thresholds.js';
import type { StatsOf } from './eviction-ranking.js';

function timeOf(iso: string | undefined): number | undefined {
  if (iso === undefined) return undefined;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : undefined;
}

function put(out: Map<Signal, Observation>, s: Signal, available: number | undefined, capacity: number | undefined, time: string | undefined): void {
  if (available === undefined || capacity === undefined) return;
  const o: Observation = { available, capacity };
  const t = timeOf(time);
  if (t !== undefined) o.timeMs = t;
  out.set(s, o);
}

function fsSignals(out: Map<Signal, Observation>, fs: FsStats | undefined, bytes: Signal, inodes: Signal): void {
  if (fs === undefined) return;
  put(out, bytes, fs.availableBytes, fs.capacityBytes, fs.time);
  put(out, inodes, fs.inodesFree, fs.inodes, fs.time);
}

export function signalObservations(summary: Summary): Map<Signal, Observation> {
  const out = new Map<Signal, Observation>();
  const m = summary.node.memory;
  if (m.availableBytes !== undefined && m.workingSetBytes !== undefined) put(out, 'memory.available', m.availableBytes, m.availableBytes + m.workingSetBytes, m.time);
  fsSignals(out, summary.node.fs, 'nodefs.available', 'nodefs.inodesFree');
  fsSignals(out, summary.node.runtime?.imageFs, 'imagefs.available', 'imagefs.inodesFree');
  const r = summary.node.rlimit;
  if (r?.maxpid !== undefined && r.curproc !== undefined) put(out, 'pid.available', r.maxpid - r.curproc, r.maxpid, r.time);
  return out;
}

/** cachedStatsFunc: a pod's summary entry by UID. */
export function statsByUid(summary: Summary): StatsOf {
  const byUid = new Map<string, PodSummary>();
  for (const p of summary.pods) byUid.set(p.podRef.uid, p);
  return (pod: V1Pod) => byUid.get(pod.metadata?.uid ?? '');
}
