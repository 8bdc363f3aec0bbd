/**
 * The thread protocol between the main thread (sync loop, dispatcher) and the pod-worker
 * threads. Both sides import this module and nothing else of each other.
 *
 * Threads are owned by a Piscina pool (src/main/dispatch/pool-dispatcher.ts), used as a thread
 * supervisor, not as a task queue: each thread runs ONE long-lived Piscina task, an
 * {@link AttachTask} carrying the MessagePort of its shard. Everything else travels over that
 * port, so one shard's traffic never waits behind another's in Piscina's single FIFO:
 *
 *   main → worker (port): {@link ShardInbound}: a batch of pod updates (coalesced per pod on the
 *                  main side, at most one batch in flight per shard: the bound of this path), a
 *                  stats request, or 'close'.
 *   worker → main (port): {@link ShardOutbound}: 'ready' once the thread's host is built (the
 *                  bootstrap handshake), 'ack' after each batch was handed to the pod workers,
 *                  stats replies, and the {@link WorkerToMain} results and probe updates (those
 *                  of one event-loop turn batched in a 'results' message).
 *   The attach task resolves when the port is closed ('close' from main) and rejects when the
 *   thread dies (Piscina rejects a dead thread's tasks): that is how the main side learns it.
 *
 * Per-pod ordering lives in the worker (pod-workers.ts); the main side keeps only the newest
 * update per pod (a kill is never replaced by a non-kill), which is all the worker would keep.
 * Inline mode (--workers 0) calls PodWorkerHost.handle and the sink directly.
 *
 * Everything here is structured-clone safe: plain objects, no classes, errors as WireError.
 */
import type { PodCgroupSettings } from '../cgroups/pod-cgroup-settings.js';
import type { MessagePort } from 'node:worker_threads';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { WireError } from '../cri/cri-errors.js';
import type { ProbeUpdate } from './probe-update.js';
import type { PodApiObjects } from './api-object-snapshot.js';
import type { NodeDnsSettings } from './node-dns-settings.js';

/** Why this sync happens (the kubelet's SyncPodType). */
export type SyncPodType = 'create' | 'update' | 'sync' | 'kill';

/**
 * When a pod's image pulls happened (wall-clock ms): the first PullImage started and the last
 * successful one finished, as the kubelet's pod startup latency tracker records them
 * (RecordImageStartedPulling / RecordImageFinishedPulling). kubelet_pod_start_sli_duration_seconds
 * excludes this window. `lastFinishedMs` is absent until a pull succeeded. Written by the
 * worker's ImagePuller (workers/kuberuntime/image-puller.ts), read by the main thread's metrics.
 */
export interface ImagePullWindow {
  firstStartedMs: number;
  lastFinishedMs?: number;
}

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
   * Terminate the pod even if this worker never knew it (an API pod that already had a
   * deletionTimestamp when this agent first saw it): stop what the runtime holds and report it
   * terminated. Without it such a kill is ignored (see PodWorkers.update).
   */
  terminateUnknown?: boolean;
  /**
   * Leave the pod's log directory in place at cleanup (orphans: the kubelet kills them with a
   * 1 s grace and leaves their logs to its garbage collection).
   */
  keepLogs?: boolean;
  /**
   * The kubelet's KillPodOptions.PodStatusFunc for a pod this node stops on its own (graceful
   * node shutdown, node-pressure eviction): once terminated the pod reports phase Failed with this reason and message.
   * Taken from the first kill that carries one while the pod is not yet terminated.
   */
  terminalStatus?: { reason: string; message: string };
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
   * timestamp) newer than this cache time (monotonic ms, cacheNow), instead of taking whatever the cache holds.
   * Set when a replaced thread's pods are re-dispatched: the dead thread may have acted on the
   * runtime after the last status it published (its fresh-status refresh was still pending), so
   * only a relist that started after its death is known to show everything it did. Without it,
   * the replacement re-created containers that were already running (name conflicts). The pool
   * dispatcher stamps every message to a shard after its thread died (the first message a
   * replacement sees for a pod may be any update queued during the restart, not the re-dispatch).
   */
  statusNotBeforeMs?: number;
  /**
   * The last API status the main thread holds for the pod (the kubelet's status-manager cache),
   * sent when the worker may not know the pod (a create, a re-dispatch after a thread restart):
   * its first sync carries startTime and condition transition times over instead of resetting
   * them (which would also extend activeDeadlineSeconds). Used once, when the worker creates
   * the pod's record.
   */
  previousStatus?: V1PodStatus;
  /**
   * The runtime's pod network is not ready (NetworkReady=false) as the main thread saw it when
   * it sent this update: the kubelet's "network is not ready: ..." message. A sync of a pod
   * that is not host-network then fails with it (no sandbox is created) and is retried after
   * the error backoff; kills are unaffected. Absent: the network is ready.
   */
  networkNotReady?: string;
  /**
   * Set on a 'sync' sent only because the PLEG saw the pod's runtime objects change (the
   * kubelet's HandlePodSyncs from plegCh), and kept through coalescing only while every merged
   * update was such a sync. The pod worker may skip it when nothing that sync would read has
   * changed since the pod's last clean sync (pod-workers.ts, "Skipped syncs"): the PLEG's event
   * for an object the worker itself created, in the state its own answers gave, changes nothing.
   */
  plegOnly?: boolean;
  /**
   * The configMaps, secrets and service-account tokens the pod refers to, and its service
   * environment variables, as the main thread resolved them (cluster mode: every non-kill update;
   * see src/shared/protocol/api-object-snapshot.ts for why they are pushed). Absent: unchanged
   * since the last update (standalone: none).
   */
  apiObjects?: PodApiObjects;
}

/**
 * What drives one thread's pod workers from a message (implemented by
 * workers/pod-worker-host.ts): the Piscina entry calls it for each port message, the inline
 * dispatcher (--workers 0) calls it directly on the main thread.
 */
export interface PodWorkerEndpoint {
  /** Handles one message; returns stats for a stats request, otherwise null (an acknowledgement). */
  handle(msg: MainToWorker): WorkerThreadStats | null;
  /** Stops the pod workers (idempotent). */
  close(): void;
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
  /**
   * The pod's API status after this work. Absent: no status (a cleanup, a pre-empted unit), or
   * a sync whose status equals the one in the pod's previous result (the worker sends a status
   * only when it changed: pod-workers.ts #withoutUnchangedStatus).
   */
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

/** Cluster mode: one pod event (Pulled, Created, Started, Killing, BackOff, ...) for the main thread's event recorder. */
export interface PodEventMessage {
  kind: 'podEvent';
  threadId: number;
  podUID: string;
  namespace: string;
  name: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  fieldPath?: string;
  /** Wall-clock ms when it happened. */
  timestampMs: number;
}

export type WorkerToMain = PodResultMessage | ProbeUpdateMessage | PodEventMessage;

/** The one Piscina task a pod-worker thread runs for its lifetime (see the module comment). */
export interface AttachTask {
  kind: 'attach';
  shard: number;
  port: MessagePort;
}

export type ShardInbound =
  | { kind: 'updates'; batch: PodUpdateMessage[] }
  | { kind: 'stats'; id: number }
  | { kind: 'close' };

export type ShardOutbound =
  | { kind: 'ready'; threadId: number }
  /** The results of one event-loop turn of the worker, in order (workers/shard-endpoint.ts). */
  | { kind: 'results'; batch: WorkerToMain[] }
  | { kind: 'ack' }
  | { kind: 'statsReply'; id: number; stats: WorkerThreadStats }
  | WorkerToMain;

/** Data every pod-worker thread starts with (Piscina `workerData`). */
export interface PodWorkerThreadConfig {
  endpoint: string;
  cacheBuffer: SharedArrayBuffer;
  nodeName: string;
  hostIP: string;
  podLogsDir: string;
  /** --root-dir: pod volumes live under `<rootDir>/pods/<uid>/volumes`. */
  rootDir: string;
  /** The node's DNS and hosts settings, read once at startup on the main thread. */
  dns: NodeDnsSettings;
  runtimeName: string;
  verbosity: number;
  runtimeRequestTimeoutMs: number;
  syncFrequencyMs: number;
  /** --max-parallel-pod-starts-per-thread (pod-start-gate.ts); absent = no bound. */
  maxParallelPodStarts?: number;
  /** The shared metrics arena (src/shared/metrics/metrics-arena.ts). */
  metricsBuffer: SharedArrayBuffer;
  /** Cluster mode: send pod events to the main thread (standalone: none are built). */
  recordEvents?: boolean;
  /** --seccomp-default: containers without a seccomp profile get RuntimeDefault (absent: Unconfined). */
  seccompDefault?: boolean;
  /**
   * Prune an app container's older dead instances right before restarting it (sync-pod.ts);
   * absent = true. The agent turns it off when the container GC's policy would keep more than
   * that prune keeps (agent-dispatch.ts).
   */
  pruneAppContainersBeforeStart?: boolean;
  /** --cgroups-per-qos: how pod cgroups are named and made (absent: none, no cgroupParent). */
  podCgroups?: PodCgroupSettings;
  /** The machine's memory capacity (bytes), for the containers' oom_score_adj. */
  memoryCapacityBytes?: number;
  /** Node allocatable memory in bytes (bounds memory-medium emptyDirs); unset: os.totalmem(). */
  nodeAllocatableMemoryBytes?: number;
}

/** The same update as a full sync: without `plegOnly` (another reason to sync joined it). */
export function withoutPlegOnly(msg: PodUpdateMessage): PodUpdateMessage {
  const { plegOnly: _full, ...rest } = msg;
  return rest;
}
