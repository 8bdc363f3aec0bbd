/**
 * Pure conversions from CRI objects to the cache's RuntimePodStatus pieces, shared by
 * getPodStatus (one pod, full inspection) and the relist's bulk builder (list data plus the
 * last inspection of each object). Mirrors kuberuntime's toKubeContainerStatus and
 * GetPodStatus's sandbox handling.
 */
import type { Container, ContainerStatus, PodSandbox, PodSandboxStatus } from '../../src/shared/cri/cri-types.js';
import {
  ContainerHashLabel, ContainerRestartCountLabel, KubernetesContainerNameLabel, KubernetesPodNameLabel,
  KubernetesPodNamespaceLabel, KubernetesPodUIDLabel,
} from '../../src/shared/kubetypes/kubelet-labels.js';
import type { RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';

/** What only PodSandboxStatus knows about a sandbox (ListPodSandbox does not carry it). */
export interface SandboxDetails {
  ip: string;
  ips: string[];
  hostNetwork: boolean;
}

/** What only ContainerStatus knows about a container (those fields of the cached status). */
export type ContainerDetails = Pick<RuntimeContainerStatus, 'startedAtNs' | 'finishedAtNs' | 'exitCode' | 'reason' | 'message' | 'image' | 'imageRef'>;

/** The pod identity the kubelet's labels put on every sandbox and container. */
export interface PodIdentity {
  uid: string;
  name: string;
  namespace: string;
}

export function sandboxIdentity(s: PodSandbox): PodIdentity {
  return {
    uid: s.labels[KubernetesPodUIDLabel] ?? s.metadata?.uid ?? '',
    name: s.labels[KubernetesPodNameLabel] ?? s.metadata?.name ?? '',
    namespace: s.labels[KubernetesPodNamespaceLabel] ?? s.metadata?.namespace ?? '',
  };
}

export function containerIdentity(c: Container): PodIdentity {
  return {
    uid: c.labels[KubernetesPodUIDLabel] ?? '',
    name: c.labels[KubernetesPodNameLabel] ?? '',
    namespace: c.labels[KubernetesPodNamespaceLabel] ?? '',
  };
}

export function sandboxDetails(s: PodSandboxStatus): SandboxDetails {
  const ip = s.network?.ip ?? '';
  const ips = ip === '' ? [] : [ip, ...(s.network?.additionalIps ?? []).map((a) => a.ip).filter((a) => a !== '')];
  const mode = s.linux?.namespaces?.options?.network;
  // Runtimes that omit linux namespace options: a sandbox without an IP is taken as host network.
  const hostNetwork = mode !== undefined ? mode === 'NODE' : ip === '';
  return { ip, ips, hostNetwork };
}

export function toSandboxStatus(s: PodSandbox | PodSandboxStatus, d: SandboxDetails): RuntimeSandboxStatus {
  return {
    id: s.id,
    state: s.state,
    createdAtNs: s.createdAt,
    attempt: s.metadata?.attempt ?? 0,
    ip: d.ip,
    ips: d.ips,
    hostNetwork: d.hostNetwork,
  };
}

export function containerDetails(c: ContainerStatus): ContainerDetails {
  return {
    startedAtNs: c.startedAt,
    finishedAtNs: c.finishedAt,
    exitCode: c.exitCode,
    reason: c.reason,
    message: c.message,
    image: c.image?.image ?? '',
    imageRef: c.imageRef,
  };
}

/** Details of a container never inspected (list data only): what a CREATED container reports. */
export function listOnlyDetails(c: Container): ContainerDetails {
  return { startedAtNs: '0', finishedAtNs: '0', exitCode: 0, reason: '', message: '', image: c.image?.image ?? '', imageRef: c.imageRef };
}

/** `c` supplies identity and labels (list or status: both carry them); `d` the inspection. */
export function toContainerStatus(c: Container | ContainerStatus, podSandboxId: string, d: ContainerDetails): RuntimeContainerStatus {
  // Whole decimal digits only, like the kubelet's strconv.Atoi (parseInt would read "2x" or "1e400" as a count).
  const raw = c.annotations[ContainerRestartCountLabel];
  const restart = raw !== undefined && /^[0-9]{1,15}$/.test(raw) ? Number(raw) : 0;
  return {
    id: c.id,
    podSandboxId,
    name: c.labels[KubernetesContainerNameLabel] ?? c.metadata?.name ?? '',
    state: c.state,
    createdAtNs: c.createdAt,
    startedAtNs: d.startedAtNs,
    finishedAtNs: d.finishedAtNs,
    exitCode: d.exitCode,
    reason: d.reason,
    message: d.message,
    image: d.image,
    imageRef: d.imageRef,
    hash: c.annotations[ContainerHashLabel] ?? '',
    restartCount: restart,
    attempt: c.metadata?.attempt ?? 0,
  };
}

/**
 * Newest first: the higher attempt first, then the later creation (CRI ns timestamps: decimal
 * strings, no leading zeros). The kubelet orders by creation time alone; but the runtime stamps
 * it with the node's wall clock, so after a clock step backwards a new instance would sort as
 * the oldest and the agent would recreate the attempt it just made. Attempts (metadata.attempt)
 * only grow: the agent gives each new sandbox or container instance of a pod the last + 1.
 */
export function newestFirst(a: { attempt: number; createdAtNs: string }, b: { attempt: number; createdAtNs: string }): number {
  if (a.attempt !== b.attempt) return b.attempt - a.attempt;
  const x = a.createdAtNs;
  const y = b.createdAtNs;
  if (x.length !== y.length) return y.length - x.length;
  return x < y ? 1 : x > y ? -1 : 0;
}

/**
 * The pod status from its pieces: newest first, and the pod IPs of the latest sandbox if it
 * is ready (GetPodStatus takes IPs only from sandboxes[0] in SANDBOX_READY).
 */
export function assemblePodStatus(id: PodIdentity, sandboxes: RuntimeSandboxStatus[], containers: RuntimeContainerStatus[]): RuntimePodStatus {
  sandboxes.sort(newestFirst);
  containers.sort(newestFirst);
  const latest = sandboxes[0];
  const ips = latest && latest.state === 'SANDBOX_READY' ? latest.ips : [];
  return { uid: id.uid, name: id.name, namespace: id.namespace, ips, sandboxes, containers };
}
