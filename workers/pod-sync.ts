/**
 * The seam between the per-pod loop (pod-workers.ts: ordering, coalescing, state machine) and
 * the runtime logic that makes one pod match its spec (kuberuntime/: the kubelet's SyncPod,
 * KillPod and cleanup). It runs on a worker thread (or inline with --workers 0) and only
 * returns data: the main thread gets results, never callbacks.
 *
 * Expected failures (image pull error, create error, runtime unavailable) are returned as
 * `error` next to the status, not thrown; a throw means a bug or an abort.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { WireError } from '../src/shared/cri/cri-errors.js';
import type { RuntimePodStatus } from '../src/shared/pod-cache/runtime-pod-status.js';
import type { ImagePullWindow, SyncPodType } from '../src/shared/protocol/pod-worker-protocol.js';

export interface SyncPodInput {
  updateType: SyncPodType;
  pod: V1Pod;
  /** The cached runtime status, at least as new as the end of the previous sync of this pod. */
  runtimeStatus: RuntimePodStatus;
  /** Aborted when a kill pre-empts this sync: stop issuing CRI calls and return. */
  signal: AbortSignal;
  /**
   * The last API status reported for this pod (the kubelet's status-manager cache): carries
   * lastTransitionTime, startTime and terminal phases over. Optional: the syncer falls back to
   * the last status it generated itself, then to pod.status.
   */
  previousStatus?: V1PodStatus;
  /**
   * Set while the runtime reports NetworkReady=false (the message to report): a pod that is
   * not host-network is not synced (the kubelet's syncPod returns "network is not ready"
   * before creating anything); its status is still generated.
   */
  networkNotReady?: string;
}

export interface SyncPodOutcome {
  /** The pod reached a terminal phase (Succeeded/Failed): the pod worker moves it to terminating. */
  isTerminal: boolean;
  /** The API status computed for this sync (the kubelet's generateAPIPodStatus). */
  apiStatus: V1PodStatus;
  /** The first error of the sync (e.g. ErrImagePull, CreateContainerError), as data. */
  error?: WireError;
  /** Ask to be synced again no later than this many ms from now (e.g. a backoff expiring). */
  requeueAfterMs?: number;
  /**
   * False when the sync issued no state-changing CRI call: the pre-sync runtime status is still
   * current, so the worker skips re-reading it (undefined: assume it changed).
   */
  runtimeChanged?: boolean;
  /**
   * The runtime status after this sync, derived from the answers of its own CRI calls, when they
   * tell it all (workers/kuberuntime/post-sync-status.ts): the worker publishes it instead of
   * re-reading the pod (4 CRI calls). Absent: re-read.
   */
  runtimeAfter?: RuntimePodStatus;
  /** When this pod's image pulls happened, if any were started (for the pod start SLI). */
  imagePullWindow?: ImagePullWindow;
}

export interface TerminatePodInput {
  pod: V1Pod;
  runtimeStatus: RuntimePodStatus;
  /**
   * Set when the cached status could not be used (the entry's error): `runtimeStatus` is a
   * placeholder and the syncer kills from the runtime's own listing of the pod's objects
   * (list-pod-objects.ts), as the kubelet kills a pod it has no status for.
   */
  statusUnknown?: WireError;
  /** Seconds to give each container between SIGTERM and SIGKILL (already reduced by any deletion override). */
  gracePeriodSeconds: number;
  signal: AbortSignal;
  /** As in SyncPodInput. */
  previousStatus?: V1PodStatus;
  /** KillOptions.terminalStatus: the terminated pod reports phase Failed with this reason and message. */
  terminalStatus?: { reason: string; message: string };
}

export interface TerminatePodOutcome {
  /** Status to report once the pod's containers are stopped (phase Succeeded/Failed for finished pods). */
  apiStatus: V1PodStatus;
  error?: WireError;
}

export interface CleanupPodInput {
  pod: V1Pod;
  runtimeStatus: RuntimePodStatus;
  /** As in TerminatePodInput (cleanup lists the pod's objects anyway; the placeholder adds none). */
  statusUnknown?: WireError;
  signal: AbortSignal;
  /** Leave the pod's log directory (orphans). */
  keepLogs?: boolean;
}

export interface PodSyncer {
  /** Make the runtime match the pod spec: sandbox, images, init and app containers. */
  syncPod(input: SyncPodInput): Promise<SyncPodOutcome>;
  /** Stop every container (preStop, grace period) and then the sandbox. Idempotent. */
  terminatePod(input: TerminatePodInput): Promise<TerminatePodOutcome>;
  /** Remove the pod's containers, sandboxes and log directory (after the pod is gone from config). */
  cleanupPod(input: CleanupPodInput): Promise<{ error?: WireError }>;
  /**
   * The API status for a runtime status, without CRI calls. When present, the pod worker
   * reports the status of the fresh runtime state read right after a sync (instead of the
   * status computed from the pre-sync state), so a restarted container shows as running now.
   */
  generateAPIStatus?(pod: V1Pod, runtimeStatus: RuntimePodStatus): V1PodStatus;
}
