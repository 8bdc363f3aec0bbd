/**
 * Garbage collection wiring on the main thread (the kubelet's StartGarbageCollection): the
 * container/sandbox GC (a pass at start, then every minute) and the image GC (a pass at start,
 * then every 5 minutes; none with --image-gc-high-threshold 100), both over the agent's CRI
 * client, their metrics, and their node events (ContainerGCFailed, ImageGCFailed,
 * InvalidDiskCapacity, FreeDiskSpaceFailed) in cluster mode.
 *
 * Why the main thread: each pass is two or three CRI listings and a plan linear in them, then
 * removals that are CRI round trips the event loop only waits on, one at a time, at most a
 * capped number per pass (bench/container-gc-pass.ts measures a pass at 5,000 dead containers).
 * That is the same shape as log rotation, which runs here too; a pod-worker thread would
 * need the pod manager's answer ("is this pod gone?") carried across the thread protocol.
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { CriClient } from '../../shared/cri/cri-client.js';
import type { Logger } from '../../shared/logging/logger.js';
import * as gm from '../../shared/metrics/gc-metrics.js';
import type { EventRecorder } from '../events/event-recorder.js';
import { ContainerGc } from '../gc/container-gc.js';
import { statfsCapacity, type FsCapacitySource } from '../gc/image-fs-stats.js';
import { ImageGcManager } from '../gc/image-gc-manager.js';
import type { MetricsSystem } from '../metrics/main-metrics.js';
import type { AgentConfig } from './agent-config.js';

export interface AgentGcDeps {
  config: AgentConfig;
  clock: Clock;
  logger: Logger;
  runtime: CriClient;
  metrics: MetricsSystem;
  /** Cluster mode: node events. */
  recorder: EventRecorder | undefined;
  sourcesReady: () => boolean;
  isPodGone: (uid: string) => boolean;
  /** Where image-filesystem capacity comes from (default: statfs of ImageFsInfo's mountpoint). */
  capacity?: FsCapacitySource;
}

export interface AgentGc {
  readonly containers: ContainerGc;
  readonly images: ImageGcManager;
  start(): void;
  close(): Promise<void>;
}

export function createAgentGc(d: AgentGcDeps): AgentGc {
  const { config: c, clock, logger, runtime, metrics, recorder } = d;
  const rec = metrics.main.recorder;
  const removed = rec.counter(gm.containerGcRemovedTotal);
  const deferred = rec.counter(gm.containerGcDeferredTotal);
  const passes = rec.histogram(gm.gcPassDuration);
  const images = rec.counter(gm.imageGarbageCollectedTotal);
  // As the kubelet's nodeRef: node events name the node with its name as UID.
  const nodeRef = { kind: 'Node' as const, namespace: '', name: c.nodeName, uid: c.nodeName };
  const containers = new ContainerGc({
    runtime, clock, logger,
    policy: { minAgeMs: c.minimumContainerTTLMs, maxPerPodContainer: c.maxDeadContainersPerContainer, maxContainers: c.maxDeadContainers },
    podLogsDir: c.podLogsDir,
    sourcesReady: d.sourcesReady,
    isPodGone: d.isPodGone,
    observer: {
      removed: (kind, ok) => removed.inc({ kind, result: ok ? 'ok' : 'failed' }),
      deferred: (n) => deferred.inc({}, n),
      pass: (s, ok) => passes.observe({ gc: 'container', result: ok ? 'ok' : 'failed' }, s),
    },
    onFailure: (err) => recorder?.record(nodeRef, 'Warning', 'ContainerGCFailed', err.message),
  });
  const imageGc = new ImageGcManager({
    runtime, clock, logger,
    capacity: d.capacity ?? statfsCapacity,
    policy: { highThresholdPercent: c.imageGCHighThresholdPercent, lowThresholdPercent: c.imageGCLowThresholdPercent, minAgeMs: c.imageMinimumGCAgeMs, maxAgeMs: c.imageMaximumGCAgeMs },
    sandboxImage: c.podInfraContainerImage,
    event: (reason, message) => recorder?.record(nodeRef, 'Warning', reason, message),
    observer: {
      removed: (reason) => images.inc({ reason }),
      pass: (s, ok) => passes.observe({ gc: 'image', result: ok ? 'ok' : 'failed' }, s),
    },
  });
  return {
    containers,
    images: imageGc,
    start() {
      containers.start();
      imageGc.start();
    },
    async close() {
      await Promise.allSettled([containers.close(), imageGc.close()]);
    },
  };
}
