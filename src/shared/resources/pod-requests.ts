/**
 * A pod's effective resource requests, as the scheduler and the kubelet's admission compute them
 * (k8s.io/component-helpers/resource `PodRequests`):
 *
 *   app     = Σ requests of regular containers
 *   sidecar = Σ requests of restartable init containers (restartPolicy: Always), which keep
 *             running next to the app containers
 *   init    = max over regular init containers i of (request_i + Σ sidecars started before i)
 *   pod     = max(app + sidecar, init) + spec.overhead
 *
 * Pod-level resources (spec.resources.requests, the PodLevelResources feature) replace the
 * container sum for the resources they name. Invalid quantities count as 0 (manifests are
 * validated before they get here).
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { parseQuantity, milliValue, unitValue } from './quantity.js';

/** cpu in millicores, memory and ephemeral-storage in bytes. */
export interface ResourceAmounts {
  cpuMillis: number;
  memoryBytes: number;
  ephemeralStorageBytes: number;
}

export const ZERO_RESOURCES: Readonly<ResourceAmounts> = Object.freeze({ cpuMillis: 0, memoryBytes: 0, ephemeralStorageBytes: 0 });

type ResourceList = Readonly<Record<string, unknown>> | undefined;

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

function add(a: ResourceAmounts, b: ResourceAmounts): ResourceAmounts {
  return { cpuMillis: a.cpuMillis + b.cpuMillis, memoryBytes: a.memoryBytes + b.memoryBytes, ephemeralStorageBytes: a.ephemeralStorageBytes + b.ephemeralStorageBytes };
}

function max(a: ResourceAmounts, b: ResourceAmounts): ResourceAmounts {
  return {
    cpuMillis: Math.max(a.cpuMillis, b.cpuMillis),
    memoryBytes: Math.max(a.memoryBytes, b.memoryBytes),
    ephemeralStorageBytes: Math.max(a.ephemeralStorageBytes, b.ephemeralStorageBytes),
  };
}

function containerRequests(c: V1Container): ResourceAmounts {
  return resourceAmounts(c.resources?.requests);
}

/** The pod's effective requests (see the module comment for the formula). */
export function podRequests(pod: V1Pod): ResourceAmounts {
  const spec = pod.spec;
  if (spec === undefined) return { ...ZERO_RESOURCES };
  let app: ResourceAmounts = { ...ZERO_RESOURCES };
  for (const c of spec.containers ?? []) app = add(app, containerRequests(c));
  let sidecars: ResourceAmounts = { ...ZERO_RESOURCES };
  let init: ResourceAmounts = { ...ZERO_RESOURCES };
  for (const c of spec.initContainers ?? []) {
    const r = containerRequests(c);
    if (c.restartPolicy === 'Always') {
      sidecars = add(sidecars, r);
      init = max(init, sidecars);
    } else {
      init = max(init, add(r, sidecars));
    }
  }
  let total = max(add(app, sidecars), init);
  const podLevel = spec.resources?.requests;
  if (podLevel !== undefined) {
    const pl = resourceAmounts(podLevel);
    if (podLevel['cpu'] !== undefined) total = { ...total, cpuMillis: pl.cpuMillis };
    if (podLevel['memory'] !== undefined) total = { ...total, memoryBytes: pl.memoryBytes };
    if (podLevel['ephemeral-storage'] !== undefined) total = { ...total, ephemeralStorageBytes: pl.ephemeralStorageBytes };
  }
  if (spec.overhead !== undefined) total = add(total, resourceAmounts(spec.overhead));
  return total;
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
