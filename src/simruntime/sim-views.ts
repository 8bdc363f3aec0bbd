/**
 * Builds the CRI messages the simulated runtime answers with from its records, field by field
 * as containerd 1.6's CRI plugin fills them (toCRISandbox, toCRISandboxStatus, toCRIContainer,
 * toCRIContainerStatus). Pure functions of the records (plus `nowNs` where a timestamp is due).
 *
 * Deliberate differences from containerd 1.6, all additive: `imageId` is set (1.6 predates
 * the field; it equals imageRef here), and PodSandboxStatusResponse.timestamp is set.
 */
import type {
  Container,
  ContainerStatus,
  ImageSpec,
  PodSandbox,
  PodSandboxStatus,
  StringMap,
} from '../shared/cri/cri-types.js';
import type { ContainerRecord, SandboxRecord } from './sim-state.js';

/** containerd's reasons for exited containers (pkg/cri/server/helpers.go). */
export const REASON_COMPLETED = 'Completed';
export const REASON_ERROR = 'Error';
export const REASON_OOM = 'OOMKilled';
export const REASON_START_ERROR = 'StartError';

function copyMap(m: StringMap | undefined): StringMap {
  return { ...(m ?? {}) };
}

export function toCriSandbox(s: SandboxRecord): PodSandbox {
  return {
    id: s.id,
    metadata: { ...s.config.metadata },
    state: s.state,
    createdAt: s.createdAtNs,
    labels: copyMap(s.config.labels),
    annotations: copyMap(s.config.annotations),
    runtimeHandler: s.runtimeHandler,
  };
}

export type PodSandboxStatusWire = PodSandboxStatus & { linux: { namespaces: { options: unknown } } };

export function toCriSandboxStatus(s: SandboxRecord): PodSandboxStatusWire {
  const ns = s.config.linux?.securityContext?.namespaceOptions;
  return {
    id: s.id,
    metadata: { ...s.config.metadata },
    state: s.state,
    createdAt: s.createdAtNs,
    // containerd reports no IP once the network namespace is closed (StopPodSandbox).
    network: { ip: s.state === 'SANDBOX_READY' ? s.ip : '', additionalIps: [] },
    linux: { namespaces: { options: { network: ns?.network ?? 'POD', pid: ns?.pid ?? 'POD', ipc: ns?.ipc ?? 'POD' } } },
    labels: copyMap(s.config.labels),
    annotations: copyMap(s.config.annotations),
    runtimeHandler: s.runtimeHandler,
  };
}

function imageSpecOf(c: ContainerRecord): ImageSpec {
  return { ...c.config.image, annotations: copyMap(c.config.image.annotations) };
}

export function toCriContainer(c: ContainerRecord): Container {
  return {
    id: c.id,
    podSandboxId: c.sandboxId,
    metadata: { ...c.config.metadata },
    image: imageSpecOf(c),
    imageRef: c.imageId,
    state: c.state,
    createdAt: c.createdAtNs,
    labels: copyMap(c.config.labels),
    annotations: copyMap(c.config.annotations),
    imageId: c.imageId,
  };
}

export function toCriContainerStatus(c: ContainerRecord): ContainerStatus {
  // containerd: reason defaults by exit code once exited; OOMKilled/StartError/Unknown are set explicitly.
  let reason = c.reason;
  if (c.state === 'CONTAINER_EXITED' && reason === '') reason = c.exitCode === 0 ? REASON_COMPLETED : REASON_ERROR;
  return {
    id: c.id,
    metadata: { ...c.config.metadata },
    state: c.state,
    createdAt: c.createdAtNs,
    startedAt: c.startedAtNs,
    finishedAt: c.finishedAtNs,
    exitCode: c.exitCode,
    // containerd reports the resolved image name (first repo tag) here, not the request's string.
    image: { ...imageSpecOf(c), image: c.imageName },
    imageRef: c.imageId,
    reason,
    message: c.message,
    labels: copyMap(c.config.labels),
    annotations: copyMap(c.config.annotations),
    mounts: (c.config.mounts ?? []).map((m) => ({ ...m })),
    logPath: c.logPath,
    imageId: c.imageId,
  };
}

/** int64 nanoseconds (decimal string) of a wall-clock ms value. */
export function msToNs(ms: number): string {
  return (BigInt(Math.round(ms * 1000)) * 1000n).toString();
}
