/**
 * Removing dead container instances during a sync.
 *
 * - purgeInitContainers: when a new sandbox is created, every instance of every init container
 *   is removed so initialization runs again from the start (the kubelet's purgeInitContainers).
 * - pruneDeadInstances: right before a container is (re)started, only its newest dead (exited
 *   or unknown) instance is kept; older ones are removed. The kubelet prunes init containers
 *   before starting one (pruneInitContainersBeforeStart) and leaves app containers to its
 *   container GC (every minute; src/main/gc/container-gc.ts here). With the GC's default policy
 *   (one dead instance per container, no minimum age) pruning an app container at its restart
 *   removes exactly what the next GC pass would, without a crash loop holding a second dead
 *   instance for up to a minute; with a policy that keeps more, the workers leave app containers
 *   to the GC (PodWorkerThreadConfig.pruneAppContainersBeforeStart). Log files of pruned
 *   instances stay until the GC or the pod's cleanup removes them.
 * Removal failures are logged and otherwise ignored, as in the kubelet (they are retried on the
 * next sync because the instance is still listed).
 *
 * With `podLogsDir`, an instance's log files go first (the kubelet's removeContainer →
 * removeContainerLog; src/shared/fs/container-log-files.ts), unless an instance that stays has
 * the same log path; an instance whose logs cannot be removed is not removed (retried next sync).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound } from '../../src/shared/cri/cri-errors.js';
import { removeContainerLogFiles } from '../../src/shared/fs/container-log-files.js';
import { containerLogPathOf } from '../../src/shared/kubetypes/pod-log-paths.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import type { PodLogDirs } from './pod-log-dirs.js';
import type { Logger } from '../../src/shared/logging/logger.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { errorMessage, rethrowIfAborted } from './kuberuntime-errors.js';
import { initContainers } from './pod-spec.js';

export interface PruneDeps {
  runtime: RuntimeService;
  logger: Logger;
  /** --pod-logs-dir: removed instances' log files go with them (absent: logs are left). */
  podLogsDir?: string;
  /** How those files are removed, confined to --pod-logs-dir (pod-log-dirs.ts; default: directly). */
  logDirs?: Pick<PodLogDirs, 'removeFiles'>;
}

async function remove(deps: PruneDeps, c: RuntimeContainerStatus, signal: AbortSignal, status: RuntimePodStatus, removing: ReadonlySet<string>): Promise<void> {
  rethrowIfAborted(signal);
  if (deps.podLogsDir !== undefined) {
    const shared = status.containers.some((o) => !removing.has(o.id) && o.name === c.name && o.restartCount === c.restartCount);
    const logPath = shared ? null : containerLogPathOf(deps.podLogsDir, status.namespace, status.name, status.uid, c.name, c.restartCount);
    try {
      if (logPath !== null) await (deps.logDirs ? deps.logDirs.removeFiles(logPath) : removeContainerLogFiles(logPath));
    } catch (err) {
      deps.logger.error('Failed to remove container log', { containerName: c.name, containerId: c.id, err: errorMessage(err) });
      return;
    }
  }
  try {
    await deps.runtime.removeContainer(c.id, { signal });
  } catch (err) {
    rethrowIfAborted(signal);
    if (!isNotFound(err)) deps.logger.error('Failed to remove container', { containerName: c.name, containerId: c.id, err: errorMessage(err) });
  }
}

export async function purgeInitContainers(deps: PruneDeps, pod: V1Pod, status: RuntimePodStatus, signal: AbortSignal): Promise<void> {
  const names = new Set(initContainers(pod).map((c) => c.name));
  const purged = status.containers.filter((c) => names.has(c.name));
  const removing = new Set(purged.map((c) => c.id));
  for (const c of purged) await remove(deps, c, signal, status, removing);
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
  const removing = new Set(stray.map((c) => c.id));
  for (const c of stray) await remove(deps, c, signal, status, removing);
  return stray.length > 0;
}

/** Returns whether anything was removed. */
export async function pruneDeadInstances(deps: PruneDeps, name: string, status: RuntimePodStatus, signal: AbortSignal): Promise<boolean> {
  const dead = deadInstancesToPrune(name, status);
  const removing = new Set(dead.map((c) => c.id));
  for (const c of dead) await remove(deps, c, signal, status, removing);
  return dead.length > 0;
}
