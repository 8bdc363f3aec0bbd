/**
 * What the runtime says about one pod: the kubelet's kubecontainer.PodStatus, as plain data.
 * Produced from CRI calls (PLEG relist, or a pod worker right after its own calls), stored in the
 * SharedArrayBuffer pod cache, read by pod workers (syncPod) and the main thread (status, /pods).
 *
 * Timestamps are CRI nanoseconds as decimal strings ("0" = unset). Lists are ordered newest
 * first (by createdAt), as the kubelet orders them: `sandboxes[0]` is the current sandbox, and
 * for each container name the first entry is its latest instance.
 */
import type { ContainerState, PodSandboxState } from '../cri/cri-types.js';

export interface RuntimeSandboxStatus {
  id: string;
  state: PodSandboxState;
  createdAtNs: string;
  /** PodSandboxMetadata.attempt: bumped each time the agent creates a new sandbox for the pod. */
  attempt: number;
  /** Primary pod IP ('' for none, e.g. host network or not ready). */
  ip: string;
  /** All pod IPs (primary first). */
  ips: string[];
  /** NamespaceMode.NODE for the network namespace. */
  hostNetwork: boolean;
}

export interface RuntimeContainerStatus {
  id: string;
  podSandboxId: string;
  /** From the io.kubernetes.container.name label (falls back to metadata.name). */
  name: string;
  state: ContainerState;
  createdAtNs: string;
  startedAtNs: string;
  finishedAtNs: string;
  exitCode: number;
  reason: string;
  message: string;
  image: string;
  imageRef: string;
  /** io.kubernetes.container.hash annotation: the spec hash the container was created from. */
  hash: string;
  /** io.kubernetes.container.restartCount annotation. */
  restartCount: number;
  /** ContainerMetadata.attempt. */
  attempt: number;
}

export interface RuntimePodStatus {
  uid: string;
  name: string;
  namespace: string;
  /** IPs of the current sandbox (sandboxes[0]), primary first. */
  ips: string[];
  sandboxes: RuntimeSandboxStatus[];
  containers: RuntimeContainerStatus[];
}

export function emptyPodStatus(uid: string, name = '', namespace = ''): RuntimePodStatus {
  return { uid, name, namespace, ips: [], sandboxes: [], containers: [] };
}
