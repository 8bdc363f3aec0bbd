/**
 * Node-pressure eviction wiring on the main thread (the kubelet's evictionManager.Start): the
 * summary it measures (shared with /stats/summary: node memory, the node and image
 * filesystems, the task limit, each pod's memory and ephemeral storage), node-level reclaim
 * through the agent's GC, evictions through the pod lifecycle, events and kubelet_evictions.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../shared/clock/clock.js';
import type { CriClient } from '../../shared/cri/cri-client.js';
import type { Logger } from '../../shared/logging/logger.js';
import * as km from '../../shared/metrics/kubelet-metrics.js';
import type { EventRecorder } from '../events/event-recorder.js';
import { evictionThresholds } from '../eviction/eviction-config.js';
import { EvictionManager } from '../eviction/eviction-manager.js';
import { simulatedNodeMemory } from '../eviction/simulated-node-memory.js';
import { imageFsStats, statfsCapacity, type FsCapacitySource } from '../gc/image-fs-stats.js';
import type { MetricsSystem } from '../metrics/main-metrics.js';
import { procNodeStats } from '../server/stats-node.js';
import { SummaryProvider } from '../server/stats-summary.js';
import { nodeFsStats, procRlimitSource, rlimitStats, type RlimitSource } from '../server/stats-summary-fs.js';
import type { AgentConfig } from './agent-config.js';
import type { AgentGc } from './agent-gc.js';

export interface SummaryWiring {
  config: AgentConfig;
  clock: Clock;
  logger: Logger;
  runtime: CriClient;
  pods: () => readonly V1Pod[];
  simulatedRuntime: boolean;
  memoryCapacityBytes: number;
  capacity?: FsCapacitySource;
  rlimit?: RlimitSource;
}

/** The /stats/summary provider with every figure the agent measures (also the eviction manager's). */
export function createSummaryProvider(w: SummaryWiring): SummaryProvider {
  const { config: c, clock, logger, runtime } = w;
  const capacity = w.capacity ?? statfsCapacity;
  return new SummaryProvider({
    runtime, pods: w.pods, nodeName: c.nodeName, clock, startedAtMs: clock.now(),
    node: w.simulatedRuntime ? simulatedNodeMemory(procNodeStats, runtime, w.memoryCapacityBytes) : procNodeStats,
    runtimeFs: () => imageFsStats(runtime, capacity, clock).catch((err: unknown) => {
      logger.v(2).info('stats: image filesystem figures unavailable', { err: err instanceof Error ? err.message : String(err) });
      return undefined;
    }),
    nodeFs: () => nodeFsStats(c.rootDir, capacity, clock),
    rlimit: () => rlimitStats(w.rlimit ?? procRlimitSource, clock),
    podLogsDir: c.podLogsDir,
    onSandboxStatsError: (err) => logger.info('ListPodSandboxStats failed; pod stats are the sums of their containers', { err: err instanceof Error ? err.message : String(err) }),
  });
}

export interface AgentEvictionDeps {
  config: AgentConfig;
  clock: Clock;
  logger: Logger;
  metrics: MetricsSystem;
  recorder: EventRecorder | undefined;
  summary: SummaryProvider;
  activePods: () => V1Pod[];
  evict: (pod: V1Pod, gracePeriodSeconds: number, status: { reason: string; message: string }) => void;
  gc: AgentGc;
}

export function createAgentEviction(d: AgentEvictionDeps): EvictionManager {
  const { config: c, recorder } = d;
  const evictions = d.metrics.main.recorder.counter(km.evictions);
  const nodeRef = { kind: 'Node' as const, namespace: '', name: c.nodeName, uid: c.nodeName };
  return new EvictionManager({
    clock: d.clock,
    logger: d.logger,
    thresholds: evictionThresholds(c),
    pressureTransitionPeriodMs: c.evictionPressureTransitionPeriodMs,
    maxPodGracePeriodSeconds: c.evictionMaxPodGracePeriodSeconds,
    summary: () => d.summary.summary(),
    activePods: d.activePods,
    evict: d.evict,
    ...(recorder
      ? {
          podEvent: (pod: V1Pod, reason: string, message: string) => recorder.record({ kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' }, 'Warning', reason, message),
          nodeEvent: (reason: string, message: string) => recorder.record(nodeRef, 'Warning', reason, message),
        }
      : {}),
    // The kubelet's reclaim for a shared node/image filesystem: unused containers, then images.
    reclaimDisk: async () => {
      await (d.gc.containers.running ?? d.gc.containers.runOnce());
      if (d.gc.images.enabled) await (d.gc.images.running ?? d.gc.images.runOnce());
    },
    onEviction: (signal) => evictions.inc({ eviction_signal: signal }),
  });
}
