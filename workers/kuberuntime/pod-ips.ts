/**
 * Which IPs a pod has, as the kubelet reports them in status.podIP(s) and hands them to its
 * containers' downward API (status.podIP / status.podIPs):
 *  - the current sandbox's IPs while it has any;
 *  - none from the runtime and no sandbox ready (the pod finished, or its sandbox is being
 *    replaced): the last known IPs stay (the kubelet's PLEG getPodIPs keeps the cached IPs for
 *    "pods with no ready containers or sandboxes (like exited pods)"), so podIP is never cleared
 *    when a pod completes;
 *  - a host-network pod without any: the node's IP (generateAPIPodStatus: "HostNetwork Pods
 *    inherit the node IPs as PodIPs"; SyncPod then copies the API status' IPs into the runtime
 *    status, so the containers' POD_IP is the node's IP too, kubernetes#24576).
 * Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { isHostNetwork } from './pod-spec.js';

/** `ips` (primary first), or the node's IP for a host-network pod that has none. */
export function withHostNetworkIPs(pod: V1Pod, ips: readonly string[], hostIP: string): readonly string[] {
  if (ips.length > 0 || !isHostNetwork(pod) || hostIP === '') return ips;
  return [hostIP];
}

/** The IPs for status.podIP(s): see the module comment. `previous`: the last reported podIPs. */
export function statusPodIPs(pod: V1Pod, runtimeStatus: RuntimePodStatus, previous: readonly string[], hostIP: string): readonly string[] {
  let ips: readonly string[] = runtimeStatus.ips;
  if (ips.length === 0 && !runtimeStatus.sandboxes.some((s) => s.state === 'SANDBOX_READY')) ips = previous;
  return withHostNetworkIPs(pod, ips, hostIP);
}
