/**
 * Removing dead container instances during a sync.
 *
 * - purgeInitContainers: when a new sandbox is created, every instance of every init container
 *   is removed so initialization runs again from the start (the kubelet's purgeInitContainers).
 * - pruneDeadInstances: per container name (init and app), only the newest dead (exited or
 *   unknown) instance is kept; older ones are removed. For init containers this is the kubelet's
 *   pruneInitContainersBeforeStart. For app containers the kubelet leaves it to its container GC
 *   (every minute, MaxPerPodContainer = 1); shardlet has no separate GC loop, so it prunes here,
 *   before a restart, which bounds dead instances per container at one, as the GC would.
 * Removal failures are logged and otherwise ignored, as in the kubelet (they are retried on the
 * next sync because the instance is still listed).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound } from '../../src/cri/cri-errors.js';
import type { RuntimeService } from '../../src/cri/runtime-service.js';
import type { Logger } from '../../src/logging/logger.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../../src/pod-cache/runtime-pod-status.js';
import { errorMessage, rethrowIfAborted } from './kuberuntime-errors.js';
import { appContainers, initContainers } from './pod-spec.js';

export interface PruneDeps {
  runtime: RuntimeService;
  logger: Logger;
}

async function remove(deps: PruneDeps, c: RuntimeContainerStatus, signal: AbortSignal): Promise<void> {
  rethrowIfAborted(signal);
  try {
    await deps.runtime.removeContainer(c.id, { signal });
  } catch (err) {
    rethrowIfAborted(signal);
    if (!isNotFound(err)) deps.logger.error('Failed to remove container', { containerName: c.name, containerId: c.id, err: errorMessage(err) });
  }
}

export async function purgeInitContainers(deps: PruneDeps, pod: V1Pod, status: RuntimePodStatus, signal: AbortSignal): Promise<void> {
  const names = new Set(initContainers(pod).map((c) => c.name));
  for (const c of status.containers) if (names.has(c.name)) await remove(deps, c, signal);
}

/** The instances pruneDeadInstances would remove (newest-first order of the runtime status). */
export function deadInstancesToPrune(pod: V1Pod, status: RuntimePodStatus): RuntimeContainerStatus[] {
  const names = new Set([...initContainers(pod), ...appContainers(pod)].map((c) => c.name));
  const keptDead = new Set<string>();
  const out: RuntimeContainerStatus[] = [];
  for (const c of status.containers) {
    if (!names.has(c.name) || (c.state !== 'CONTAINER_EXITED' && c.state !== 'CONTAINER_UNKNOWN')) continue;
    if (!keptDead.has(c.name)) keptDead.add(c.name);
    else out.push(c);
  }
  return out;
}

export async function pruneDeadInstances(deps: PruneDeps, pod: V1Pod, status: RuntimePodStatus, signal: AbortSignal): Promise<void> {
  for (const c of deadInstancesToPrune(pod, status)) await remove(deps, c, signal);
}
