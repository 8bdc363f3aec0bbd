/**
 * Resource fields of a pod spec shardlet does not implement, refused at admission with a
 * message naming the field (never dropped silently). Checked before the resource fit:
 *
 *   spec.resources                      pod-level resources (PodLevelResources): the pod cgroup
 *                                       would have to take its limits from there; shardlet sums
 *                                       the containers' instead
 *   spec.resourceClaims,
 *   <container>.resources.claims        dynamic resource allocation (no DRA driver support)
 *   <container>.resources.*[hugepages-*] huge pages (no hugetlb limits are written)
 *   <container>.resources.*[<other>]    extended resources (no device plugins: the node
 *                                       advertises none, so the kubelet's fit would fail too)
 *
 * Honoured: cpu, memory and ephemeral-storage requests/limits and spec.overhead (pod cgroup,
 * QoS class, oom_score_adj, admission; ephemeral-storage limits are enforced by eviction:
 * src/main/eviction/local-storage-limits.ts). The reason string is shardlet's (the kubelet has none
 * for features it lacks). Pure.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { AdmitResult } from '../syncloop/pod-admitter.js';

export const UNSUPPORTED_POD_SPEC_REASON = 'UnsupportedPodSpec';

const HONOURED = new Set(['cpu', 'memory', 'ephemeral-storage']);

function refuse(field: string, why: string): AdmitResult {
  return { admit: false, reason: UNSUPPORTED_POD_SPEC_REASON, message: `${field}: ${why}` };
}

function nonEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

function checkContainer(c: V1Container, field: string): AdmitResult | undefined {
  const res = c.resources;
  if (res === undefined || res === null) return undefined;
  if (nonEmpty(res.claims)) return refuse(`${field}.resources.claims`, 'dynamic resource allocation (resource claims) is not supported by shardlet');
  for (const kind of ['limits', 'requests'] as const) {
    for (const name of Object.keys(res[kind] ?? {})) {
      if (HONOURED.has(name)) continue;
      const f = `${field}.resources.${kind}[${name.slice(0, 253)}]`;
      if (name.startsWith('hugepages-')) return refuse(f, 'huge pages are not supported by shardlet');
      return refuse(f, 'extended resources are not supported by shardlet (the node advertises none)');
    }
  }
  return undefined;
}

export function admitResourceFields(pod: V1Pod): AdmitResult {
  const spec = pod.spec;
  if (spec === undefined) return { admit: true };
  if (nonEmpty(spec.resources)) return refuse('spec.resources', 'pod-level resources are not supported by shardlet; set resources on each container');
  if (nonEmpty(spec.resourceClaims)) return refuse('spec.resourceClaims', 'dynamic resource allocation (resource claims) is not supported by shardlet');
  for (const [key, list] of [['initContainers', spec.initContainers], ['containers', spec.containers]] as const) {
    for (const [i, c] of (list ?? []).entries()) {
      const r = checkContainer(c, `spec.${key}[${i}]`);
      if (r) return r;
    }
  }
  return { admit: true };
}
