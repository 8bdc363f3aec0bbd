/**
 * Removing what is left of a pod once it is gone from the config: every container, every sandbox,
 * the pod cgroup (--cgroups-per-qos, once no sandbox is left; best effort, see below) and the pod's log directory (containerd does not delete log files), unless the caller keeps it
 * (orphans: the kubelet leaves their logs to its garbage collection).
 *
 * What to remove is the union of the cached runtime status and what the runtime lists under the
 * pod's UID label (ListContainers / ListPodSandbox with a label selector), so instances the
 * cache never saw are not leaked. A ready sandbox is stopped before RemovePodSandbox. NotFound
 * is success (already gone). The first other failure is returned; the rest still runs, so a
 * retry has less to do.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound } from '../../src/shared/cri/cri-errors.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import type { Logger } from '../../src/shared/logging/logger.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { KubernetesPodUIDLabel } from '../../src/shared/kubetypes/kubelet-labels.js';
import { errorMessage, rethrowIfAborted, type SyncFailure } from './kuberuntime-errors.js';
import { podUID } from './pod-spec.js';
import { podLogsDirectory } from './sandbox-config.js';
import type { PodLogDirs } from './sync-pod.js';
import type { PodCgroups } from '../cgroups/pod-cgroups.js';

export interface CleanupDeps {
  runtime: RuntimeService;
  logger: Logger;
  podLogsDir: string;
  logDirs: PodLogDirs;
  /** --cgroups-per-qos: the pod cgroup goes once the pod's sandboxes are removed. */
  podCgroups?: PodCgroups | undefined;
}

export async function cleanupPod(deps: CleanupDeps, pod: V1Pod, status: RuntimePodStatus, signal: AbortSignal, opts: { keepLogs: boolean } = { keepLogs: false }): Promise<SyncFailure | undefined> {
  const { runtime } = deps;
  const selector = { labelSelector: { [KubernetesPodUIDLabel]: podUID(pod) } };
  let first: SyncFailure | undefined;
  const note = (err: unknown, what: string): void => {
    rethrowIfAborted(signal);
    if (isNotFound(err)) return;
    deps.logger.error(`cleanup: ${what} failed`, { err: errorMessage(err) });
    first ??= { reason: 'RemoveError', message: `${what}: ${errorMessage(err)}` };
  };

  const containerIds = new Set(status.containers.map((c) => c.id));
  const sandboxes = new Map(status.sandboxes.map((s) => [s.id, s.state === 'SANDBOX_READY']));
  try {
    for (const c of await runtime.listContainers(selector, { signal })) containerIds.add(c.id);
    for (const s of await runtime.listPodSandbox(selector, { signal })) sandboxes.set(s.id, s.state === 'SANDBOX_READY');
  } catch (err) {
    note(err, 'list pod objects');
  }

  for (const id of containerIds) {
    rethrowIfAborted(signal);
    try {
      await runtime.removeContainer(id, { signal });
    } catch (err) {
      note(err, `RemoveContainer ${id}`);
    }
  }
  for (const [id, ready] of sandboxes) {
    rethrowIfAborted(signal);
    try {
      if (ready) await runtime.stopPodSandbox(id, { signal });
      await runtime.removePodSandbox(id, { signal });
    } catch (err) {
      note(err, `RemovePodSandbox ${id}`);
    }
  }
  // Only with every sandbox gone: a live one still holds processes in the cgroup. A cgroup that
  // cannot be removed does not hold the pod back (it would never be forgotten): the main
  // thread's housekeeping sweep removes the cgroups of pods it no longer knows (node-cgroups.ts).
  if (first === undefined && deps.podCgroups) {
    const err = await deps.podCgroups.remove(pod, signal);
    rethrowIfAborted(signal);
    if (err !== undefined) deps.logger.error('cleanup: remove pod cgroup failed; the housekeeping sweep retries it', { err });
  }
  if (opts.keepLogs) return first;
  try {
    await deps.logDirs.remove(podLogsDirectory(deps.podLogsDir, pod));
  } catch (err) {
    note(err, 'remove pod log directory');
  }
  return first;
}
