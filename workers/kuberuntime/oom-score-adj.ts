/**
 * The container's oom_score_adj (the kubelet's GetContainerOOMScoreAdjust, pkg/kubelet/qos/policy.go),
 * set in LinuxContainerResources.oomScoreAdj:
 *
 *   node-critical pod (critical + priorityClassName system-node-critical)  → -997
 *   Guaranteed                                                            → -997
 *   BestEffort                                                            → 1000
 *   Burstable: 1000 − 1000 × memoryRequest / memoryCapacity (integer division), at least
 *              1000 + (−997) = 3, and 999 instead of 1000 (survives before BestEffort).
 *              A sidecar (restartable init container) scores no higher than the regular
 *              container with the smallest memory request: it uses that request when it is
 *              larger than its own (the kubelet's max(sidecar, min(regular containers))).
 *
 * A runtime may raise what it is given (containerd's restrict_oom_score_adj clamps it to its
 * own score). Pure.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { podQOSClass } from '../../src/shared/resources/pod-qos.js';
import { resourceAmounts } from '../../src/shared/resources/pod-requests.js';
import { isCriticalPod } from '../eviction/empty-dir-limits.js';

export const GUARANTEED_OOM_SCORE_ADJ = -997;
export const BESTEFFORT_OOM_SCORE_ADJ = 1000;
const SYSTEM_NODE_CRITICAL = 'system-node-critical';

function memoryRequest(c: V1Container): number {
  return resourceAmounts(c.resources?.requests).memoryBytes;
}

/** `memoryCapacityBytes`: the machine's memory capacity, a positive integer. */
export function containerOOMScoreAdjust(pod: V1Pod, container: V1Container, memoryCapacityBytes: number): number {
  if (!Number.isSafeInteger(memoryCapacityBytes) || memoryCapacityBytes <= 0) throw new RangeError(`memoryCapacityBytes must be a positive integer, got ${memoryCapacityBytes}`);
  if (isCriticalPod(pod) && pod.spec?.priorityClassName === SYSTEM_NODE_CRITICAL) return GUARANTEED_OOM_SCORE_ADJ;
  const qos = podQOSClass(pod);
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === 'BestEffort') return BESTEFFORT_OOM_SCORE_ADJ;
  let request = memoryRequest(container);
  if (container.restartPolicy === 'Always' && (pod.spec?.initContainers ?? []).includes(container)) {
    const regular = (pod.spec?.containers ?? []).map(memoryRequest);
    const min = regular.length > 0 ? Math.min(...regular) : 0;
    if (min > request) request = min;
  }
  // Exact integer division, as Go's int64 (the operands are non-negative integers).
  const adj = 1000 - Number((1000n * BigInt(request)) / BigInt(memoryCapacityBytes));
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}
