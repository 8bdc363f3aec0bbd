/**
 * The thread protocol between the main thread (sync loop, dispatcher) and the pod-worker
 * threads. Both sides import this module and nothing else of each other.
 *
 *   main → worker: a Piscina task (a {@link MainToWorker} message). Tasks are acknowledgements:
 *                  the worker enqueues the work and resolves at once, so the Piscina queue never
 *                  holds a pod's sync; ordering per pod is the worker's job (pod-workers.ts).
 *   worker → main: `parentPort.postMessage(WorkerToMain)`; Piscina re-emits non-protocol
 *                  messages as the pool's 'message' event. Inline mode calls the sink directly.
 *
 * Everything here is structured-clone safe: plain objects, no classes, errors as WireError.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { WireError } from '../src/cri/cri-errors.js';
import type { ProbeUpdate } from './prober/probe-results.js';
import type { ImagePullWindow } from './kuberuntime/image-puller.js';

export type { ImagePullWindow };
import type { SyncPodType } from './pod-sync.js';

/** The kubelet's pod worker lifecycle (pod_workers.go). */
export type PodWorkerState = 'syncing' | 'terminating' | 'terminated';

export interface KillOptions {
  /** Override for the pod's grace period (deletion grace); may only shorten it. */
  gracePeriodSeconds?: number;
  /** The pod is gone from config: once terminated, remove its CRI objects and forget it. */
  removed: boolean;
  /** Why (for logs): 'removed from source', 'rejected: OutOfpods', 'orphaned', … */
  reason: string;
  /**
   * Leave the pod's log directory in place at cleanup (orphans: the kubelet kills them with a
   * 1 s grace and leaves their logs to its garbage collection).
   */
  keepLogs?: boolean;
}

export interface PodUpdateMessage {
  kind: 'update';
  uid: string;
  updateType: SyncPodType;
  pod: V1Pod;
  /** Present when updateType is 'kill'. */
  kill?: KillOptions;
  /**
   * For a pod new to this worker: its first unit of work waits for a cache entry (or global
   * timestamp) newer than this wall-clock time (ms), instead of taking whatever the cache holds.
   * Set when a replaced thread's pods are re-dispatched: the dead thread may have acted on the
   * runtime after the last status it published (its fresh-status refresh was still pending), so
   * only a relist that started after its death is known to show everything it did. Without it,
   * the replacement re-created containers that were already running (name conflicts). The pool
   * dispatcher stamps every message to a shard after its thread died (the first message a
   * replacement sees for a pod may be any update queued during the restart, not the re-dispatch).
   */
  statusNotBeforeMs?: number;
}

export interface StatsRequestMessage {
  kind: 'stats';
}

export type MainToWorker = PodUpdateMessage | StatsRequestMessage;

export interface WorkerThreadStats {
  threadId: number;
  /** Pods this thread has a worker for (any state). */
  podsOwned: number;
  /** Pods with an update waiting to start. */
  queueDepth: number;
  /** Milliseconds spent inside sync/terminate/cleanup since the thread started. */
  busyMs: number;
}

/** Result of one unit of pod work, sent after every sync, termination and cleanup. */
export interface PodResultMessage {
  kind: 'podResult';
  threadId: number;
  uid: string;
  /** The worker's state after this work. */
  state: PodWorkerState;
  /** What ran: 'sync' | 'terminating' (containers stopped) | 'cleanup' (CRI objects removed). */
  work: 'sync' | 'terminate' | 'cleanup';
  apiStatus?: V1PodStatus;
  error?: WireError;
  /** Sync again after this many ms (the kubelet's jittered resync or a backoff expiry). */
  requeueAfterMs?: number;
  /** The pod is fully gone from the runtime and the worker forgot it. */
  forgotten?: boolean;
  /**
   * With `forgotten`: the pod-cache time (the worker's Clock.now()) at which its objects were
   * known gone. A cache entry for the pod stamped at or before it comes from a relist that began
   * before the removal (the PLEG may store it after the worker dropped the entry): housekeeping
   * must not take it for an orphan and kill the pod a second time.
   */
  forgottenAtMs?: number;
  /** When the pod's image pulls happened (sync results; kubelet_pod_start_sli_duration_seconds excludes it). */
  imagePullWindow?: ImagePullWindow;
  durationMs: number;
}

export interface ProbeUpdateMessage {
  kind: 'probe';
  threadId: number;
  update: ProbeUpdate;
}

export type WorkerToMain = PodResultMessage | ProbeUpdateMessage;

/** Data every pod-worker thread starts with (Piscina `workerData`). */
export interface PodWorkerThreadConfig {
  endpoint: string;
  cacheBuffer: SharedArrayBuffer;
  nodeName: string;
  hostIP: string;
  podLogsDir: string;
  runtimeName: string;
  verbosity: number;
  runtimeRequestTimeoutMs: number;
  syncFrequencyMs: number;
  /** The shared metrics arena (src/metrics/metrics-arena.ts). */
  metricsBuffer: SharedArrayBuffer;
}

export function isWorkerToMain(msg: unknown): msg is WorkerToMain {
  const k = (msg as { kind?: unknown } | null)?.kind;
  return k === 'podResult' || k === 'probe';
}
