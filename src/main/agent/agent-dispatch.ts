/**
 * Pod-worker wiring: the configuration every pod-worker thread starts with, the dispatcher that
 * owns the threads (PoolDispatcher: --workers N ≥ 1 Piscina threads; InlineDispatcher:
 * --workers 0, pod workers on the main thread), and where the workers' messages go on the main
 * thread (results → pod lifecycle, probe updates → sync loop, pod events → event recorder).
 *
 * A pod-worker thread that dies has its metric totals folded (retireThread) and the pod-cache
 * locks it held recovered before its shard is re-sent (pod-lifecycle handleShardRestarted).
 */
import type { PodCgroupSettings } from '../../shared/cgroups/pod-cgroup-settings.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock, Random } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { cacheNow } from '../../shared/pod-cache/pod-cache.js';
import type { PodResultMessage, PodWorkerThreadConfig, WorkerToMain } from '../../shared/protocol/pod-worker-protocol.js';
import { createPodWorkerHost } from '../../../workers/pod-worker-factory.js';
import type { ProbeUpdate } from '../../shared/protocol/probe-update.js';
import { InlineDispatcher } from '../dispatch/inline-dispatcher.js';
import type { PodDispatcher, PodDispatcherEvents } from '../dispatch/pod-dispatcher.js';
import { PoolDispatcher } from '../dispatch/pool-dispatcher.js';
import type { EventRecorder } from '../events/event-recorder.js';
import type { MetricsSystem } from '../metrics/main-metrics.js';
import type { AgentConfig } from './agent-config.js';
import { nodeInternalIP } from './host-addresses.js';
import type { NodeDnsSettings } from '../../shared/protocol/node-dns-settings.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Compiled thread entry, relative to dist/src/main/agent/. */
export const POD_WORKER_THREAD_FILE = path.resolve(here, '../../../workers/pod-worker-thread.js');

/** Where the workers' messages go. Getters: the receivers are built after the dispatcher. */
export interface WorkerMessageTargets {
  lifecycle: () => { handlePodResult(msg: PodResultMessage): void; handleShardRestarted(shard: number, shards: number): void } | undefined;
  loop: () => { pushProbeUpdate(u: ProbeUpdate): void } | undefined;
  /** Cluster mode only. */
  recorder: Pick<EventRecorder, 'record'> | undefined;
}

export function workerMessageRoutes(t: WorkerMessageTargets): PodDispatcherEvents {
  return {
    onMessage: (msg: WorkerToMain) => {
      if (msg.kind === 'podResult') t.lifecycle()?.handlePodResult(msg);
      else if (msg.kind === 'probe') t.loop()?.pushProbeUpdate(msg.update);
      else t.recorder?.record({ kind: 'Pod', namespace: msg.namespace, name: msg.name, uid: msg.podUID, ...(msg.fieldPath ? { fieldPath: msg.fieldPath } : {}) }, msg.type, msg.reason, msg.message);
    },
    onShardRestarted: (shard, shards) => t.lifecycle()?.handleShardRestarted(shard, shards),
  };
}

export interface PodWorkerConfigInputs {
  config: AgentConfig;
  endpoint: string;
  runtimeName: string;
  cacheBuffer: SharedArrayBuffer;
  metricsBuffer: SharedArrayBuffer;
  recordEvents: boolean;
  /** --cgroups-per-qos settings (node-cgroups.ts); undefined: no pod cgroups. */
  podCgroups?: PodCgroupSettings | undefined;
  /** Machine memory capacity (bytes), for oom_score_adj. */
  memoryCapacityBytes?: number | undefined;
  /** The node's DNS and hosts settings (src/main/dns/node-dns-files.ts). */
  dns: NodeDnsSettings;
  /** Node allocatable memory (bytes, reserved subtracted), as admission uses it. */
  nodeAllocatableMemoryBytes?: number;
}

/** What every pod-worker thread starts with (structured-cloned; the buffers are shared). */
export function podWorkerThreadConfig(i: PodWorkerConfigInputs): PodWorkerThreadConfig {
  const c = i.config;
  return {
    endpoint: i.endpoint,
    cacheBuffer: i.cacheBuffer,
    nodeName: c.nodeName,
    hostIP: nodeInternalIP(c.nodeIP),
    podLogsDir: c.podLogsDir,
    rootDir: c.rootDir,
    dns: i.dns,
    runtimeName: i.runtimeName,
    verbosity: c.verbosity,
    runtimeRequestTimeoutMs: c.runtimeRequestTimeoutMs,
    syncFrequencyMs: c.syncFrequencyMs,
    maxParallelPodStarts: c.maxParallelPodStartsPerThread,
    metricsBuffer: i.metricsBuffer,
    recordEvents: i.recordEvents,
    seccompDefault: c.seccompDefault,
    pruneAppContainersBeforeStart: pruneMatchesGcPolicy(c),
    ...(i.podCgroups ? { podCgroups: i.podCgroups } : {}),
    ...(i.memoryCapacityBytes !== undefined ? { memoryCapacityBytes: i.memoryCapacityBytes } : {}),
    ...(i.nodeAllocatableMemoryBytes !== undefined && i.nodeAllocatableMemoryBytes > 0 ? { nodeAllocatableMemoryBytes: i.nodeAllocatableMemoryBytes } : {}),
  };
}

/**
 * Whether the workers' prune before a restart (one dead instance kept per container) removes
 * only what the container GC would remove anyway: the GC keeps at most one (≤ 1 per container)
 * and has no minimum age. Otherwise the GC alone decides for app containers (init containers are
 * always pruned to one before a start, as the kubelet's pruneInitContainersBeforeStart).
 */
export function pruneMatchesGcPolicy(c: Pick<AgentConfig, 'maxDeadContainersPerContainer' | 'minimumContainerTTLMs'>): boolean {
  return c.maxDeadContainersPerContainer >= 0 && c.maxDeadContainersPerContainer <= 1 && c.minimumContainerTTLMs === 0;
}

export interface PodDispatcherDeps {
  workers: number;
  threadConfig: PodWorkerThreadConfig;
  events: PodDispatcherEvents;
  metrics: MetricsSystem;
  cache: { recoverThread(threadId: number): number };
  clock: Clock;
  random: Random;
  logger: Logger;
}

export function createPodDispatcher(d: PodDispatcherDeps): PodDispatcher {
  const { clock, random, logger, events, metrics, cache } = d;
  if (d.workers === 0) {
    return new InlineDispatcher(createPodWorkerHost({ config: d.threadConfig, threadId: 0, emit: (m) => events.onMessage(m), clock, random, logger }));
  }
  return new PoolDispatcher({
    threads: d.workers,
    filename: POD_WORKER_THREAD_FILE,
    workerData: d.threadConfig,
    events,
    logger,
    onThreadRestart: () => metrics.main.threadRestarts.inc(),
    onThreadExit: (threadId) => {
      metrics.aggregator.retireThread(threadId);
      // It may have died inside a cache write: release and repair what it held.
      const n = cache.recoverThread(threadId);
      if (n > 0) logger.error('recovered pod cache locks of a dead pod-worker thread', { threadId, locks: n });
    },
    // statusNotBeforeMs stamps are cache time (monotonic), not wall time.
    now: () => cacheNow(clock),
  });
}
