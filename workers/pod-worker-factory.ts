/**
 * Builds everything one pod-worker thread owns: its CRI client (its own gRPC channel), its
 * attachment to the shared pod cache, its prober, the runtime syncer and the PodWorkers loop.
 * Used by the Piscina thread entry (pod-worker-thread.ts) and by the inline dispatcher
 * (`--workers 0`), so the same code runs either way.
 */
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { realClock, realRandom, type Clock, type Random } from '../src/shared/clock/clock.js';
import { CriClient } from '../src/shared/cri/cri-client.js';
import { createLogger, stderrSink, type Logger } from '../src/shared/logging/logger.js';
import { attachPodCache } from '../src/shared/pod-cache/pod-cache-create.js';
import { EmptyDirEvictionMonitor } from './eviction/empty-dir-eviction.js';
import { KubeRuntimeSyncer } from './kuberuntime/kuberuntime-syncer.js';
import type { PodEventRecorder } from './kuberuntime/pod-events.js';
import { createWorkerMetrics } from './metrics/worker-metrics.js';
import { startThreadHeapSampler } from '../src/shared/metrics/thread-heap.js';
import { quietCollectionFields, startQuietCollector } from '../src/shared/heap/quiet-collector.js';
import { createThreadProber } from './prober/thread-prober.js';
import { PodWorkerHost } from './pod-worker-host.js';
import type { PodWorkerThreadConfig, WorkerToMain } from '../src/shared/protocol/pod-worker-protocol.js';
import { freshStatusRefresher, publishProgress } from './fresh-status.js';
import { PodWorkers, type PodWorkersDeps } from './pod-workers.js';
import { terminationMessageReader } from './runtime-status/termination-message.js';
import { PodApiObjectStore } from './volumes/api-object-store.js';
import { systemTmpfsMounter } from './volumes/tmpfs-mounter.js';
import { VolumeManager } from './volumes/volume-manager.js';
import { defaultVolumePlugins } from './volumes/volume-plugins.js';
import { PodCgroups } from './cgroups/pod-cgroups.js';
import { nodeCgroupFs } from '../src/shared/cgroups/cgroup-fs.js';
import { cgroupManagerFor } from '../src/shared/cgroups/pod-cgroup-settings.js';

export interface PodWorkerEnv {
  config: PodWorkerThreadConfig;
  threadId: number;
  emit: (msg: WorkerToMain) => void;
  clock?: Clock;
  random?: Random;
  logger?: Logger;
}

/** The thread's start bound (--max-parallel-pod-starts-per-thread) as PodWorkers takes it. */
export function podStartBound(config: Pick<PodWorkerThreadConfig, 'maxParallelPodStarts'>): Pick<PodWorkersDeps, 'maxParallelStarts'> {
  return config.maxParallelPodStarts !== undefined ? { maxParallelStarts: config.maxParallelPodStarts } : {};
}

export function createPodWorkerHost(env: PodWorkerEnv): PodWorkerHost {
  const { config, threadId, emit } = env;
  const clock = env.clock ?? realClock;
  const random = env.random ?? realRandom;
  const logger = env.logger ?? createLogger({ verbosity: config.verbosity, fields: { thread: threadId } });
  const metrics = createWorkerMetrics({ arena: config.metricsBuffer, threadId });
  // The per-thread load series exist from the thread's start (a thread with no pods reads 0).
  metrics.threadLoad(0, 0);
  // This isolate's heap (inline, the main thread samples itself at each scrape).
  const heapSampler = isMainThread ? undefined : startThreadHeapSampler({ recorder: metrics.recorder, thread: String(threadId), role: 'pod-worker', clock });
  // Collects this isolate's garbage once it goes quiet after a burst (inline, the agent's runs).
  const quietGc = isMainThread ? undefined : startQuietCollector({ clock, onCollect: (c) => logger.info('Quiet heap collection', quietCollectionFields(c)) });
  // This thread writes its own log lines to stderr: count the ones a full disk drops.
  if (env.logger === undefined) stderrSink.observeDrops(() => metrics.logLineDropped());
  const cri = new CriClient({
    endpoint: config.endpoint,
    timeoutMs: config.runtimeRequestTimeoutMs,
    onOperation: (ev) => metrics.runtimeOperation(ev.operation, ev.durationSeconds, ev.error !== undefined),
  });
  const cache = attachPodCache(config.cacheBuffer);
  // Cluster mode: pod events travel to the main thread's recorder, one message each.
  const events: PodEventRecorder | undefined = config.recordEvents
    ? (pod, type, reason, message, fieldPath) =>
        emit({
          kind: 'podEvent', threadId, podUID: pod.metadata?.uid ?? '', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '',
          type, reason, message: message.slice(0, 1024), ...(fieldPath !== undefined ? { fieldPath } : {}), timestampMs: clock.now(),
        })
    : undefined;
  const prober = createThreadProber({
    runtime: cri,
    clock,
    random,
    logger,
    hostIP: config.hostIP || '127.0.0.1',
    ...(events ? { events } : {}),
    onUpdate: (update) => emit({ kind: 'probe', threadId, update }),
    metrics,
  });
  const apiObjects = new PodApiObjectStore();
  const volumes = new VolumeManager({ rootDir: config.rootDir, plugins: defaultVolumePlugins(systemTmpfsMounter, { clock, field: { nodeName: config.nodeName, hostIP: config.hostIP, podIPs: [] }, nodeAllocatableMemoryBytes: config.nodeAllocatableMemoryBytes }), mounter: systemTmpfsMounter, logger });
  const syncer = new KubeRuntimeSyncer({
    volumes,
    apiObjects: (uid) => apiObjects.get(uid),
    runtime: cri,
    images: cri,
    clock,
    random,
    logger,
    probeResults: prober.results,
    podLogsDir: config.podLogsDir,
    seccompProfileRoot: path.join(config.rootDir, 'seccomp'),
    seccompDefault: config.seccompDefault === true,
    pruneAppContainersBeforeStart: config.pruneAppContainersBeforeStart ?? true,
    nodeName: config.nodeName,
    hostIP: config.hostIP,
    runtimeName: config.runtimeName,
    metrics,
    ...(events ? { events } : {}),
    publishProgress: (status) => publishProgress(cache.writer, clock, status),
    ...(config.podCgroups ? { podCgroups: new PodCgroups({ manager: cgroupManagerFor(config.podCgroups, nodeCgroupFs), root: config.podCgroups.root, clock }) } : {}),
    ...(config.memoryCapacityBytes !== undefined ? { memoryCapacityBytes: config.memoryCapacityBytes } : {}),
    rootDir: config.rootDir,
    dns: config.dns,
  });
  // The eviction manager's emptyDir sizeLimit check, for this thread's pods. Its kill is the
  // kubelet's killPodFunc: the status first, then a kill with grace 0 through the pod's own loop.
  const eviction = new EmptyDirEvictionMonitor({
    rootDir: config.rootDir,
    clock,
    logger,
    metrics,
    ...(events ? { events } : {}),
    kill(pod, status) {
      const uid = pod.metadata?.uid ?? '';
      workers.update({ kind: 'update', uid, updateType: 'kill', pod, kill: { removed: false, reason: 'evicted', gracePeriodSeconds: 0, terminalStatus: status } });
    },
  });
  // Beyond the kubelet: the pod's own fresh status, published right after its CRI calls.
  const refreshStatus = freshStatusRefresher({ runtime: cri, cache, clock, messages: terminationMessageReader({ rootDir: config.rootDir }) });
  const workers = new PodWorkers({
    syncer,
    cache: cache.reader,
    refreshStatus,
    hooks: {
      podSynced(pod, status, state) {
        const uid = pod.metadata?.uid ?? '';
        if (state === 'syncing') {
          prober.addPod(pod);
          if (status) prober.updatePodStatus(uid, status);
          eviction.track(pod);
        } else {
          prober.markTerminating(uid);
          eviction.untrack(uid);
        }
      },
      podForgotten: (uid) => {
        prober.removePod(uid);
        eviction.forget(uid);
        apiObjects.forget(uid);
        // The pod's CRI objects are gone: free its cache slot (the PLEG drops pods it no longer
        // lists, but an entry this worker published would otherwise stay).
        cache.writer.delete(uid);
      },
    },
    clock,
    random,
    logger,
    emit,
    threadId,
    syncFrequencyMs: config.syncFrequencyMs,
    ...podStartBound(config),
    onSkippedSync: () => metrics.podSyncSkipped(),
    onWork: (op, seconds) => {
      metrics.podWorkerDuration(op, seconds);
      metrics.threadBusy(seconds);
    },
    onStats: (stats) => metrics.threadLoad(stats.podsOwned, stats.queueDepth),
  });
  return new PodWorkerHost(
    workers,
    () => {
      heapSampler?.stop();
      quietGc?.stop();
      prober.close();
      eviction.close();
      cri.close();
    },
    (msg) => apiObjects.observe(msg.uid, msg.apiObjects),
  );
}
