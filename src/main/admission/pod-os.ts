/**
 * The operating-system checks of the kubelet's predicate admit handler
 * (pkg/kubelet/lifecycle/predicate.go), which run before the resource fit ("the checks that
 * preemption will not help first"), in its order, with its reasons and messages:
 *   1. the pod's `kubernetes.io/os` LABEL (the kubelet reads pod.Labels, not the nodeSelector)
 *      differs from the node's OS → PodOSSelectorNodeLabelDoesNotMatch. The node's label is
 *      always taken as the node's OS (the kubelet overrides a missing or different one).
 *   2. `spec.os.name` set and not the node's OS → PodOSNotSupported.
 * shardlet runs Linux containers only: the node's OS is "linux". Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { AdmitResult } from '../syncloop/pod-admitter.js';

/** runtime.GOOS of the node (shardlet's CRI runtimes run Linux containers). */
export const NODE_OS = 'linux';
export const LABEL_OS_STABLE = 'kubernetes.io/os';

export const POD_OS_SELECTOR_MISMATCH_REASON = 'PodOSSelectorNodeLabelDoesNotMatch';
export const POD_OS_NOT_SUPPORTED_REASON = 'PodOSNotSupported';

export function admitPodOS(pod: V1Pod, nodeOS: string = NODE_OS): AdmitResult {
  const label = pod.metadata?.labels?.[LABEL_OS_STABLE];
  if (label !== undefined && label !== nodeOS) {
    return { admit: false, reason: POD_OS_SELECTOR_MISMATCH_REASON, message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label" };
  }
  const os = pod.spec?.os;
  if (os !== undefined && os !== null && os.name !== nodeOS) {
    return { admit: false, reason: POD_OS_NOT_SUPPORTED_REASON, message: "Failed to admit pod as the OS field doesn't match node OS" };
  }
  return { admit: true };
}
