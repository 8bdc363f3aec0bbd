/**
 * The pod phase from its container statuses (the kubelet's getPhase, kubelet_pods.go, 1.33):
 *
 *   Failed    a regular init container failed and restartPolicy is Never;
 *   Pending   a regular init container is pending/running, or a sidecar has not started yet
 *             (unless the pod has initialized before: a restarting sidecar does not send a
 *             running pod back to Pending), or a regular container has not started yet;
 *   Running   every regular container and sidecar started and at least one runs (or,
 *             restartPolicy Always or OnFailure-with-a-failure, all are stopped and being
 *             restarted);
 *   Succeeded all regular containers stopped with exit code 0 (restartPolicy not Always, or the
 *             pod is terminal: its containers were stopped for good);
 *   Failed    all stopped, at least one non-zero, and restartPolicy Never (or pod terminal).
 * Sidecars (restartable init containers) count as running while they run; a stopped sidecar
 * counts for nothing, so a Job-like pod whose regular containers finished succeeds or fails by
 * them alone. "Pod terminal" does not apply to static pods (file/HTTP sources), as in the kubelet.
 *
 * The kubelet never produces Unknown here (the node controller sets it for unreachable nodes);
 * neither does shardlet.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { appContainers, initContainers, isRestartableInitContainer, isStaticPod, restartPolicyOf } from './pod-spec.js';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export function isTerminalPhase(phase: string | undefined): phase is 'Succeeded' | 'Failed' {
  return phase === 'Succeeded' || phase === 'Failed';
}

/**
 * The kubelet's HasAnyActiveRegularContainerStarted: a regular container of the current sandbox
 * exists in the runtime (in any state), so initialization completed before.
 */
export function hasAnyActiveRegularContainerStarted(pod: V1Pod, status: RuntimePodStatus): boolean {
  const sandbox = status.sandboxes[0];
  if (!sandbox) return false;
  const names = new Set(appContainers(pod).map((c) => c.name));
  return status.containers.some((c) => names.has(c.name) && c.podSandboxId === sandbox.id);
}

/** The kubelet's HasAnyRegularContainerStarted (from API statuses): a regular container ran or runs. */
function hasAnyRegularContainerStarted(pod: V1Pod, statuses: readonly V1ContainerStatus[]): boolean {
  const names = new Set(appContainers(pod).map((c) => c.name));
  return statuses.some((s) => names.has(s.name) && (s.state?.running || s.state?.terminated));
}

/**
 * `podHasInitialized`: hasAnyActiveRegularContainerStarted of the runtime status (the caller
 * has it); without it, whether the API statuses show a regular container that started.
 */
export function getPhase(pod: V1Pod, statuses: readonly V1ContainerStatus[], podIsTerminal: boolean, podHasInitialized?: boolean): PodPhase {
  const byName = new Map(statuses.map((s) => [s.name, s]));
  let pendingInit = 0;
  let pendingSidecars = 0;
  let failedInit = 0;
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of initContainers(pod)) {
    const s = byName.get(c.name);
    if (isRestartableInitContainer(c)) {
      // Sidecars: running ones count (pending until started); stopped ones count for nothing.
      if (!s) {
        unknown++;
      } else if (s.state?.running) {
        if (s.started !== true) pendingSidecars++;
        running++;
      } else if (s.state?.terminated) {
        // not taken into account
      } else if (s.state?.waiting) {
        if (!s.lastState?.terminated) {
          pendingSidecars++;
          waiting++;
        }
      } else {
        pendingSidecars++;
        unknown++;
      }
      continue;
    }
    if (!s) {
      pendingInit++;
    } else if (s.state?.running) {
      pendingInit++;
    } else if (s.state?.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) {
        if (s.lastState.terminated.exitCode !== 0) failedInit++;
      } else {
        pendingInit++;
      }
    } else {
      pendingInit++;
    }
  }

  for (const c of appContainers(pod)) {
    const s = byName.get(c.name);
    if (!s) {
      unknown++;
    } else if (s.state?.running) {
      running++;
    } else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    } else {
      unknown++;
    }
  }

  const policy = restartPolicyOf(pod);
  const initialized = podHasInitialized ?? hasAnyRegularContainerStarted(pod, statuses);
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  if (pendingInit > 0 || (pendingSidecars > 0 && !initialized)) return 'Pending';
  if (waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (podIsTerminal && !isStaticPod(pod)) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}
