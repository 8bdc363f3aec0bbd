/**
 * A pod's effective resource requests, as the scheduler and the kubelet's admission compute them
 * (k8s.io/component-helpers/resource `PodRequests`). The formula lives in
 * src/shared/resources/pod-resource-totals.ts (worker threads need the pod's limits from it).
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { addResources as add, maxResources as max, podResourceTotals, resourceAmounts, ZERO_RESOURCES, type ResourceAmounts } from './pod-resource-totals.js';

export { resourceAmounts, ZERO_RESOURCES, type ResourceAmounts } from './pod-resource-totals.js';

/** The pod's effective requests (pod-resource-totals.ts has the formula). */
export function podRequests(pod: V1Pod): ResourceAmounts {
  return podResourceTotals(pod, 'requests');
}

/**
 * The pod's effective cpu and memory limits (k8s.io/component-helpers/resource `PodLimits`, the
 * same aggregation as requests), and whether EVERY container, init containers included, declares
 * a non-zero cpu / memory limit (its ContainerFn's cpuLimitsDeclared / memoryLimitsDeclared, which
 * the kubelet's ResourceConfigForPod needs). spec.overhead is added to non-zero limits only.
 */
export interface PodLimits {
  limits: ResourceAmounts;
  cpuLimitsDeclared: boolean;
  memoryLimitsDeclared: boolean;
}

export function podLimits(pod: V1Pod): PodLimits {
  const spec = pod.spec;
  let cpuLimitsDeclared = true;
  let memoryLimitsDeclared = true;
  const limitsOf = (c: V1Container): ResourceAmounts => {
    const l = resourceAmounts(c.resources?.limits);
    if (l.cpuMillis === 0) cpuLimitsDeclared = false;
    if (l.memoryBytes === 0) memoryLimitsDeclared = false;
    return l;
  };
  let app: ResourceAmounts = { ...ZERO_RESOURCES };
  for (const c of spec?.containers ?? []) app = add(app, limitsOf(c));
  let sidecars: ResourceAmounts = { ...ZERO_RESOURCES };
  let init: ResourceAmounts = { ...ZERO_RESOURCES };
  for (const c of spec?.initContainers ?? []) {
    const l = limitsOf(c);
    if (c.restartPolicy === 'Always') {
      app = add(app, l);
      sidecars = add(sidecars, l);
      init = max(init, sidecars);
    } else {
      init = max(init, add(l, sidecars));
    }
  }
  let limits = max(app, init);
  if (spec?.overhead !== undefined) {
    const o = resourceAmounts(spec.overhead);
    limits = {
      cpuMillis: limits.cpuMillis > 0 ? limits.cpuMillis + o.cpuMillis : 0,
      memoryBytes: limits.memoryBytes > 0 ? limits.memoryBytes + o.memoryBytes : 0,
      ephemeralStorageBytes: limits.ephemeralStorageBytes > 0 ? limits.ephemeralStorageBytes + o.ephemeralStorageBytes : 0,
    };
  }
  return { limits, cpuLimitsDeclared, memoryLimitsDeclared };
}
