/**
 * Labels and annotations on CRI objects, as the kubelet writes them (kuberuntime/labels.go), so
 * crictl and kubelet tooling recognise shardlet's pods and a restarted agent can read back what it
 * created (hash, restart count, grace period, preStop handler) from the runtime alone.
 *
 * Sandboxes: pod labels + pod name/namespace/uid labels; annotations = pod annotations.
 * Containers: only the pod name/namespace/uid and container name labels (not the pod labels);
 * annotations carry the container's restart bookkeeping.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { StringMap } from '../../src/shared/cri/cri-types.js';
import {
  ContainerHashLabel,
  ContainerPortsLabel,
  ContainerPreStopHandlerLabel,
  ContainerRestartCountLabel,
  ContainerTerminationMessagePathLabel,
  ContainerTerminationMessagePolicyLabel,
  KubernetesContainerNameLabel,
  KubernetesPodNameLabel,
  KubernetesPodNamespaceLabel,
  KubernetesPodUIDLabel,
  PodDeletionGracePeriodLabel,
  PodTerminationGracePeriodLabel,
} from '../../src/shared/kubetypes/kubelet-labels.js';
import { hashContainer, stableJson } from './container-hash.js';
import { podName, podNamespace, podUID } from './pod-spec.js';

/** The kubelet's defaults for a container spec that did not go through API defaulting. */
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';
export const DEFAULT_TERMINATION_MESSAGE_POLICY = 'File';

export function newPodLabels(pod: V1Pod): StringMap {
  return {
    ...(pod.metadata?.labels ?? {}),
    [KubernetesPodNameLabel]: podName(pod),
    [KubernetesPodNamespaceLabel]: podNamespace(pod),
    [KubernetesPodUIDLabel]: podUID(pod),
  };
}

export function newPodAnnotations(pod: V1Pod): StringMap {
  return { ...(pod.metadata?.annotations ?? {}) };
}

export function newContainerLabels(container: V1Container, pod: V1Pod): StringMap {
  return {
    [KubernetesPodNameLabel]: podName(pod),
    [KubernetesPodNamespaceLabel]: podNamespace(pod),
    [KubernetesPodUIDLabel]: podUID(pod),
    [KubernetesContainerNameLabel]: container.name,
  };
}

export function newContainerAnnotations(container: V1Container, pod: V1Pod, restartCount: number): StringMap {
  const a: StringMap = {
    [ContainerHashLabel]: hashContainer(container),
    [ContainerRestartCountLabel]: String(restartCount),
    [ContainerTerminationMessagePathLabel]: container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH,
    [ContainerTerminationMessagePolicyLabel]: container.terminationMessagePolicy ?? DEFAULT_TERMINATION_MESSAGE_POLICY,
  };
  const deletionGrace = pod.metadata?.deletionGracePeriodSeconds;
  if (deletionGrace !== undefined && deletionGrace !== null) a[PodDeletionGracePeriodLabel] = String(deletionGrace);
  const terminationGrace = pod.spec?.terminationGracePeriodSeconds;
  if (terminationGrace !== undefined && terminationGrace !== null) a[PodTerminationGracePeriodLabel] = String(terminationGrace);
  const preStop = container.lifecycle?.preStop;
  if (preStop) a[ContainerPreStopHandlerLabel] = stableJson(preStop);
  if (container.ports && container.ports.length > 0) a[ContainerPortsLabel] = stableJson(container.ports);
  return a;
}
