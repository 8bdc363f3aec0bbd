/**
 * Garbage collection metrics (src/main/gc/): the kubelet's where it has one
 * (kubelet_image_garbage_collected_total, pkg/kubelet/metrics/metrics.go, with its `reason`
 * label: "space" for the disk-usage pass; "age" is the ImageMaximumGCAge pass, which shardlet
 * does not run), shardlet_ names where it has none (the kubelet's container GC only logs).
 * All observed on the main thread, where both GC loops run.
 */
import { DEF_BUCKETS, defineMetric } from './metric-definition.js';

export const imageGarbageCollectedTotal = defineMetric({
  name: 'kubelet_image_garbage_collected_total',
  help: 'Total number of images garbage collected by the kubelet, whether through disk usage or image age.',
  type: 'counter', labelNames: ['reason'], observedOn: 'main',
});

/** Objects the container GC removed: kind = container | sandbox. */
export const containerGcRemovedTotal = defineMetric({
  name: 'shardlet_container_gc_removed_total',
  help: 'Dead containers and sandboxes removed by the container garbage collector, by kind (container, sandbox) and result (ok, failed).',
  type: 'counter', labelNames: ['kind', 'result'], observedOn: 'main',
});

/** Removals left for the next pass because a pass reached its cap. */
export const containerGcDeferredTotal = defineMetric({
  name: 'shardlet_container_gc_deferred_total',
  help: 'Removals the container garbage collector planned but left to its next pass because the pass reached its cap.',
  type: 'counter', labelNames: [], observedOn: 'main',
});

/** Wall time of one GC pass (gc = container | image), CRI calls included. */
export const gcPassDuration = defineMetric({
  name: 'shardlet_gc_pass_duration_seconds',
  help: 'Duration in seconds of one garbage collection pass, by collector (container, image) and result (ok, failed).',
  type: 'histogram', labelNames: ['gc', 'result'], buckets: [...DEF_BUCKETS, 30, 60], observedOn: 'main',
});

export const GC_METRICS = Object.freeze([imageGarbageCollectedTotal, containerGcRemovedTotal, containerGcDeferredTotal, gcPassDuration]);
