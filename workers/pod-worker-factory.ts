/**
 * Builds everything one pod-worker thread owns: its CRI client (its own gRPC channel), its
 * attachment to the shared pod cache, its prober, the runtime syncer and the PodWorkers loop.
 * Used by the Piscina thread entry (pod-worker-thread.ts) and by the inline dispatcher
 * (`--workers 0`), so the same code runs either way.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { realClock, realRandom, type Clock, type Random } from '../src/clock/clock.js';
import { CriClient } from '../src/cri/cri-client.js';
import { createLogger, type Logger } from '../src/logging/logger.js';
import { attachPodCache } from '../src/pod-cache/pod-cache-create.js';
import { cacheNow } from '../src/pod-cache/pod-cache.js';
import { KubeRuntimeSyncer } from './kuberuntime/kuberuntime-syncer.js';
import { createWorkerMetrics } from './metrics/worker-metrics.js';
import { ProberManager } from './prober/prober-manager.js';
import { PodWorkerHost } from './pod-worker-host.js';
import type { PodWorkerThreadConfig, WorkerToMain } from './pod-worker-protocol.js';
import { PodWorkers, type StatusRefresher } from './pod-workers.js';
import { getPodStatus } from './runtime-status/get-pod-status.js';
import { PodApiObjectStore } from './volumes/api-object-store.js';
import { systemTmpfsMounter } from './volumes/tmpfs-mounter.js';
import { VolumeManager } from './volumes/volume-manager.js';
import { defaultVolumePlugins } from './volumes/volume-plugins.js';

export interface PodWorkerEnv {
  config: PodWorkerThreadConfig;
  threadId: number;
  emit: (msg: WorkerToMain) => void;
  clock?: Clock;
  random?: Random;
  logger?: Logger;
}

export function createPodWorkerHost(env: PodWorkerEnv): PodWorkerHost {
  const { config, threadId, emit } = env;
  const clock = env.clock ?? realClock;
  const random = env.random ?? realRandom;
  const logger = env.logger ?? createLogger({ verbosity: config.verbosity, fields: { thread: threadId } });
  const metrics = createWorkerMetrics({ arena: config.metricsBuffer, threadId });
  // The per-thread load series exist from the thread's start (a thread with no pods reads 0).
  metrics.threadLoad(0, 0);
  const cri = new CriClient({
    endpoint: config.endpoint,
    timeoutMs: config.runtimeRequestTimeoutMs,
    onOperation: (ev) => metrics.runtimeOperation(ev.operation, ev.durationSeconds, ev.error !== undefined),
  });
  const cache = attachPodCache(config.cacheBuffer);
  const prober = new ProberManager({
    runtime: cri,
    clock,
    random,
    logger,
    hostIP: config.hostIP || '127.0.0.1',
    onUpdate: (update) => emit({ kind: 'probe', threadId, update }),
    onProbe: (type, result, seconds, pod, container) =>
      metrics.probe({ type, result, seconds, container, pod: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', podUID: pod.metadata?.uid ?? '' }),
  });
  const apiObjects = new PodApiObjectStore();
  const volumes = new VolumeManager({ rootDir: config.rootDir, plugins: defaultVolumePlugins(systemTmpfsMounter, { clock, field: { nodeName: config.nodeName, hostIP: config.hostIP, podIPs: [] } }), mounter: systemTmpfsMounter, logger });
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
    nodeName: config.nodeName,
    hostIP: config.hostIP,
    runtimeName: config.runtimeName,
    metrics,
  });
  // Beyond the kubelet: publish the pod's own fresh status right after its CRI calls, so the
  // next sync and the status seen by the main thread do not wait for the next relist.
  const refreshStatus: StatusRefresher = async (pod: V1Pod, afterMs: number, signal: AbortSignal) => {
    const uid = pod.metadata?.uid ?? '';
    // Stamped with the time before inspecting (the cache's rule: the status was taken at or
    // after its timestamp), and strictly after the end of the work so the next sync proceeds.
    const takenAt = cacheNow(clock);
    const status = await getPodStatus(cri, uid, pod.metadata?.name ?? '', pod.metadata?.namespace ?? '', signal);
    // As the kubelet's PLEG (getPodIPs): once no sandbox is ready the runtime reports no IP;
    // keep the last known IPs so a finished pod still shows its podIP.
    const previous = cache.reader.get(uid)?.status;
    if (status.ips.length === 0 && previous && previous.ips.length > 0 && !status.sandboxes.some((s) => s.state === 'SANDBOX_READY')) status.ips = previous.ips;
    cache.writer.set(uid, status, null, Math.max(takenAt, afterMs + 1));
    return status;
  };
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
        } else prober.markTerminating(uid);
      },
      podForgotten: (uid) => {
        prober.removePod(uid);
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
    onWork: (op, seconds) => {
      metrics.podWorkerDuration(op, seconds);
      metrics.threadBusy(seconds);
    },
    onStats: (stats) => metrics.threadLoad(stats.podsOwned, stats.queueDepth),
  });
  return new PodWorkerHost(
    workers,
    () => {
      prober.close();
      cri.close();
    },
    (msg) => apiObjects.observe(msg.uid, msg.apiObjects),
  );
}
