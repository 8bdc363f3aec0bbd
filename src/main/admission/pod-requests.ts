/**
 * A pod's effective resource requests, as the scheduler and the kubelet's admission compute them
 * (k8s.io/component-helpers/resource `PodRequests`). The formula lives in
 * src/shared/resources/pod-resource-totals.ts (worker threads need the pod's limits from it).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podResourceTotals, type ResourceAmounts } from '../../shared/resources/pod-resource-totals.js';

export { resourceAmounts, ZERO_RESOURCES, type ResourceAmounts } from '../../shared/resources/pod-resource-totals.js';

/** The pod's effective requests (pod-resource-totals.ts has the formula). */
export function podRequests(pod: V1Pod): ResourceAmounts {
  return podResourceTotals(pod, 'requests');
}
