/**
 * SyncPod's step 5 (the kubelet's "start ephemeral containers"): each ephemeral container the
 * runtime never ran is checked (ephemeral-containers.ts) and started in the current sandbox,
 * before init containers, so a debug container can start while an init container keeps failing.
 * A failure of one does not stop the others; it is recorded as that container's start failure
 * (its status then waits with the reason and message). No crash-loop backoff applies: an
 * ephemeral container that ran is never started again.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { PodSandboxConfig } from '../../src/shared/cri/cri-types.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { startContainer, type StartDeps } from './container-start.js';
import { checkEphemeralStart } from './ephemeral-containers.js';
import type { KuberuntimeMetrics } from './kuberuntime-deps.js';
import { isStartFailureReason, rethrowIfAborted, type SyncFailure } from './kuberuntime-errors.js';
import { PodEventReason, containerFieldPath } from './pod-events.js';
import type { StartResult } from './reason-cache.js';

export interface EphemeralStartInput {
  pod: V1Pod;
  status: RuntimePodStatus;
  /** Indexes into spec.ephemeralContainers (PodActions.ephemeralContainersToStart). */
  indexes: readonly number[];
  sandboxId: string;
  sandboxConfig: PodSandboxConfig;
  podIPs: readonly string[];
  signal: AbortSignal;
}

export interface EphemeralStartOutput {
  startResults: StartResult[];
  failures: SyncFailure[];
  /** What the runtime now holds for those started with known image facts. */
  started: RuntimeContainerStatus[];
  /** False when a start's outcome is not fully known from its answers (re-read the status). */
  derivable: boolean;
  /** Whether a start was attempted (CRI calls that may change the runtime's state were made). */
  mutated: boolean;
}

export async function startEphemeralContainers(deps: StartDeps & { metrics?: KuberuntimeMetrics | undefined }, input: EphemeralStartInput): Promise<EphemeralStartOutput> {
  const out: EphemeralStartOutput = { startResults: [], failures: [], started: [], derivable: true, mutated: false };
  const { pod, signal } = input;
  for (const index of input.indexes) {
    rethrowIfAborted(signal);
    const check = checkEphemeralStart(pod, index, input.status);
    if (!check.ok) {
      const reason = 'CreateContainerConfigError';
      deps.events?.(pod, 'Warning', PodEventReason.Failed, `Error: ${check.message}`, containerFieldPath(pod, check.containerName));
      deps.metrics?.startedContainer('ephemeral_container', reason);
      out.failures.push({ reason, message: check.message, containerName: check.containerName });
      out.startResults.push({ containerName: check.containerName, failure: { reason, message: check.message } });
      continue;
    }
    out.mutated = true;
    const r = await startContainer(deps, {
      pod, container: check.container, status: input.status, sandboxId: input.sandboxId, sandboxConfig: input.sandboxConfig,
      podIPs: input.podIPs, signal, ...(check.targetContainerId !== undefined ? { targetContainerId: check.targetContainerId } : {}),
    });
    const name = check.container.name;
    if (r.ok) {
      deps.metrics?.startedContainer('ephemeral_container');
      out.startResults.push({ containerName: name });
      if (r.started) out.started.push(r.started);
      else out.derivable = false;
      continue;
    }
    deps.metrics?.startedContainer('ephemeral_container', r.failure.reason);
    out.failures.push(r.failure);
    const reason = r.failure.reason;
    if (isStartFailureReason(reason)) out.startResults.push({ containerName: name, failure: { reason, message: r.failure.message } });
  }
  return out;
}
