/**
 * The PLEG thread protocol: the messages between the main-thread spawner (the lead's
 * pleg-runner) and workers/pleg/pleg-thread.ts. Both sides import this module; nothing else
 * crosses the boundary. The pod cache itself is shared memory (cacheBuffer), not messages.
 *
 * Timeline: spawn Worker(pleg-thread.js, { workerData: PlegStartOptions }) → 'started' (or
 * 'fatal' and exit) → per relist one 'relist' message (events batched) and one 'health' →
 * main sends 'ack' with the number of events it consumed (frees capacity) → main sends
 * 'stop' → thread drains the relist in progress, posts 'stopped', exits.
 *
 * A standby thread (`standby: true`, the runner's warm spare) boots the same way — modules
 * loaded, cache attached, CRI channel connected — then posts 'ready' and waits: no relist, no
 * health, no cache write until main sends 'activate', after which it behaves as above from
 * 'started'. A replacement then costs no thread boot (the module graph with grpc-js takes
 * 0.25 s idle and several seconds on a loaded 2-core machine).
 *
 * Times are cache time: Clock.monotonic() ms, one process-wide base (see pod-cache.ts cacheNow).
 */
import type { WireError } from '../cri/cri-errors.js';
import type { PodLifecycleEvent } from '../pleg/pod-lifecycle-event.js';
import type { ThreadHeapSample } from '../metrics/thread-heap.js';

/** The PLEG's counters (GenericPleg.counters()), carried by every health snapshot. */
export interface PlegCounters {
  relistTotal: number;
  /** Relists that found nothing changed since a settled relist and only moved the cache's time (GenericPleg #quiet). */
  quietRelistsTotal: number;
  relistErrorsTotal: number;
  discardEventsTotal: number;
  inspectErrorsTotal: number;
  cacheFullTotal: number;
  /** Pods whose handling threw in a relist (a cache error); the relist went on with the others. */
  podErrorsTotal: number;
  inspectCallsTotal: number;
  /** Objects whose details came from a pod worker's published entry instead of an inspection call. */
  inspectsFromPublishedTotal: number;
  /** Objects whose inspection waited a relist for their pod worker's publish (bulk-pod-status.ts build). */
  inspectsDeferredTotal: number;
  podsTracked: number;
  eventsInFlight: number;
}

/**
 * The kubelet's updateRunningPodAndContainerMetrics, computed from one relist's listing
 * (workers/pleg/pleg-runtime-counts.ts): pods (kubelet-labelled, orphans included) with a ready
 * sandbox, and container instances by state.
 */
export interface RuntimeCounts {
  runningPods: number;
  containers: { created: number; running: number; exited: number; unknown: number };
}

export interface PlegStartOptions {
  /** CRI endpoint, unix:///path. */
  endpoint: string;
  /** The pod cache's SharedArrayBuffer (createPodCache().buffer). */
  cacheBuffer: SharedArrayBuffer;
  /** Default 1000 (kubelet: 1 s). */
  relistPeriodMs: number;
  /** Default 180000 (kubelet: 3 min). */
  relistThresholdMs: number;
  /** Max events sent and not yet acked (kubelet's plegChannelCapacity: 1000). */
  eventCapacity?: number;
  /** Inspection calls in flight per relist (default 16). */
  inspectConcurrency?: number;
  /** Log verbosity (-v). */
  verbosity?: number;
  /** Also post 'health' this often when relists stall (default 10 s). */
  healthIntervalMs?: number;
  /** Boot, post 'ready' and wait for 'activate' before the first relist (a warm spare). */
  standby?: boolean;
  /** --root-dir: termination-message files are read only below `<rootDir>/pods` (termination-message.ts). */
  rootDir?: string;
}

export const PLEG_THREAD_DEFAULTS = Object.freeze({ healthIntervalMs: 10_000 });

/** main → PLEG thread */
export type PlegInbound =
  | { type: 'ack'; count: number }
  /** A standby thread starts relisting (ignored by a thread already started). */
  | { type: 'activate' }
  /** Graceful: finish the relist in progress, then exit. */
  | { type: 'stop' };

export interface PlegHealthSnapshot {
  healthy: boolean;
  reason: string;
  /** Last successful relist start (cache time, monotonic ms), null before the first. */
  lastRelistMs: number | null;
  counters: PlegCounters;
}

/** PLEG thread → main */
export type PlegOutbound =
  /** A standby thread booted and waits for 'activate'. */
  | { type: 'ready' }
  | { type: 'started' }
  | {
      type: 'relist';
      timestampMs: number;
      ok: boolean;
      durationSeconds: number;
      intervalSeconds: number | null;
      /** This relist's events, in order (one message per relist). */
      events: PodLifecycleEvent[];
      discarded: number;
      /** Successful relists: what was listed (kubelet_running_pods / _containers). */
      runtimeCounts?: RuntimeCounts;
      /** The PLEG thread's isolate after this relist (shardlet_thread_heap_bytes{thread="pleg"}). */
      heap?: ThreadHeapSample;
    }
  | { type: 'health'; health: PlegHealthSnapshot }
  /** One JSON log line (logger.ts format), for the main thread's log sink. */
  | { type: 'log'; line: string }
  | { type: 'stopped' }
  | { type: 'fatal'; error: WireError };

export function isPlegInbound(m: unknown): m is PlegInbound {
  if (typeof m !== 'object' || m === null) return false;
  const t = (m as { type?: unknown }).type;
  return (t === 'ack' && typeof (m as { count?: unknown }).count === 'number') || t === 'stop' || t === 'activate';
}
