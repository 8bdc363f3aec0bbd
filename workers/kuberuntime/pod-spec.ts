/**
 * Read-only accessors over a V1Pod with the API server's defaults applied where a source may have
 * left them out (restartPolicy Always, terminationGracePeriodSeconds 30), plus the time
 * conversions between CRI nanoseconds and API dates. Pure; no I/O.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export function podUID(pod: V1Pod): string {
  return pod.metadata?.uid ?? '';
}
export function podName(pod: V1Pod): string {
  return pod.metadata?.name ?? '';
}
export function podNamespace(pod: V1Pod): string {
  return pod.metadata?.namespace ?? '';
}

/** The kubelet's format.Pod: `name_namespace(uid)` (underscore: not allowed in pod names). */
export function formatPod(pod: V1Pod): string {
  return `${podName(pod)}_${podNamespace(pod)}(${podUID(pod)})`;
}

export function restartPolicyOf(pod: V1Pod): RestartPolicy {
  const p = pod.spec?.restartPolicy;
  return p === 'OnFailure' || p === 'Never' ? p : 'Always';
}

/** The kubelet's shouldRestartOnFailure: every policy but Never restarts failed containers. */
export function shouldRestartOnFailure(pod: V1Pod): boolean {
  return restartPolicyOf(pod) !== 'Never';
}

export function isHostNetwork(pod: V1Pod): boolean {
  return pod.spec?.hostNetwork === true;
}

export function appContainers(pod: V1Pod): readonly V1Container[] {
  return pod.spec?.containers ?? [];
}
export function initContainers(pod: V1Pod): readonly V1Container[] {
  return pod.spec?.initContainers ?? [];
}

/**
 * The kubelet's IsRestartableInitContainer: an init container with restartPolicy Always, a
 * sidecar (KEP-753). Only meaningful for an element of spec.initContainers (validation refuses
 * restartPolicy on a regular container).
 */
export function isRestartableInitContainer(c: V1Container): boolean {
  return c.restartPolicy === 'Always';
}

/** The kubelet's HasRestartableInitContainer: the pod has at least one sidecar. */
export function hasRestartableInitContainer(pod: V1Pod): boolean {
  return initContainers(pod).some(isRestartableInitContainer);
}

export function containerSpec(pod: V1Pod, name: string): V1Container | undefined {
  return appContainers(pod).find((c) => c.name === name) ?? initContainers(pod).find((c) => c.name === name);
}

/** The default when the source did not fill it (the API server's default is 30). */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

/**
 * A static pod: one from a file or HTTP source (kubernetes.io/config.source other than "api").
 * The kubelet never gives static pods a terminal phase.
 */
export function isStaticPod(pod: V1Pod): boolean {
  const source = pod.metadata?.annotations?.['kubernetes.io/config.source'];
  return source !== undefined && source !== 'api';
}

export function isDeletionRequested(pod: V1Pod): boolean {
  return pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
}

/** The latest instance of a container (the runtime status lists instances newest first). */
export function findContainerStatusByName(status: RuntimePodStatus, name: string): RuntimeContainerStatus | undefined {
  return status.containers.find((c) => c.name === name);
}

/** CRI nanoseconds (decimal string, "0" = unset) → epoch ms, or undefined when unset. */
export function nsToMs(ns: string): number | undefined {
  if (ns === '' || ns === '0') return undefined;
  return Number(BigInt(ns) / 1_000_000n);
}

export function nsToDate(ns: string): Date | undefined {
  const ms = nsToMs(ns);
  return ms === undefined ? undefined : new Date(ms);
}

/** An API timestamp as a client may hand it over: a Date, an RFC 3339 string, or absent. */
export function toDate(v: Date | string | undefined | null): Date | undefined {
  if (v === undefined || v === null) return undefined;
  const d = v instanceof Date ? v : new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d;
}
