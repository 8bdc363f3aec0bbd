/**
 * Starting one container (the kubelet's doBackOff, then startContainer, kuberuntime_manager.go /
 * kuberuntime_container.go): crash-loop backoff check, image, config, CreateContainer,
 * StartContainer, postStart hook. Every CRI call gets the sync's AbortSignal.
 *
 * CrashLoopBackOff: keyed by (pod UID, container name, spec hash). When the newest instance
 * exited at T and the key's backoff is D, the container is not started before T + D; the
 * failure says `back-off D restarting failed container=NAME pod=NAME_NS(UID)` (the kubelet's
 * format.Pod) and `requeueAfterMs` is the time left. Otherwise the backoff advances (10 s, 20 s,
 * 40 s, ... 5 min; forgotten after 10 min without a failure) and the container is started at
 * once: the first restart after a crash is immediate, as in the kubelet.
 *
 * restartCount = the newest instance's restartCount + 1 (0 for the first). The kubelet also
 * recovers the count from the log directory when the runtime lost its containers; shardlet
 * does not.
 */
import { PodEventReason, containerFieldPath, type PodEventRecorder } from './pod-events.js';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../src/shared/clock/clock.js';
import type { KeyValue, PodSandboxConfig } from '../../src/shared/cri/cri-types.js';
import type { MountsResult } from '../volumes/container-mounts.js';
import type { ManagedMountsFn } from './kubelet-managed-mounts.js';
import type { PodApiObjects } from '../../src/shared/protocol/api-object-snapshot.js';
import { isNotFound } from '../../src/shared/cri/cri-errors.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import type { Logger } from '../../src/shared/logging/logger.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { ContainerHashLabel } from '../../src/shared/kubetypes/kubelet-labels.js';
import { startedContainerStatus } from './post-sync-status.js';
import { formatGoDuration, type Backoff } from './backoff.js';
import { generateContainerConfig } from './container-config.js';
import { hashContainer } from './container-hash.js';
import type { EnsureImageResult, ImagePuller } from './image-puller.js';
import { killContainer } from './kill-pod.js';
import { errorMessage, rethrowIfAborted, type SyncFailure } from './kuberuntime-errors.js';
import { runLifecycleHandler } from './lifecycle-hooks.js';
import { findContainerStatusByName, formatPod, nsToMs, podUID } from './pod-spec.js';

/** The CRI mounts of a container (volume-backed; see workers/volumes/container-mounts.ts). */
export type ContainerMountsFn = (pod: V1Pod, container: V1Container, envs: readonly KeyValue[]) => Promise<MountsResult>;

export interface StartDeps {
  /** Set when the pod's volumes were set up for this sync; absent: no mounts. */
  mountsFor?: ContainerMountsFn | undefined;
  /** The pod's /etc/hosts and the termination-log file (kubelet-managed-mounts.ts); absent: neither. */
  managedMounts?: ManagedMountsFn | undefined;
  /** The pod's API objects for env valueFrom/envFrom (cluster mode). */
  apiObjects?: PodApiObjects | undefined;
  runtime: RuntimeService;
  puller: ImagePuller;
  crashBackoff: Backoff;
  clock: Clock;
  logger: Logger;
  nodeName: string;
  hostIP: string;
  events?: PodEventRecorder;
  /** Seccomp settings: `<root-dir>/seccomp` and --seccomp-default (default: /var/lib/shardlet/seccomp, off). */
  seccomp?: { profileRoot: string; defaultRuntimeProfile: boolean } | undefined;
  /** The container's oom_score_adj (oom-score-adj.ts); absent: left to the runtime. */
  oomScoreAdjOf?: ((pod: V1Pod, container: V1Container) => number) | undefined;
}

/** Seccomp settings when the deps name none (the agent's default root dir, no --seccomp-default). */
export const DEFAULT_SECCOMP = Object.freeze({ profileRoot: '/var/lib/shardlet/seccomp', defaultRuntimeProfile: false });

export interface StartInput {
  pod: V1Pod;
  container: V1Container;
  status: RuntimePodStatus;
  sandboxId: string;
  sandboxConfig: PodSandboxConfig;
  podIPs: readonly string[];
  signal: AbortSignal;
  /** An ephemeral container joining this container's PID namespace (ephemeral-containers.ts). */
  targetContainerId?: string;
}

/**
 * `started`: what the runtime now holds for this container, when this call created and started
 * it from an image with known facts (post-sync-status.ts); absent otherwise.
 */
export type StartOutcome =
  | { ok: true; containerId: string; started?: RuntimeContainerStatus }
  | { ok: false; failure: SyncFailure; requeueAfterMs?: number };

export function crashBackoffKey(pod: V1Pod, container: V1Container): string {
  return `${podUID(pod)}/${container.name}/${hashContainer(container)}`;
}

/** The image events of one ensureImageExists (the kubelet's image manager records them as it goes). */
function imageEvents(events: PodEventRecorder, pod: V1Pod, container: V1Container, field: string, image: EnsureImageResult): void {
  const userImage = container.image ?? '';
  if (image.ok) {
    if (image.pulledMs === undefined) events(pod, 'Normal', PodEventReason.Pulled, `Container image "${userImage}" already present on machine`, field);
    else {
      events(pod, 'Normal', PodEventReason.Pulling, `Pulling image "${userImage}"`, field);
      events(pod, 'Normal', PodEventReason.Pulled, `Successfully pulled image "${userImage}" in ${formatGoDuration(image.pulledMs)}`, field);
    }
    return;
  }
  const f = image.failure;
  if (f.reason === 'ImagePullBackOff') events(pod, 'Normal', PodEventReason.BackOff, f.message, field);
  else if (f.reason === 'ErrImagePull') {
    events(pod, 'Normal', PodEventReason.Pulling, `Pulling image "${userImage}"`, field);
    events(pod, 'Warning', PodEventReason.Failed, `Failed to pull image "${userImage}": ${f.message}`, field);
    events(pod, 'Warning', PodEventReason.Failed, `Error: ${f.reason}`, field);
  } else events(pod, 'Warning', PodEventReason.Failed, `Error: ${f.message}`, field);
}

/** The kubelet's doBackOff: a failure when the container must wait, else advances the backoff. */
export function checkCrashBackoff(deps: Pick<StartDeps, 'crashBackoff' | 'events'>, pod: V1Pod, container: V1Container, status: RuntimePodStatus): StartOutcome | undefined {
  const exited = status.containers.find((c) => c.name === container.name && c.state === 'CONTAINER_EXITED');
  if (!exited) return undefined;
  const finishedMs = nsToMs(exited.finishedAtNs) ?? 0;
  const key = crashBackoffKey(pod, container);
  const remaining = deps.crashBackoff.remainingSince(key, finishedMs);
  if (remaining > 0) {
    const delay = formatGoDuration(deps.crashBackoff.get(key));
    const message = `back-off ${delay} restarting failed container=${container.name} pod=${formatPod(pod)}`;
    deps.events?.(pod, 'Warning', PodEventReason.BackOff, `Back-off restarting failed container ${container.name} in pod ${formatPod(pod)}`, containerFieldPath(pod, container.name));
    return { ok: false, failure: { reason: 'CrashLoopBackOff', message, containerName: container.name }, requeueAfterMs: remaining };
  }
  deps.crashBackoff.next(key, finishedMs);
  return undefined;
}

/** Pull, create, start, postStart. The caller checks {@link checkCrashBackoff} first. */
export async function startContainer(deps: StartDeps, input: StartInput): Promise<StartOutcome> {
  const { pod, container, status, signal } = input;
  const name = container.name;
  const field = containerFieldPath(pod, name);
  const fail = (reason: SyncFailure['reason'], message: string): StartOutcome => {
    deps.events?.(pod, 'Warning', PodEventReason.Failed, `Error: ${message}`, field);
    return { ok: false, failure: { reason, message, containerName: name } };
  };

  const latest = findContainerStatusByName(status, name);
  // An interrupted create→start (the agent or a worker thread died between the two calls, or
  // the runtime lost the start's reply) leaves the newest instance CREATED, never started.
  // Start that one instead of creating another: nothing ran, so it is no restart, and no
  // created-never-started container is left behind. (The kubelet creates a new instance and
  // leaves the old one to its container GC.) Only when it belongs to the current sandbox and
  // its spec hash is current; if it is gone meanwhile, a new one is created as usual.
  if (latest?.state === 'CONTAINER_CREATED' && latest.podSandboxId === input.sandboxId && latest.hash === hashContainer(container)) {
    rethrowIfAborted(signal);
    try {
      await deps.runtime.startContainer(latest.id, { signal });
      deps.logger.v(2).info('Started container created by an interrupted sync', { containerName: name, containerId: latest.id });
      return await afterStart(deps, pod, container, latest.id, latest.restartCount, input.podIPs, signal);
    } catch (err) {
      rethrowIfAborted(signal);
      if (!isNotFound(err)) return fail('RunContainerError', errorMessage(err));
    }
  }

  const image = await deps.puller.ensureImageExists(podUID(pod), container, input.sandboxConfig, signal);
  if (deps.events) imageEvents(deps.events, pod, container, field, image);
  if (!image.ok) {
    const wait = deps.puller.remainingBackoff(podUID(pod), container);
    return wait > 0 ? { ok: false, failure: image.failure, requeueAfterMs: wait } : { ok: false, failure: image.failure };
  }

  // A CREATED newest instance never ran: its successor keeps its restart count.
  const restartCount = latest ? latest.restartCount + (latest.state === 'CONTAINER_CREATED' ? 0 : 1) : 0;
  // The kubelet's getImageUser: known from the ImageStatus that found the image, else asked now.
  let imageUser = image.facts?.user;
  if (!imageUser) {
    const u = await deps.puller.imageUser(container, signal);
    if (!u.ok) return fail('CreateContainerConfigError', u.message);
    imageUser = u.user;
  }
  const cfg = generateContainerConfig({
    pod, container, restartCount, imageRef: image.imageRef, imageUser, seccomp: deps.seccomp ?? DEFAULT_SECCOMP,
    env: { nodeName: deps.nodeName, hostIP: deps.hostIP, podIPs: input.podIPs, objects: deps.apiObjects },
    ...(deps.oomScoreAdjOf ? { oomScoreAdj: deps.oomScoreAdjOf(pod, container) } : {}),
    ...(input.targetContainerId !== undefined ? { targetContainerId: input.targetContainerId } : {}),
  });
  if (!cfg.ok) return fail('CreateContainerConfigError', cfg.message);
  if (deps.mountsFor) {
    const mounts = await deps.mountsFor(pod, container, cfg.config.envs ?? []);
    if (!mounts.ok) return fail('CreateContainerConfigError', mounts.message);
    if (mounts.mounts.length > 0) cfg.config.mounts = mounts.mounts;
  }
  if (deps.managedMounts) {
    // After the volumes, as the kubelet orders them: /etc/hosts, then the termination log.
    const extra = await deps.managedMounts(pod, container, input.podIPs);
    if (!extra.ok) return fail('CreateContainerConfigError', extra.message);
    if (extra.mounts.length > 0) cfg.config.mounts = [...(cfg.config.mounts ?? []), ...extra.mounts];
  }

  rethrowIfAborted(signal);
  let containerId: string;
  try {
    containerId = await deps.runtime.createContainer({ podSandboxId: input.sandboxId, config: cfg.config, sandboxConfig: input.sandboxConfig }, { signal });
  } catch (err) {
    rethrowIfAborted(signal);
    // The image went away behind the view's back: ask ImageStatus for it next time.
    if (isNotFound(err)) deps.puller.imageMissing(image.imageRef);
    return fail('CreateContainerError', errorMessage(err));
  }
  const createdAtMs = deps.clock.now();
  deps.events?.(pod, 'Normal', PodEventReason.Created, `Created container ${name}`, field);
  rethrowIfAborted(signal);
  try {
    await deps.runtime.startContainer(containerId, { signal });
  } catch (err) {
    rethrowIfAborted(signal);
    return fail('RunContainerError', errorMessage(err));
  }
  const startedAtMs = deps.clock.now();
  deps.events?.(pod, 'Normal', PodEventReason.Started, `Started container ${name}`, field);

  const out = await afterStart(deps, pod, container, containerId, restartCount, input.podIPs, signal);
  if (!out.ok || !image.facts) return out;
  return {
    ...out,
    started: startedContainerStatus({
      id: containerId, podSandboxId: input.sandboxId, name, createdAtMs, startedAtMs,
      image: image.facts.statusImage, imageRef: image.facts.statusImageRef,
      hash: cfg.config.annotations?.[ContainerHashLabel] ?? '', restartCount, attempt: cfg.config.metadata?.attempt ?? restartCount,
    }),
  };
}

/** The postStart hook of a started container (a failure kills it: FailedPostStartHook). */
async function afterStart(deps: StartDeps, pod: V1Pod, container: V1Container, containerId: string, restartCount: number, podIPs: readonly string[], signal: AbortSignal): Promise<StartOutcome> {
  const name = container.name;
  const postStart = container.lifecycle?.postStart;
  if (postStart) {
    const hook = await runLifecycleHandler(deps, { pod, container, containerId, handler: postStart, timeoutSeconds: 0, podIPs, signal });
    if (!hook.ok) {
      deps.logger.error('PostStartHook failed', { containerName: name, containerId, message: hook.message });
      // The kubelet's event leaves the message out, so secrets in it do not leak from the node.
      deps.events?.(pod, 'Warning', PodEventReason.FailedPostStartHook, 'PostStartHook failed', containerFieldPath(pod, name));
      await killContainer(deps, { pod, containerId, containerName: name, message: 'FailedPostStartHook', reason: 'FailedPostStartHook', signal });
      return { ok: false, failure: { reason: 'PostStartHookError', message: hook.message, containerName: name } };
    }
  }
  deps.logger.v(2).info('Started container', { containerName: name, containerId, restartCount });
  return { ok: true, containerId };
}
