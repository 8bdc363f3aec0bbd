/**
 * The pod phase from its container statuses (the kubelet's getPhase, kubelet_pods.go), for pods
 * without sidecars:
 *
 *   Failed    an init container failed and restartPolicy is Never;
 *   Pending   an init container is pending/running, or an app container has not started yet;
 *   Running   every app container started and at least one runs (or, restartPolicy Always or
 *             OnFailure-with-a-failure, all are stopped and being restarted);
 *   Succeeded all app containers stopped with exit code 0 (restartPolicy not Always, or the pod
 *             is terminal: its containers were stopped for good);
 *   Failed    all stopped, at least one non-zero, and restartPolicy Never (or pod terminal).
 * "Pod terminal" does not apply to static pods (file/HTTP sources), as in the kubelet.
 *
 * The kubelet never produces Unknown here (the node controller sets it for unreachable nodes);
 * neither does shardlet.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { appContainers, initContainers, isStaticPod, restartPolicyOf } from './pod-spec.js';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export function isTerminalPhase(phase: string | undefined): phase is 'Succeeded' | 'Failed' {
  return phase === 'Succeeded' || phase === 'Failed';
}

export function getPhase(pod: V1Pod, statuses: readonly V1ContainerStatus[], podIsTerminal: boolean): PodPhase {
  const byName = new Map(statuses.map((s) => [s.name, s]));
  let pendingInit = 0;
  let failedInit = 0;
  for (const c of initContainers(pod)) {
    const s = byName.get(c.name);
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

  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
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
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  if (pendingInit > 0) return 'Pending';
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
