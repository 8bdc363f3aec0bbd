/**
 * The pod's runtime status right after a sync, derived from the answers of the calls the sync
 * just made instead of re-reading it (issue 15: the re-read cost 4 CRI calls per started pod:
 * ListPodSandbox, ListContainers, PodSandboxStatus, ContainerStatus).
 *
 * Only for syncs whose every call said exactly what it did: a sandbox created (its
 * PodSandboxStatus answer, or host network: no IP) and containers created and started from an
 * image whose facts an ImageStatus answer gave (image-view.ts). Anything else — a kill, a
 * removal, a failure, a container started from an earlier interrupted create — returns
 * undefined and the caller re-reads as before (fresh-status.ts).
 *
 * What differs from a re-read: createdAt/startedAt of what this sync created are the agent's
 * wall clock when the answer arrived (the runtime stamps them between request and answer), not
 * the runtime's own stamps. Ordering is unaffected (newest first goes by attempt first). The
 * PLEG takes these entries for the objects it has not inspected yet (bulk-pod-status.ts), so
 * the approximation stays until the object changes state.
 */
import type { RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { assemblePodStatus, type PodIdentity } from '../runtime-status/cri-status-convert.js';

/** CRI nanoseconds (decimal string) for a wall-clock ms instant. */
export function msToNs(ms: number): string {
  return (BigInt(Math.max(0, Math.round(ms))) * 1_000_000n).toString();
}

/** What a successful create+start of one container tells (see startContainer). */
export interface StartedContainerFacts {
  id: string;
  podSandboxId: string;
  name: string;
  createdAtMs: number;
  startedAtMs: number;
  image: string;
  imageRef: string;
  hash: string;
  restartCount: number;
  attempt: number;
}

export function startedContainerStatus(f: StartedContainerFacts): RuntimeContainerStatus {
  return {
    id: f.id, podSandboxId: f.podSandboxId, name: f.name, state: 'CONTAINER_RUNNING',
    createdAtNs: msToNs(f.createdAtMs), startedAtNs: msToNs(f.startedAtMs), finishedAtNs: '0',
    exitCode: 0, reason: '', message: '', image: f.image, imageRef: f.imageRef,
    hash: f.hash, restartCount: f.restartCount, attempt: f.attempt,
  };
}

/** A host-network sandbox just created (no PodSandboxStatus call: it has no IP to tell). */
export function hostNetworkSandboxStatus(id: string, attempt: number, createdAtMs: number): RuntimeSandboxStatus {
  return { id, state: 'SANDBOX_READY', createdAtNs: msToNs(createdAtMs), attempt, ip: '', ips: [], hostNetwork: true };
}

/**
 * `before` plus what the sync created. The new sandbox (if any) becomes sandboxes[0] (its
 * attempt is the highest), so the pod IPs are its IPs.
 */
export function postSyncStatus(id: PodIdentity, before: RuntimePodStatus, sandbox: RuntimeSandboxStatus | undefined, started: readonly RuntimeContainerStatus[]): RuntimePodStatus {
  const sandboxes = sandbox ? [sandbox, ...before.sandboxes] : [...before.sandboxes];
  return assemblePodStatus(id, sandboxes, [...started, ...before.containers]);
}
