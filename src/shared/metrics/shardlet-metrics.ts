/**
 * shardlet's own metrics (`shardlet_*`): what the kubelet has no name for because it has no
 * threads. Per-thread series carry a `thread` label whose value is the worker_threads
 * `threadId` of the observing thread ("0" is the main thread); the label is bounded by the pool
 * size plus replacements, never by pods.
 */
import { DEF_BUCKETS, defineMetric } from './metric-definition.js';

export const threadPodsOwned = defineMetric({
  name: 'shardlet_thread_pods_owned',
  help: 'Pods whose per-pod worker lives on this thread (any lifecycle state).',
  type: 'gauge', labelNames: ['thread'], observedOn: 'pod-worker',
});

export const threadQueueDepth = defineMetric({
  name: 'shardlet_thread_queue_depth',
  help: 'Pods on this thread with an update waiting for their per-pod loop to pick it up.',
  type: 'gauge', labelNames: ['thread'], observedOn: 'pod-worker',
});

export const threadBusySeconds = defineMetric({
  name: 'shardlet_thread_busy_seconds_total',
  help: 'Seconds this thread spent inside pod sync, terminate and cleanup work, summed over pods (the work of several pods overlaps while it waits on the runtime, so this can grow faster than wall time).',
  type: 'counter', labelNames: ['thread'], observedOn: 'pod-worker',
});

export const podSyncsSkippedTotal = defineMetric({
  name: 'shardlet_pod_syncs_skipped_total',
  help: 'Pod syncs asked for only by PLEG events and skipped because the pod, its cached runtime status and the network readiness were those of its last clean sync (the PLEG seeing what the pod worker itself just created).',
  type: 'counter', labelNames: [], observedOn: 'pod-worker',
});

export const threadRestartsTotal = defineMetric({
  name: 'shardlet_thread_restarts_total',
  help: 'Worker threads that exited unexpectedly and were replaced.',
  type: 'counter', labelNames: [], observedOn: 'main',
});

export const syncLoopIterationDuration = defineMetric({
  name: 'shardlet_sync_loop_iteration_duration_seconds',
  help: 'Duration in seconds of one syncLoop iteration on the main thread (handling one batch of config, PLEG or housekeeping events).',
  type: 'histogram', labelNames: [], buckets: DEF_BUCKETS, observedOn: 'main',
});

export const eventLoopDelay = defineMetric({
  name: 'shardlet_main_event_loop_delay_seconds',
  help: 'Main-thread event-loop delay (perf_hooks.monitorEventLoopDelay) since the previous scrape; stat is p50, p99 or max.',
  type: 'gauge', labelNames: ['stat'], observedOn: 'main',
});

export const plegEventsMainThreadSeconds = defineMetric({
  name: 'shardlet_pleg_events_main_thread_seconds_total',
  help: 'Seconds the main thread spent handling PLEG event batches (queueing them from the PLEG thread, then the sync loop handling them). The relist itself runs on the PLEG thread.',
  type: 'counter', labelNames: [], observedOn: 'main',
});

export const cacheSlotsUsed = defineMetric({
  name: 'shardlet_pod_cache_slots_used',
  help: 'Pod slots in use in the shared PLEG relist cache.',
  type: 'gauge', labelNames: [], observedOn: 'main',
});

export const cacheSlotsCapacity = defineMetric({
  name: 'shardlet_pod_cache_slots_capacity',
  help: 'Pod slots the shared PLEG relist cache has now (it grows on demand when every slot holds a pod, up to a maximum).',
  type: 'gauge', labelNames: [], observedOn: 'main',
});

/*
 * The pod cache's own counters live in its SharedArrayBuffer header (any thread may write the
 * cache); the main thread copies them into these series at each collection.
 */
export const cacheFullTotal = defineMetric({
  name: 'shardlet_pod_cache_full_total',
  help: 'Writes of a pod status refused because every slot of the pod cache held a pod and it could not grow any more.',
  type: 'counter', labelNames: [], observedOn: 'main',
});

export const cacheOversizeTotal = defineMetric({
  name: 'shardlet_pod_cache_oversize_total',
  help: 'Pod statuses stored as an ERR_CACHE_ENTRY_TOO_LARGE error entry instead (over the per-entry limit even without old exited instances, or no overflow slots left): the pod is not synced, and killed from the runtime listing.',
  type: 'counter', labelNames: [], observedOn: 'main',
});

export const cacheTrimmedTotal = defineMetric({
  name: 'shardlet_pod_cache_trimmed_total',
  help: 'Pod statuses stored without their old exited container instances to fit the per-entry limit.',
  type: 'counter', labelNames: [], observedOn: 'main',
});

export const cacheUnstoredPods = defineMetric({
  name: 'shardlet_pod_cache_unstored_pods',
  help: 'Pods the pod cache holds no usable status for: listed by the last PLEG relist but without a slot (cache full), or stored as an ERR_CACHE_ENTRY_TOO_LARGE placeholder. /healthz/podcache fails while this is non-zero.',
  type: 'gauge', labelNames: [], observedOn: 'main',
});

/**
 * Series a thread could not record because its shared-memory region was full. Computed by the
 * aggregator from region headers (never observed directly); non-zero means the region size
 * (`createMetricsArena({ slotBytes })`) is too small for the label cardinality.
 */
export const metricsSeriesDropped = defineMetric({
  name: 'shardlet_metrics_series_dropped_total',
  help: 'Metric series that a thread could not record because its shared metrics region was full.',
  type: 'counter', labelNames: [], observedOn: 'main',
});

/** Cluster mode: requests of the main API client, by verb (list, watch, patch, delete), resource and HTTP code ("error": no answer). */
export const apiRequestsTotal = defineMetric({
  name: 'shardlet_api_requests_total',
  help: 'Requests the main API client sent to the API server, by verb, resource and HTTP status code (error: no answer).',
  type: 'counter', labelNames: ['verb', 'resource', 'code'], observedOn: 'main',
});

/** Cluster mode: pod status PATCHes by result (sent, failed: kept and retried, dropped: 404/422, the pod is gone or recreated). */
export const podStatusPatchesTotal = defineMetric({
  name: 'shardlet_pod_status_patches_total',
  help: 'Pod status PATCHes to the API server by result: sent, failed (kept pending and retried), dropped (pod gone or recreated under another UID).',
  type: 'counter', labelNames: ['result'], observedOn: 'main',
});

/** Cluster mode: pod statuses replaced by a newer one (or found unchanged) before they were written. */
export const podStatusCoalescedTotal = defineMetric({
  name: 'shardlet_pod_status_coalesced_total',
  help: 'Pod statuses that were superseded by a newer status of the same pod before being written to the API server.',
  type: 'counter', labelNames: [], observedOn: 'main',
});

/** Cluster mode: requests of the unthrottled heartbeat client (Node, Lease), by verb, resource and HTTP code. */
export const heartbeatRequestsTotal = defineMetric({
  name: 'shardlet_heartbeat_api_requests_total',
  help: 'Requests the unthrottled heartbeat client (node status, node lease) sent to the API server, by verb, resource and HTTP status code (error: no answer).',
  type: 'counter', labelNames: ['verb', 'resource', 'code'], observedOn: 'main',
});

/**
 * Cluster mode: how late each node lease renewal's write was stamped (renewTime) and sent against
 * its 10 s schedule, and, apart, its requests' time to the answer being handled (node-lease.ts).
 */
export const nodeLeaseRenewLateness = defineMetric({
  name: 'shardlet_node_lease_renew_lateness_seconds',
  help: 'How late each node lease renewal was stamped and sent against its schedule (renewals are due every quarter of the lease duration).',
  type: 'histogram', labelNames: ['result'], observedOn: 'main',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 5, 10, 30],
});

export const nodeLeaseRenewRequestDuration = defineMetric({
  name: 'shardlet_node_lease_renew_request_duration_seconds',
  help: 'Node lease renewal requests, first sent to last answer handled (with a GET first when the lease was not known or changed); a busy main thread handles answers late.',
  type: 'histogram', labelNames: ['result'], observedOn: 'main',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 5, 10, 30],
});

/** Cluster mode: node status computations by outcome (patched, unchanged: nothing sent, failed). */
export const nodeStatusUpdatesTotal = defineMetric({
  name: 'shardlet_node_status_updates_total',
  help: 'Node status computations by outcome: patched (written to the API server), unchanged (nothing sent), failed.',
  type: 'counter', labelNames: ['result'], observedOn: 'main',
});

/** Cluster mode: mirror pod creates and deletes by result. */
export const mirrorPodOperationsTotal = defineMetric({
  name: 'shardlet_mirror_pod_operations_total',
  help: 'Mirror pod operations on the API server by operation (create, delete) and result (ok, failed).',
  type: 'counter', labelNames: ['operation', 'result'], observedOn: 'main',
});

/** Cluster mode: events by outcome (sent, aggregated, spam_filtered, dropped: queue full, failed). */
export const eventsTotal = defineMetric({
  name: 'shardlet_events_total',
  help: 'Kubernetes events by outcome: created, aggregated (an existing event patched), spam_filtered, dropped (the queue was full), failed.',
  type: 'counter', labelNames: ['result'], observedOn: 'main',
});

/**
 * The agent's own log lines lost to write errors (stderr on a full disk: ENOSPC; a closed pipe:
 * EPIPE). Each thread that writes stderr itself counts its own (main, which also writes the PLEG
 * thread's lines, and each pod-worker thread); the log says how many were lost once it recovers.
 */
export const logLinesDroppedTotal = defineMetric({
  name: 'shardlet_log_lines_dropped_total',
  help: 'Log lines of the agent that could not be written (e.g. stderr on a full disk) and were dropped.',
  type: 'counter', labelNames: [], observedOn: 'main',
});

/**
 * What each thread's V8 isolate holds (src/shared/metrics/thread-heap.ts), so a pod's and a
 * thread's memory cost can be read per thread (process RSS is one number for all threads).
 * `role`: main | pod-worker | pleg. `kind`: committed (heap pages in RAM), used (live objects
 * and garbage not yet collected), external (off-heap memory V8 knows of: ArrayBuffers, Buffers).
 * Pod-worker threads and the PLEG thread refresh their series every few seconds; main at scrape.
 */
export const threadHeapBytes = defineMetric({
  name: 'shardlet_thread_heap_bytes',
  help: 'Memory of one thread\'s V8 isolate in bytes, by kind: committed (heap pages resident), used (heap objects), external (ArrayBuffers and other off-heap memory V8 tracks). Sampled every few seconds on pod-worker and PLEG threads, at scrape on main.',
  type: 'gauge', labelNames: ['thread', 'role', 'kind'], observedOn: 'pod-worker',
});

export const SHARDLET_METRICS = Object.freeze([
  threadPodsOwned, threadQueueDepth, threadBusySeconds, podSyncsSkippedTotal, threadRestartsTotal, syncLoopIterationDuration,
  eventLoopDelay, plegEventsMainThreadSeconds, cacheSlotsUsed, cacheSlotsCapacity, cacheFullTotal, cacheOversizeTotal,
  cacheTrimmedTotal, cacheUnstoredPods, metricsSeriesDropped,
  apiRequestsTotal, podStatusPatchesTotal, podStatusCoalescedTotal, logLinesDroppedTotal,
  heartbeatRequestsTotal, nodeLeaseRenewLateness, nodeLeaseRenewRequestDuration, nodeStatusUpdatesTotal, mirrorPodOperationsTotal, eventsTotal,
  threadHeapBytes,
]);
