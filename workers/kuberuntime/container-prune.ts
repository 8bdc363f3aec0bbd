/**
 * Removing dead container instances during a sync.
 *
 * - purgeInitContainers: when a new sandbox is created, every instance of every init container
 *   is removed so initialization runs again from the start (the kubelet's purgeInitContainers).
 * - pruneDeadInstances: right before a container is (re)started, only its newest dead (exited
 *   or unknown) instance is kept; older ones are removed. The kubelet prunes init containers on
 *   every sync (pruneInitContainersBeforeStart) and leaves app containers to its container GC
 *   (every minute, MaxPerPodContainer = 1); shardlet has no separate GC loop, so it prunes each
 *   container just before starting it, which bounds dead instances per container at one as the
 *   GC would, and issues no call on syncs that start nothing.
 * Removal failures are logged and otherwise ignored, as in the kubelet (they are retried on the
 * next sync because the instance is still listed).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound } from '../../src/shared/cri/cri-errors.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import type { Logger } from '../../src/shared/logging/logger.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { errorMessage, rethrowIfAborted } from './kuberuntime-errors.js';
import { initContainers } from './pod-spec.js';

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

/**
 * The dead instances of `name` beyond the newest one (newest-first order of the runtime status).
 * CREATED instances count as dead (the kubelet's GC takes every non-running container): one
 * left by an interrupted create→start is either the newest (started by the next sync, see
 * container-start.ts) or pruned here.
 */
export function deadInstancesToPrune(name: string, status: RuntimePodStatus): RuntimeContainerStatus[] {
  const dead = status.containers.filter((c) => c.name === name && (c.state === 'CONTAINER_EXITED' || c.state === 'CONTAINER_UNKNOWN' || c.state === 'CONTAINER_CREATED'));
  return dead.slice(1);
}

/**
 * CREATED instances that are not the newest instance of their container: never started and
 * never going to be (a newer instance exists). Removed on every sync, also when it starts
 * nothing, so an interrupted create→start leaves nothing behind (the kubelet's container GC).
 */
export function strayCreatedInstances(status: RuntimePodStatus): RuntimeContainerStatus[] {
  const newest = new Set<string>();
  const out: RuntimeContainerStatus[] = [];
  for (const c of status.containers) {
    if (!newest.has(c.name)) {
      newest.add(c.name);
      continue;
    }
    if (c.state === 'CONTAINER_CREATED') out.push(c);
  }
  return out;
}

export async function removeStrayCreated(deps: PruneDeps, status: RuntimePodStatus, signal: AbortSignal): Promise<boolean> {
  const stray = strayCreatedInstances(status);
  for (const c of stray) await remove(deps, c, signal);
  return stray.length > 0;
}

/** Returns whether anything was removed. */
export async function pruneDeadInstances(deps: PruneDeps, name: string, status: RuntimePodStatus, signal: AbortSignal): Promise<boolean> {
  const dead = deadInstancesToPrune(name, status);
  for (const c of dead) await remove(deps, c, signal);
  return dead.length > 0;
}
