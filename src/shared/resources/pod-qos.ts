/**
 * The pod's QoS class (the kubelet's v1qos.GetPodQOS, considering cpu and memory only):
 * Guaranteed when every container (init included) has cpu and memory limits and the pod's summed
 * requests equal its summed limits (a request defaults to its limit, as the API server defaults
 * it); BestEffort when no container requests or limits either; Burstable otherwise.
 *
 * Shared by the pod workers (status.qosClass, pod cgroup, oom_score_adj) and the main thread
 * (the Burstable QoS cgroup's cpu shares). Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { parseApproximate } from './quantity.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'] as const;

export function podQOSClass(pod: V1Pod): QOSClass {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    const lim = c.resources?.limits ?? {};
    const req = c.resources?.requests ?? {};
    const limitsFound = new Set<string>();
    for (const name of QOS_RESOURCES) {
      const l = parseApproximate(lim[name]) ?? 0;
      // The API server defaults an absent request to the limit.
      const r = req[name] !== undefined ? (parseApproximate(req[name]) ?? 0) : l;
      if (r > 0) requests.set(name, (requests.get(name) ?? 0) + r);
      if (l > 0) {
        limitsFound.add(name);
        limits.set(name, (limits.get(name) ?? 0) + l);
      }
    }
    if (!QOS_RESOURCES.every((n) => limitsFound.has(n))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, r] of requests) {
      const l = limits.get(name);
      if (l === undefined || Math.abs(l - r) > 1e-9 * Math.max(1, l)) guaranteed = false;
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
