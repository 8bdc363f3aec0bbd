/**
 * The kubelet's own metrics, with the kubelet's names, types, label names and buckets
 * (pkg/kubelet/metrics/metrics.go and pkg/kubelet/prober/prober_manager.go), so dashboards and
 * alerts written for the kubelet work unchanged against shardlet.
 *
 * Where it is observed in shardlet (`observedOn`):
 *   pod-worker  the per-pod loop on worker threads: pod worker durations, every CRI call
 *               (runtime operations, run_podsandbox), started pods/containers, probes.
 *               With `--workers 0` the main thread observes these through the same API.
 *   pleg        the PLEG relist loop: relist duration/interval, last seen, discarded events.
 *   main        the pod manager / sync loop: pod counts, pod start latency, orphaned pods.
 *
 * Deliberate differences from the kubelet, each for a reason:
 *   - counters keep the kubelet's names even where promtool wants `_total`
 *     (kubelet_pleg_discard_events); renaming would break existing queries.
 *   - label sets are the kubelet's, including the per-pod labels of prober_probe_total and
 *     prober_probe_duration_seconds (the only per-pod cardinality shardlet exposes).
 */
import { DEF_BUCKETS, defineMetric, exponentialBuckets } from './metric-definition.js';

/** podStartupDurationBuckets in metrics.go. */
export const POD_STARTUP_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600,
]);

export const podStartDuration = defineMetric({
  name: 'kubelet_pod_start_duration_seconds',
  help: 'Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run',
  type: 'histogram', labelNames: [], buckets: POD_STARTUP_DURATION_BUCKETS, observedOn: 'main',
});

export const podStartSliDuration = defineMetric({
  name: 'kubelet_pod_start_sli_duration_seconds',
  help: 'Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
  type: 'histogram', labelNames: [], buckets: POD_STARTUP_DURATION_BUCKETS, observedOn: 'main',
});

export const podWorkerDuration = defineMetric({
  name: 'kubelet_pod_worker_duration_seconds',
  help: 'Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync',
  type: 'histogram', labelNames: ['operation_type'], buckets: DEF_BUCKETS, observedOn: 'pod-worker',
});

export const podWorkerStartDuration = defineMetric({
  name: 'kubelet_pod_worker_start_duration_seconds',
  help: 'Duration in seconds from kubelet seeing a pod to starting a worker.',
  type: 'histogram', labelNames: [], buckets: DEF_BUCKETS, observedOn: 'pod-worker',
});

export const plegRelistDuration = defineMetric({
  name: 'kubelet_pleg_relist_duration_seconds',
  help: 'Duration in seconds for relisting pods in PLEG.',
  type: 'histogram', labelNames: [], buckets: DEF_BUCKETS, observedOn: 'pleg',
});

export const plegRelistInterval = defineMetric({
  name: 'kubelet_pleg_relist_interval_seconds',
  help: 'Interval in seconds between relisting in PLEG.',
  type: 'histogram', labelNames: [], buckets: DEF_BUCKETS, observedOn: 'pleg',
});

export const plegLastSeen = defineMetric({
  name: 'kubelet_pleg_last_seen_seconds',
  help: 'Timestamp in seconds when PLEG was last seen active.',
  type: 'gauge', labelNames: [], observedOn: 'pleg',
});

export const plegDiscardEvents = defineMetric({
  name: 'kubelet_pleg_discard_events',
  help: 'The number of discard events in PLEG.',
  type: 'counter', labelNames: [], observedOn: 'pleg',
});

export const runningPods = defineMetric({
  name: 'kubelet_running_pods',
  help: 'Number of pods that have a running pod sandbox',
  type: 'gauge', labelNames: [], observedOn: 'main',
});

export const runningContainers = defineMetric({
  name: 'kubelet_running_containers',
  help: 'Number of containers currently running',
  type: 'gauge', labelNames: ['container_state'], observedOn: 'main',
});

export const desiredPods = defineMetric({
  name: 'kubelet_desired_pods',
  help: 'The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.',
  type: 'gauge', labelNames: ['static'], observedOn: 'main',
});

export const activePods = defineMetric({
  name: 'kubelet_active_pods',
  help: 'The number of pods the kubelet considers active and which are being considered when admitting new pods. static is true if the pod is not from the apiserver.',
  type: 'gauge', labelNames: ['static'], observedOn: 'main',
});

export const workingPods = defineMetric({
  name: 'kubelet_working_pods',
  help: 'Number of pods the kubelet is actually running, broken down by lifecycle phase, whether the pod is desired, orphaned, or runtime only (also orphaned), and whether the pod is static. An orphaned pod has been removed from local configuration or force deleted in the API and consumes resources that are not otherwise visible.',
  type: 'gauge', labelNames: ['lifecycle', 'config', 'static'], observedOn: 'main',
});

export const orphanedRuntimePodsTotal = defineMetric({
  name: 'kubelet_orphaned_runtime_pods_total',
  help: 'Number of pods that have been detected in the container runtime without being already known to the pod worker. This typically indicates the kubelet was restarted while a pod was force deleted in the API or in the local configuration, which is unusual.',
  type: 'counter', labelNames: [], observedOn: 'main',
});

export const runtimeOperationsTotal = defineMetric({
  name: 'kubelet_runtime_operations_total',
  help: 'Cumulative number of runtime operations by operation type.',
  type: 'counter', labelNames: ['operation_type'], observedOn: 'pod-worker',
});

export const runtimeOperationsDuration = defineMetric({
  name: 'kubelet_runtime_operations_duration_seconds',
  help: 'Duration in seconds of runtime operations. Broken down by operation type.',
  type: 'histogram', labelNames: ['operation_type'], buckets: exponentialBuckets(0.005, 2.5, 14), observedOn: 'pod-worker',
});

export const runtimeOperationsErrorsTotal = defineMetric({
  name: 'kubelet_runtime_operations_errors_total',
  help: 'Cumulative number of runtime operation errors by operation type.',
  type: 'counter', labelNames: ['operation_type'], observedOn: 'pod-worker',
});

export const runPodSandboxDuration = defineMetric({
  name: 'kubelet_run_podsandbox_duration_seconds',
  help: 'Duration in seconds of the run_podsandbox operations. Broken down by RuntimeClass.Handler.',
  type: 'histogram', labelNames: ['runtime_handler'], buckets: DEF_BUCKETS, observedOn: 'pod-worker',
});

export const runPodSandboxErrorsTotal = defineMetric({
  name: 'kubelet_run_podsandbox_errors_total',
  help: 'Cumulative number of the run_podsandbox operation errors by RuntimeClass.Handler.',
  type: 'counter', labelNames: ['runtime_handler'], observedOn: 'pod-worker',
});

export const startedPodsTotal = defineMetric({
  name: 'kubelet_started_pods_total',
  help: 'Cumulative number of pods started',
  type: 'counter', labelNames: [], observedOn: 'pod-worker',
});

export const startedPodsErrorsTotal = defineMetric({
  name: 'kubelet_started_pods_errors_total',
  help: 'Cumulative number of errors when starting pods',
  type: 'counter', labelNames: [], observedOn: 'pod-worker',
});

export const startedContainersTotal = defineMetric({
  name: 'kubelet_started_containers_total',
  help: 'Cumulative number of containers started',
  type: 'counter', labelNames: ['container_type'], observedOn: 'pod-worker',
});

export const startedContainersErrorsTotal = defineMetric({
  name: 'kubelet_started_containers_errors_total',
  help: 'Cumulative number of errors when starting containers',
  type: 'counter', labelNames: ['container_type', 'code'], observedOn: 'pod-worker',
});

export const containersPerPodCount = defineMetric({
  name: 'kubelet_containers_per_pod_count',
  help: 'The number of containers per pod.',
  type: 'histogram', labelNames: [], buckets: exponentialBuckets(1, 2, 5), observedOn: 'pod-worker',
});

export const proberProbeTotal = defineMetric({
  name: 'prober_probe_total',
  help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
  type: 'counter', labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
  observedOn: 'pod-worker', perPod: true,
});

export const proberProbeDuration = defineMetric({
  name: 'prober_probe_duration_seconds',
  help: 'Duration in seconds for a probe response.',
  type: 'histogram', labelNames: ['probe_type', 'container', 'pod', 'namespace'], buckets: DEF_BUCKETS,
  observedOn: 'pod-worker', perPod: true,
});

/** Pods evicted, by the signal that evicted them (eviction/metrics: `emptydirfs.limit` for an emptyDir past its sizeLimit). */
export const evictions = defineMetric({
  name: 'kubelet_evictions',
  help: 'Cumulative number of pod evictions by eviction signal',
  type: 'counter', labelNames: ['eviction_signal'], observedOn: 'pod-worker',
});

/** Cluster mode: first status change of a pod → the API server acknowledged the write (status_manager.go). */
export const podStatusSyncDuration = defineMetric({
  name: 'kubelet_pod_status_sync_duration_seconds',
  help: 'Duration in seconds to sync a pod status update. Measures time from detection of a change to pod status until the API is successfully updated for that pod, even if multiple intevening changes to pod status occur.',
  type: 'histogram', labelNames: [], buckets: Object.freeze([0.01, 0.05, 0.1, 0.5, 1, 5, 10, 20, 30, 45, 60]), observedOn: 'main',
});

/** Every kubelet metric shardlet exposes, in exposition order. */
export const KUBELET_METRICS = Object.freeze([
  podStartDuration, podStartSliDuration, podWorkerDuration, podWorkerStartDuration,
  plegRelistDuration, plegRelistInterval, plegLastSeen, plegDiscardEvents,
  runningPods, runningContainers, desiredPods, activePods, workingPods, orphanedRuntimePodsTotal,
  runtimeOperationsTotal, runtimeOperationsDuration, runtimeOperationsErrorsTotal,
  runPodSandboxDuration, runPodSandboxErrorsTotal,
  startedPodsTotal, startedPodsErrorsTotal, startedContainersTotal, startedContainersErrorsTotal,
  containersPerPodCount, proberProbeTotal, proberProbeDuration, podStatusSyncDuration, evictions,
]);
