/**
 * The per-pod bound on termination messages (the kubelet's status manager, normalizeStatus:
 * MaxPodTerminationMessageLogLength = 12 KiB shared evenly by the pod's init and app
 * containers): each container's state.terminated.message and lastState.terminated.message are
 * cut to 12 KiB / containers bytes, keeping the start (each file was already cut to its last
 * 4 KiB when read: runtime-status/termination-message.ts). A cut never splits a UTF-8 sequence.
 */
import type { V1ContainerState, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { truncateUtf8 } from '../../src/shared/text/utf8-bytes.js';

/** kubecontainer.MaxPodTerminationMessageLogLength. */
export const MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH = 12 * 1024;

export function bytesPerContainerStatus(pod: V1Pod): number {
  const n = (pod.spec?.containers?.length ?? 0) + (pod.spec?.initContainers?.length ?? 0);
  return n > 0 ? Math.floor(MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH / n) : MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH;
}

/** The state with its message cut, a new object (states may be shared with a previous status). */
function boundState(s: V1ContainerState | undefined, max: number): V1ContainerState | undefined {
  const t = s?.terminated;
  if (t?.message === undefined || Buffer.byteLength(t.message) <= max) return s;
  return { ...s, terminated: { ...t, message: truncateUtf8(t.message, max) } };
}

/** Replaces each status's over-long states (the statuses were just built for this pod). */
export function boundTerminationMessages(pod: V1Pod, statuses: readonly V1ContainerStatus[]): void {
  const max = bytesPerContainerStatus(pod);
  for (const s of statuses) {
    const state = boundState(s.state, max);
    if (state !== s.state && state !== undefined) s.state = state;
    const last = boundState(s.lastState, max);
    if (last !== s.lastState && last !== undefined) s.lastState = last;
  }
}
