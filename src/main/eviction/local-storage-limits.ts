/**
 * The pod and container `ephemeral-storage` limit checks of the kubelet's localStorageEviction
 * (eviction_manager.go podEphemeralStorageLimitEviction, containerEphemeralStorageLimitEviction),
 * decided from a pod's spec and its /stats/summary entry. Pure.
 *
 *   pod        the pod's ephemeral-storage limit (containers summed as PodLimits sums them) is
 *              exceeded by the pod's `ephemeral-storage` usage (every container's writable layer
 *              + logs): "Pod ephemeral local storage usage exceeds the total limit of containers L. "
 *   container  a container's writable layer + logs exceed its own limit:
 *              "Container c exceeded its local ephemeral storage limit \"L\". "
 * The emptyDir sizeLimit check, the first of the three in the kubelet, runs on the pod-worker
 * threads (workers/eviction/empty-dir-eviction.ts), next to the volumes it measures.
 * Signals (kubelet_evictions{eviction_signal}): ephemeralpodfs.limit, ephemeralcontainerfs.limit.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podLimits } from '../../shared/resources/pod-requests.js';
import { parseQuantity, unitValue } from '../../shared/resources/quantity.js';
import type { PodSummary } from '../server/stats-summary.js';
import { formatOfText, formatQuantity } from './eviction-quantity.js';

export const SIGNAL_EPHEMERAL_POD_FS_LIMIT = 'ephemeralpodfs.limit';
export const SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT = 'ephemeralcontainerfs.limit';

export interface LocalStorageViolation {
  signal: typeof SIGNAL_EPHEMERAL_POD_FS_LIMIT | typeof SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT;
  message: string;
}

/** Whether any container of the pod declares an ephemeral-storage limit (nothing to check otherwise). */
export function hasEphemeralStorageLimit(pod: V1Pod): boolean {
  const all = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  return all.some((c) => c.resources?.limits?.['ephemeral-storage'] !== undefined);
}

export function localStorageViolation(pod: V1Pod, stats: PodSummary): LocalStorageViolation | undefined {
  if (!hasEphemeralStorageLimit(pod)) return undefined;
  // Pod: the summed limit against the pod's total usage.
  const limit = podLimits(pod).limits.ephemeralStorageBytes;
  const used = stats['ephemeral-storage']?.usedBytes ?? 0;
  const firstText = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].map((c) => c.resources?.limits?.['ephemeral-storage']).find((v) => v !== undefined);
  if (used > limit) {
    return { signal: SIGNAL_EPHEMERAL_POD_FS_LIMIT, message: `Pod ephemeral local storage usage exceeds the total limit of containers ${formatQuantity(limit, formatOfText(String(firstText ?? '')))}. ` };
  }
  // Containers (regular ones, as the kubelet's loop): writable layer + logs against the own limit.
  const limits = new Map<string, { bytes: number; text: string }>();
  for (const c of pod.spec?.containers ?? []) {
    const raw: unknown = c.resources?.limits?.['ephemeral-storage'];
    const q = parseQuantity(raw);
    if (q === undefined) continue;
    const bytes = unitValue(q);
    if (bytes !== 0) limits.set(c.name, { bytes, text: formatQuantity(bytes, formatOfText(String(raw))) });
  }
  for (const cs of stats.containers) {
    const l = limits.get(cs.name);
    if (l === undefined) continue;
    const usedC = (cs.logs?.usedBytes ?? 0) + (cs.rootfs?.usedBytes ?? 0);
    if (usedC > l.bytes) return { signal: SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT, message: `Container ${cs.name} exceeded its local ephemeral storage limit ${JSON.stringify(l.text)}. ` };
  }
  return undefined;
}
