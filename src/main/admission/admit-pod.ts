/**
 * Resource admission of a pod on this node: the kubelet's predicate admit handler
 * (pkg/kubelet/lifecycle/predicate.go) running the scheduler's NodeResourcesFit filter
 * (pkg/scheduler/framework/plugins/noderesources/fit.go `fitsRequest`). Same order, reasons and
 * messages, so `kubectl describe` shows what users expect:
 *
 *   1. pods:   active + 1 > maxPods              → OutOfpods
 *   2. (a pod requesting nothing else fits)
 *   3. cpu:    request > allocatable − used       → OutOfcpu     (millicores)
 *   4. memory: request > allocatable − used       → OutOfmemory  (bytes)
 *   5. ephemeral-storage, only when allocatable is known → OutOfephemeral-storage
 *
 *   message: "Node didn't have enough resource: <res>, requested: N, used: N, capacity: N"
 *
 * Only the first failure is returned (the kubelet reports reasons[0]). `activePods` must not
 * contain the pod being admitted. Differences from the kubelet, on purpose for now: no
 * critical-pod preemption (the kubelet evicts lower-priority pods to admit a static critical
 * pod), no extended/scalar resources, no node affinity/taint/port predicates.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podRequests, type ResourceAmounts } from '../../shared/resources/pod-requests.js';

export interface NodeAllocatable {
  cpuMillis: number;
  memoryBytes: number;
  /** Unset: ephemeral storage is not checked. */
  ephemeralStorageBytes?: number;
}

export type AdmitReason = 'OutOfpods' | 'OutOfcpu' | 'OutOfmemory' | 'OutOfephemeral-storage';

export type AdmitResult = { admit: true } | { admit: false; reason: AdmitReason; message: string };

function insufficient(resource: 'pods' | 'cpu' | 'memory' | 'ephemeral-storage', requested: number, used: number, capacity: number): AdmitResult {
  return {
    admit: false,
    reason: `OutOf${resource}`,
    message: `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
  };
}

/** Sum of the effective requests of `pods`. */
export function usedResources(pods: readonly V1Pod[]): ResourceAmounts {
  const used: ResourceAmounts = { cpuMillis: 0, memoryBytes: 0, ephemeralStorageBytes: 0 };
  for (const p of pods) {
    const r = podRequests(p);
    used.cpuMillis += r.cpuMillis;
    used.memoryBytes += r.memoryBytes;
    used.ephemeralStorageBytes += r.ephemeralStorageBytes;
  }
  return used;
}

/**
 * Decides whether `pod` fits next to `activePods`. For many admissions in a row, keep a running
 * `used` and call {@link admitWithUsage} instead of re-summing every active pod.
 */
export function admitPod(pod: V1Pod, activePods: readonly V1Pod[], node: NodeAllocatable, maxPods: number): AdmitResult {
  return admitWithUsage(pod, activePods.length, usedResources(activePods), node, maxPods);
}

/** {@link admitPod} with the active pods' count and summed requests precomputed. */
export function admitWithUsage(pod: V1Pod, activeCount: number, used: ResourceAmounts, node: NodeAllocatable, maxPods: number): AdmitResult {
  if (activeCount + 1 > maxPods) return insufficient('pods', 1, activeCount, maxPods);
  const req = podRequests(pod);
  if (req.cpuMillis === 0 && req.memoryBytes === 0 && req.ephemeralStorageBytes === 0) return { admit: true };
  if (req.cpuMillis > 0 && req.cpuMillis > node.cpuMillis - used.cpuMillis) {
    return insufficient('cpu', req.cpuMillis, used.cpuMillis, node.cpuMillis);
  }
  if (req.memoryBytes > 0 && req.memoryBytes > node.memoryBytes - used.memoryBytes) {
    return insufficient('memory', req.memoryBytes, used.memoryBytes, node.memoryBytes);
  }
  const eph = node.ephemeralStorageBytes;
  if (eph !== undefined && req.ephemeralStorageBytes > 0 && req.ephemeralStorageBytes > eph - used.ephemeralStorageBytes) {
    return insufficient('ephemeral-storage', req.ephemeralStorageBytes, used.ephemeralStorageBytes, eph);
  }
  return { admit: true };
}
