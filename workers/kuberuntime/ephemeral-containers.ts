/**
 * Ephemeral containers (`kubectl debug`, the pod's `ephemeralContainers` subresource), as the
 * kubelet runs them (kuberuntime_manager.go computePodActions / SyncPod step 5,
 * kuberuntime_container.go startSpec.getTargetID, determineEffectiveSecurityContext):
 *
 *  - one is started when the runtime holds no instance of it — once: an ephemeral container is
 *    never restarted, whatever the pod's restartPolicy and however it ended;
 *  - they start in the pod's current sandbox, never with a new one (a sandbox change starts the
 *    pod over without them; the next sync starts them), and even while initialization is not
 *    complete;
 *  - `targetContainerName`: when the pod's PID namespace mode is CONTAINER (no
 *    shareProcessNamespace, no hostPID), the container joins the target's PID namespace
 *    (NamespaceOption pid TARGET, target_id = the target's runtime id); the target must be
 *    running, else the start fails with "unable to find target container NAME";
 *  - each is validated before it starts (ephemeral-container-validation.ts): a bad one is
 *    refused alone, with CreateContainerConfigError and a message naming the field;
 *  - they are killed with the pod (killPod stops every container the runtime lists for it).
 * Pure: no I/O.
 */
import type { V1Container, V1EphemeralContainer, V1Pod } from '@kubernetes/client-node';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { formatFieldErrors } from '../../src/shared/manifest/field-error.js';
import { validateEphemeralContainer } from '../../src/shared/manifest/ephemeral-container-validation.js';
import { findContainerStatusByName } from './pod-spec.js';
import { namespaceOptionsForPod } from './sandbox-config.js';

export function ephemeralContainerSpecs(pod: V1Pod): readonly V1EphemeralContainer[] {
  return pod.spec?.ephemeralContainers ?? [];
}

/**
 * An ephemeral container as the start path takes a container (the kubelet's
 * `(*v1.Container)(&ec.EphemeralContainerCommon)`): everything but targetContainerName.
 */
export function asContainer(ec: V1EphemeralContainer): V1Container {
  const { targetContainerName: _target, ...common } = ec;
  return common;
}

/** Indexes into spec.ephemeralContainers of those the runtime never ran (the kubelet's EphemeralContainersToStart). */
export function ephemeralContainersToStart(pod: V1Pod, status: RuntimePodStatus): number[] {
  const out: number[] = [];
  ephemeralContainerSpecs(pod).forEach((ec, i) => {
    if (findContainerStatusByName(status, ec.name) === undefined) out.push(i);
  });
  return out;
}

export type EphemeralStartCheck =
  | { ok: true; container: V1Container; targetContainerId?: string }
  | { ok: false; containerName: string; message: string };

/**
 * Whether spec.ephemeralContainers[index] may start now, and the target container's runtime id
 * when its PID namespace is joined. A failure is a CreateContainerConfigError.
 */
export function checkEphemeralStart(pod: V1Pod, index: number, status: RuntimePodStatus): EphemeralStartCheck {
  const ec = ephemeralContainerSpecs(pod)[index];
  const name = typeof ec?.name === 'string' ? ec.name : '';
  const errs = validateEphemeralContainer(pod, index);
  if (errs.length > 0 || ec === undefined) return { ok: false, containerName: name, message: formatFieldErrors(errs) };
  const container = asContainer(ec);
  const targetName = ec.targetContainerName;
  if (targetName === undefined || targetName === '') return { ok: true, container };
  const target = findContainerStatusByName(status, targetName);
  if (target === undefined || target.state !== 'CONTAINER_RUNNING') {
    return { ok: false, containerName: name, message: `unable to find target container ${targetName}` };
  }
  // As the kubelet: the target's namespace replaces only a container-private one; a pod that
  // shares its PID namespace (or the host's) already shows every process to the container.
  if (namespaceOptionsForPod(pod).pid !== 'CONTAINER') return { ok: true, container };
  return { ok: true, container, targetContainerId: target.id };
}
