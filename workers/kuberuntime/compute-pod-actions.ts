/**
 * What one sync must do to make the runtime match the spec: the kubelet's computePodActions
 * (kuberuntime_manager.go) for pods without sidecars. Pure: reads the
 * spec, the runtime status and probe results; issues no calls.
 *
 * Rules, in the kubelet's order:
 *  1. No ready sandbox (or more than one, or its network mode changed, or a pod-network sandbox
 *     lost its IP) → kill everything and create a sandbox with attempt = previous + 1, then run
 *     init containers from the first again. Exception: restartPolicy Never with containers that
 *     already ran → no new sandbox (the pod is done).
 *  2. Init containers run one at a time, in spec order, each to success before the next; a
 *     failed one is restarted unless restartPolicy is Never (then the pod is killed). Once any
 *     app container runs, initialization is over.
 *  3. App containers not running are started when ShouldContainerBeRestarted; running ones are
 *     killed (and restarted per policy) when their spec hash changed, or their liveness or
 *     startup probe failed.
 *  4. Nothing to keep and nothing to start → kill the pod (stop the sandbox).
 *
 * A pod with sidecars (restartable init containers) takes the kubelet's computeInitContainerActions
 * for rule 2 (sidecar-actions.ts): sidecars start in order, each gating the next init container
 * until started, and are kept running (restarted whatever the pod's restartPolicy). Rule 4 then
 * also stops them: once no regular container is kept or started, the pod is killed and no
 * sidecar is restarted, so sidecars never hold a finished Job-like pod.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { ProbeResultsReader } from '../prober/probe-results.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { hashContainer } from './container-hash.js';
import { computeInitContainerActions } from './sidecar-actions.js';
import { ephemeralContainersToStart } from './ephemeral-containers.js';
import {
  appContainers,
  findContainerStatusByName,
  hasRestartableInitContainer,
  initContainers,
  isDeletionRequested,
  isHostNetwork,
  restartPolicyOf,
  shouldRestartOnFailure,
} from './pod-spec.js';

export type KillReason = 'SpecChanged' | 'LivenessProbe' | 'StartupProbe' | 'InitContainerUnknown' | 'Unknown';

export interface ContainerToKill {
  name: string;
  container: V1Container;
  message: string;
  reason: KillReason;
}

export interface PodActions {
  /** Stop every running container and the sandbox(es) before anything else. */
  killPod: boolean;
  createSandbox: boolean;
  /** The current sandbox id ('' when a new one is needed and none exists). */
  sandboxId: string;
  /** Attempt for the new sandbox (or the current one's). */
  attempt: number;
  /** Index into spec.initContainers of the one init container to start, if any. */
  nextInitContainerToStart?: number;
  /**
   * Pods with sidecars: indexes into spec.initContainers to start, in spec order (the kubelet's
   * InitContainersToStart; sidecar-actions.ts). Empty for other pods.
   */
  initContainersToStart: number[];
  /** Indexes into spec.containers to start, in spec order. */
  containersToStart: number[];
  /** By CRI container id. */
  containersToKill: Map<string, ContainerToKill>;
  /** Indexes into spec.ephemeralContainers to start (ephemeral-containers.ts); empty with a new sandbox. */
  ephemeralContainersToStart: number[];
}

/** The kubelet's PodSandboxChanged. */
export function podSandboxChanged(pod: V1Pod, status: RuntimePodStatus): { changed: boolean; attempt: number; sandboxId: string } {
  const current = status.sandboxes[0];
  if (!current) return { changed: true, attempt: 0, sandboxId: '' };
  const readyCount = status.sandboxes.filter((s) => s.state === 'SANDBOX_READY').length;
  const nextAttempt = current.attempt + 1;
  if (readyCount > 1) return { changed: true, attempt: nextAttempt, sandboxId: current.id };
  if (current.state !== 'SANDBOX_READY') return { changed: true, attempt: nextAttempt, sandboxId: current.id };
  if (current.hostNetwork !== isHostNetwork(pod)) return { changed: true, attempt: nextAttempt, sandboxId: '' };
  if (!isHostNetwork(pod) && current.ip === '') return { changed: true, attempt: nextAttempt, sandboxId: current.id };
  return { changed: false, attempt: current.attempt, sandboxId: current.id };
}

/** The kubelet's ShouldContainerBeRestarted. */
export function shouldContainerBeRestarted(container: V1Container, pod: V1Pod, status: RuntimePodStatus): boolean {
  if (isDeletionRequested(pod)) return false;
  const cs = findContainerStatusByName(status, container.name);
  if (!cs) return true;
  if (cs.state === 'CONTAINER_RUNNING') return false;
  if (cs.state === 'CONTAINER_UNKNOWN' || cs.state === 'CONTAINER_CREATED') return true;
  const policy = restartPolicyOf(pod);
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && cs.exitCode === 0) return false;
  return true;
}

export function isInitContainerFailed(cs: RuntimeContainerStatus): boolean {
  return (cs.state === 'CONTAINER_EXITED' && cs.exitCode !== 0) || cs.state === 'CONTAINER_UNKNOWN';
}

function containerSucceeded(c: V1Container, status: RuntimePodStatus): boolean {
  const cs = findContainerStatusByName(status, c.name);
  return cs !== undefined && cs.state === 'CONTAINER_EXITED' && cs.exitCode === 0;
}

/**
 * The kubelet's findNextInitContainerToRun: the last failed init container's status and the
 * next one to run (an index), or done when initialization is complete.
 */
export function findNextInitContainerToRun(
  pod: V1Pod,
  status: RuntimePodStatus,
): { lastStatus?: RuntimeContainerStatus; next?: number; done: boolean } {
  const inits = initContainers(pod);
  if (inits.length === 0) return { done: true };
  const apps = new Set(appContainers(pod).map((c) => c.name));
  if (status.containers.some((c) => apps.has(c.name) && c.state === 'CONTAINER_RUNNING')) return { done: true };
  for (let i = inits.length - 1; i >= 0; i--) {
    const cs = findContainerStatusByName(status, inits[i]!.name);
    if (cs && isInitContainerFailed(cs)) return { lastStatus: cs, next: i, done: false };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const cs = findContainerStatusByName(status, inits[i]!.name);
    if (!cs) continue;
    if (cs.state === 'CONTAINER_RUNNING') return { done: false };
    if (cs.state === 'CONTAINER_EXITED') return i === inits.length - 1 ? { done: true } : { next: i + 1, done: false };
  }
  return { next: 0, done: false };
}

export function computePodActions(pod: V1Pod, status: RuntimePodStatus, probes?: ProbeResultsReader): PodActions {
  const sandbox = podSandboxChanged(pod, status);
  const actions: PodActions = {
    killPod: sandbox.changed,
    createSandbox: sandbox.changed,
    sandboxId: sandbox.sandboxId,
    attempt: sandbox.attempt,
    containersToStart: [],
    containersToKill: new Map(),
    initContainersToStart: [],
    ephemeralContainersToStart: [],
  };
  const apps = appContainers(pod);

  if (sandbox.changed) {
    if (!shouldRestartOnFailure(pod) && sandbox.attempt !== 0 && status.containers.length > 0) {
      // Never-restart pod whose containers already ran: do not start it again.
      actions.createSandbox = false;
      return actions;
    }
    if (initContainers(pod).length > 0) {
      actions.nextInitContainerToStart = 0;
      return actions;
    }
    apps.forEach((c, i) => {
      if (restartPolicyOf(pod) === 'OnFailure' && containerSucceeded(c, status)) return;
      actions.containersToStart.push(i);
    });
    return actions;
  }

  // As the kubelet: ephemeral containers may start even while initialization is not complete.
  actions.ephemeralContainersToStart = ephemeralContainersToStart(pod, status);

  // Pods with sidecars: the kubelet's computeInitContainerActions instead of the classic walk.
  const sidecarInit = hasRestartableInitContainer(pod) ? computeInitContainerActions(pod, status, probes, actions.containersToKill) : undefined;
  if (sidecarInit) {
    actions.initContainersToStart = sidecarInit.toStart;
    if (sidecarInit.killPod) actions.killPod = true;
    if (sidecarInit.killPod || !sidecarInit.initialized) return actions;
  }
  const init = sidecarInit ? { done: true } : findNextInitContainerToRun(pod, status);
  if (!init.done) {
    if (init.next !== undefined) {
      const failed = init.lastStatus !== undefined && isInitContainerFailed(init.lastStatus);
      if (failed && !shouldRestartOnFailure(pod)) {
        actions.killPod = true;
      } else {
        if (init.lastStatus?.state === 'CONTAINER_UNKNOWN') {
          const c = initContainers(pod)[init.next]!;
          actions.containersToKill.set(init.lastStatus.id, {
            name: c.name, container: c, reason: 'InitContainerUnknown',
            message: `Init container ${c.name} is in "unknown" state, try killing it before restart`,
          });
        }
        actions.nextInitContainerToStart = init.next;
      }
    }
    return actions;
  }

  let keepCount = 0;
  apps.forEach((c, i) => {
    const cs = findContainerStatusByName(status, c.name);
    if (!cs || cs.state !== 'CONTAINER_RUNNING') {
      if (shouldContainerBeRestarted(c, pod, status)) {
        actions.containersToStart.push(i);
        // As the kubelet: a container in unknown state may still be running; stop it before
        // starting another instance, or two copies could run.
        if (cs?.state === 'CONTAINER_UNKNOWN') {
          actions.containersToKill.set(cs.id, { name: c.name, container: c, reason: 'Unknown', message: `Container is in "unknown" state, try killing it before restart` });
        }
      }
      return;
    }
    let restart = shouldRestartOnFailure(pod);
    let message: string;
    let reason: KillReason;
    if (cs.hash !== hashContainer(c)) {
      message = `Container ${c.name} definition changed`;
      reason = 'SpecChanged';
      restart = true;
    } else if (probes?.get(cs.id, 'liveness') === 'failure') {
      message = `Container ${c.name} failed liveness probe`;
      reason = 'LivenessProbe';
    } else if (probes?.get(cs.id, 'startup') === 'failure') {
      message = `Container ${c.name} failed startup probe`;
      reason = 'StartupProbe';
    } else {
      keepCount++;
      return;
    }
    if (restart) {
      message += ', will be restarted';
      actions.containersToStart.push(i);
    }
    actions.containersToKill.set(cs.id, { name: c.name, container: c, message, reason });
  });

  if (keepCount === 0 && actions.containersToStart.length === 0) {
    actions.killPod = true;
    // Sidecars must not keep a finished pod alive: none is restarted.
    actions.initContainersToStart = [];
  }
  return actions;
}
