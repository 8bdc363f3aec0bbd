/**
 * The kubelet's sync errors (pkg/kubelet/container/sync_result.go, images/types.go), as data.
 *
 * A failed step of SyncPod produces a {@link SyncFailure}: the kubelet's reason string (what a
 * user sees as `state.waiting.reason`, e.g. `ErrImagePull`), the message shown next to it, and a
 * stable error code for callers that branch on it. Failures travel as {@link WireError}
 * (`{ code, message }`) across the worker boundary; the reason is recoverable from the code.
 */
import type { WireError } from '../../src/shared/cri/cri-errors.js';

/** Waiting reasons a failed start leaves on a container (the kubelet's exact strings). */
export type StartFailureReason =
  | 'ErrImagePull'
  | 'ImagePullBackOff'
  | 'ErrImageNeverPull'
  | 'ImageInspectError'
  | 'InvalidImageName'
  | 'CrashLoopBackOff'
  | 'CreateContainerConfigError'
  | 'CreateContainerError'
  | 'RunContainerError'
  | 'PostStartHookError';

/** Pod-level failures that are not a container's waiting reason. */
/** `FailedMount`: a volume could not be set up; nothing of the pod is started (the kubelet's event reason). */
export type PodFailureReason = 'CreatePodSandboxError' | 'KillPodSandboxError' | 'KillContainerError' | 'RemoveError' | 'FailedMount';

export type SyncFailureReason = StartFailureReason | PodFailureReason;

/** Whether a failure is a container's start failure (its waiting reason), not a pod-level one. */
export function isStartFailureReason(r: SyncFailureReason): r is StartFailureReason {
  return r !== 'CreatePodSandboxError' && r !== 'KillPodSandboxError' && r !== 'KillContainerError' && r !== 'RemoveError' && r !== 'FailedMount';
}

export type SyncErrorCode =
  | 'ERR_IMAGE_PULL'
  | 'ERR_IMAGE_PULL_BACKOFF'
  | 'ERR_IMAGE_NEVER_PULL'
  | 'ERR_IMAGE_INSPECT'
  | 'ERR_INVALID_IMAGE_NAME'
  | 'ERR_CRASH_LOOP_BACKOFF'
  | 'ERR_CREATE_CONTAINER_CONFIG'
  | 'ERR_CREATE_CONTAINER'
  | 'ERR_RUN_CONTAINER'
  | 'ERR_POST_START_HOOK'
  | 'ERR_CREATE_POD_SANDBOX'
  | 'ERR_KILL_POD_SANDBOX'
  | 'ERR_KILL_CONTAINER'
  | 'ERR_REMOVE'
  | 'ERR_FAILED_MOUNT';

const CODE_OF: Readonly<Record<SyncFailureReason, SyncErrorCode>> = Object.freeze({
  ErrImagePull: 'ERR_IMAGE_PULL',
  ImagePullBackOff: 'ERR_IMAGE_PULL_BACKOFF',
  ErrImageNeverPull: 'ERR_IMAGE_NEVER_PULL',
  ImageInspectError: 'ERR_IMAGE_INSPECT',
  InvalidImageName: 'ERR_INVALID_IMAGE_NAME',
  CrashLoopBackOff: 'ERR_CRASH_LOOP_BACKOFF',
  CreateContainerConfigError: 'ERR_CREATE_CONTAINER_CONFIG',
  CreateContainerError: 'ERR_CREATE_CONTAINER',
  RunContainerError: 'ERR_RUN_CONTAINER',
  PostStartHookError: 'ERR_POST_START_HOOK',
  CreatePodSandboxError: 'ERR_CREATE_POD_SANDBOX',
  KillPodSandboxError: 'ERR_KILL_POD_SANDBOX',
  KillContainerError: 'ERR_KILL_CONTAINER',
  RemoveError: 'ERR_REMOVE',
  FailedMount: 'ERR_FAILED_MOUNT',
});

/** One failed step: which reason, the user-facing message, and (for containers) which one. */
export interface SyncFailure {
  reason: SyncFailureReason;
  message: string;
  /** The container the failure belongs to, when it is a container step. */
  containerName?: string;
}

export function syncErrorCode(reason: SyncFailureReason): SyncErrorCode {
  return CODE_OF[reason];
}

export function failureToWire(f: SyncFailure): WireError {
  return { code: syncErrorCode(f.reason), message: f.message };
}

/** The detail of anything a CRI call threw, for messages (CriError messages name the operation). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Rethrow when the sync was aborted: an aborted sync is not a failure to record but a pre-emption
 * (the pod worker moved on), so it must not leave a waiting reason behind.
 */
export function rethrowIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason;
}
