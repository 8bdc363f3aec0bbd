/**
 * A pod's effective resource requests and limits, as the scheduler and the kubelet compute them
 * (k8s.io/component-helpers/resource `PodRequests` / `PodLimits`):
 *
 *   app     = Σ amounts of regular containers
 *   sidecar = Σ amounts of restartable init containers (restartPolicy: Always), which keep
 *             running next to the app containers
 *   init    = max over regular init containers i of (amount_i + Σ sidecars started before i)
 *   pod     = max(app + sidecar, init) + spec.overhead
 *
 * Pod-level resources (spec.resources.requests / .limits, the PodLevelResources feature) replace
 * the container sum for the resources they name. Invalid quantities count as 0 (manifests are
 * validated before they get here). Used by admission on the main thread (requests) and by the
 * memory-medium emptyDir on worker threads (the pod's memory limit), hence shared.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { milliValue, parseQuantity, unitValue } from './quantity.js';

/** cpu in millicores, memory and ephemeral-storage in bytes. */
export interface ResourceAmounts {
  cpuMillis: number;
  memoryBytes: number;
  ephemeralStorageBytes: number;
}

export const ZERO_RESOURCES: Readonly<ResourceAmounts> = Object.freeze({ cpuMillis: 0, memoryBytes: 0, ephemeralStorageBytes: 0 });

type ResourceList = Readonly<Record<string, unknown>> | undefined;
export type ResourceKind = 'requests' | 'limits';

/** Reads cpu/memory/ephemeral-storage from a resource list (requests or limits). */
export function resourceAmounts(list: ResourceList): ResourceAmounts {
  const cpu = parseQuantity(list?.['cpu']);
  const mem = parseQuantity(list?.['memory']);
  const eph = parseQuantity(list?.['ephemeral-storage']);
  return {
    cpuMillis: cpu === undefined ? 0 : Math.max(0, milliValue(cpu)),
    memoryBytes: mem === undefined ? 0 : Math.max(0, unitValue(mem)),
    ephemeralStorageBytes: eph === undefined ? 0 : Math.max(0, unitValue(eph)),
  };
}

/** a + b, per resource. */
export function addResources(a: ResourceAmounts, b: ResourceAmounts): ResourceAmounts {
  return { cpuMillis: a.cpuMillis + b.cpuMillis, memoryBytes: a.memoryBytes + b.memoryBytes, ephemeralStorageBytes: a.ephemeralStorageBytes + b.ephemeralStorageBytes };
}

/** max(a, b), per resource. */
export function maxResources(a: ResourceAmounts, b: ResourceAmounts): ResourceAmounts {
  return {
    cpuMillis: Math.max(a.cpuMillis, b.cpuMillis),
    memoryBytes: Math.max(a.memoryBytes, b.memoryBytes),
    ephemeralStorageBytes: Math.max(a.ephemeralStorageBytes, b.ephemeralStorageBytes),
  };
}

function containerAmounts(c: V1Container, kind: ResourceKind): ResourceAmounts {
  return resourceAmounts(kind === 'requests' ? c.resources?.requests : c.resources?.limits);
}

/** The pod's effective requests or limits (see the module comment for the formula). */
export function podResourceTotals(pod: V1Pod, kind: ResourceKind): ResourceAmounts {
  const spec = pod.spec;
  if (spec === undefined) return { ...ZERO_RESOURCES };
  let app: ResourceAmounts = { ...ZERO_RESOURCES };
  for (const c of spec.containers ?? []) app = addResources(app, containerAmounts(c, kind));
  let sidecars: ResourceAmounts = { ...ZERO_RESOURCES };
  let init: ResourceAmounts = { ...ZERO_RESOURCES };
  for (const c of spec.initContainers ?? []) {
    const r = containerAmounts(c, kind);
    if (c.restartPolicy === 'Always') {
      sidecars = addResources(sidecars, r);
      init = maxResources(init, sidecars);
    } else {
      init = maxResources(init, addResources(r, sidecars));
    }
  }
  let total = maxResources(addResources(app, sidecars), init);
  const podLevel = kind === 'requests' ? spec.resources?.requests : spec.resources?.limits;
  if (podLevel !== undefined) {
    const pl = resourceAmounts(podLevel);
    if (podLevel['cpu'] !== undefined) total = { ...total, cpuMillis: pl.cpuMillis };
    if (podLevel['memory'] !== undefined) total = { ...total, memoryBytes: pl.memoryBytes };
    if (podLevel['ephemeral-storage'] !== undefined) total = { ...total, ephemeralStorageBytes: pl.ephemeralStorageBytes };
  }
  if (spec.overhead !== undefined) total = addResources(total, resourceAmounts(spec.overhead));
  return total;
}

/**
 * The pod's memory limit in bytes as the kubelet's cm.ResourceConfigForPod sets the pod cgroup:
 * only when every container (init containers included) declares a non-zero memory limit, or a
 * pod-level memory limit is set; undefined otherwise (the pod is unbounded).
 */
export function podMemoryLimitBytes(pod: V1Pod): number | undefined {
  const spec = pod.spec;
  if (spec === undefined) return undefined;
  const podLevel = spec.resources?.limits?.['memory'];
  const declared = podLevel !== undefined
    ? resourceAmounts({ memory: podLevel }).memoryBytes > 0
    : [...(spec.containers ?? []), ...(spec.initContainers ?? [])].every((c) => containerAmounts(c, 'limits').memoryBytes > 0);
  if (!declared) return undefined;
  return podResourceTotals(pod, 'limits').memoryBytes;
}
