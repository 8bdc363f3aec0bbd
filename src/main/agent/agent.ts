/**
 * The agent: the order things start and stop in. Each concern's wiring lives in its own module:
 *   agent-metrics.ts   metrics system, relist metrics, per-collection gauges
 *   agent-cluster.ts   cluster mode (--kubeconfig): API clients, status sync, events, mirror
 *                      pods, API pod source, API objects/tokens, node status, lease
 *   agent-dispatch.ts  pod-worker threads (or inline workers) and where their messages go
 *   agent-pleg.ts      the PLEG thread, its events, relist policy and health check
 *   agent-sources.ts   manifest file / URL sources and their decoder thread
 *   agent-servers.ts   secure and read-only HTTP ports
 *   agent-gc.ts        container/sandbox GC and image GC (the kubelet's StartGarbageCollection)
 *
 * Lifecycle: 'new' → start() → 'running' → stop() → 'stopped'. stop() (SIGTERM) ends loops and
 * threads within a few seconds and leaves pods running, as the kubelet does; a restarted agent
 * adopts them (same UIDs → same sandboxes; see pod-workers and the syncer). stop() releases
 * whatever a failed start() had built.
 */
import os from 'node:os';
import type { Clock, Random } from '../../shared/clock/clock.js';
import type { QuietCollector } from '../../shared/heap/quiet-collector.js';
import { CriClient } from '../../shared/cri/cri-client.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { PodSource } from '../../shared/manifest/pod-update.js';
import * as sm from '../../shared/metrics/shardlet-metrics.js';
import { createPodCache } from '../../shared/pod-cache/pod-cache-create.js';
import { admitWithUsage } from '../admission/admit-pod.js';
import { admitPodOS } from '../admission/pod-os.js';
import { admitStaticPodRefs } from '../admission/static-pod-refs.js';
import { admitSecurity, hostAppArmorEnabled } from '../admission/security-admit.js';
import { SysctlAllowlist } from '../admission/sysctl-allowlist.js';
import { admitResourceFields } from '../admission/pod-resource-fields.js';
import type { ThreadManifestDecoder } from '../config/manifest-decode-thread-client.js';
import { PodConfig } from '../config/pod-config.js';
import type { PodDispatcher } from '../dispatch/pod-dispatcher.js';
import type { NodeLease } from '../lease/node-lease.js';
import { ContainerLogRotation } from '../logs/container-log-rotation.js';
import type { MetricsSystem, MetricsSystemOptions } from '../metrics/main-metrics.js';
import type { MirrorPodManager } from '../mirror/mirror-pods.js';
import { detectMachine } from '../node-status/node-agent-wiring.js';
import { computeNodeResources } from '../node-status/node-resources.js';
import type { NodeStatusManager } from '../node-status/node-status-manager.js';
import type { PlegRunner } from '../pleg/pleg-runner.js';
import { PodManager, isStaticPod } from '../pod-manager/pod-manager.js';
import { PodLogGc } from '../podlogs/pod-log-gc.js';
import { StatusManager } from '../status/status-manager.js';
import { PodLifecycle } from '../syncloop/pod-lifecycle.js';
import { SyncLoop } from '../syncloop/sync-loop.js';
import { WorkQueue } from '../syncloop/work-queue.js';
import type { AgentConfig } from './agent-config.js';
import { ClusterMode } from './agent-cluster.js';
import { createAgentGc, type AgentGc } from './agent-gc.js';
import { createAgentEviction, createSummaryProvider } from './agent-eviction.js';
import type { EvictionManager } from '../eviction/eviction-manager.js';
import { createNodeShutdown } from './agent-shutdown.js';
import type { NodeShutdownManager } from '../shutdown/node-shutdown-manager.js';
import { createPodDispatcher, podWorkerThreadConfig, workerMessageRoutes } from './agent-dispatch.js';
import { closeAgentMetrics, createAgentMetrics, observeAtCollect } from './agent-metrics.js';
import { startAgentHeapPolicy } from './agent-heap.js';
import { startAgentPleg } from './agent-pleg.js';
import { AgentServers } from './agent-servers.js';
import { createManifestSources } from './agent-sources.js';
import { nodeInternalIP } from './host-addresses.js';
import { readNodeDnsSettings } from '../dns/node-dns-files.js';
import { podCacheSize } from './pod-cache-size.js';
import { RuntimeHealth } from './runtime-health.js';
import { NodeCgroups } from '../cgroups/node-cgroups.js';
import { SIMULATED_RUNTIME_NAME } from '../../shared/cri/simulated-runtime-name.js';

export interface AgentDeps {
  config: AgentConfig;
  clock: Clock;
  random: Random;
  logger: Logger;
  /** Set when many agents share one process (hollow mode, src/main/hollow); absent standalone. */
  embedding?: AgentEmbedding;
}

/**
 * How an agent embedded among many in one process (hollow mode) differs from a standalone one:
 * its PLEG relists on the main thread (no thread per node), its metrics arena is sized by the
 * embedder, and the process-wide heap policy is the embedder's, not each agent's.
 */
export interface AgentEmbedding {
  metrics: MetricsSystemOptions;
}

export type AgentState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

export class Agent {
  readonly #d: AgentDeps;
  #state: AgentState = 'new';
  readonly #stop = new AbortController();
  #cri: CriClient | undefined;
  #metrics: MetricsSystem | undefined;
  #cluster: ClusterMode | undefined;
  #pleg: PlegRunner | undefined;
  #dispatcher: PodDispatcher | undefined;
  #sources: PodSource[] = [];
  #decoder: ThreadManifestDecoder | undefined;
  #podConfig: PodConfig | undefined;
  #loop: SyncLoop | undefined;
  #loopDone: Promise<void> | undefined;
  #servers: AgentServers | undefined;
  #logRotation: ContainerLogRotation | undefined;
  #runtimeHealth: RuntimeHealth | undefined;
  #podLogGc: PodLogGc | undefined;
  #gc: AgentGc | undefined;
  #eviction: EvictionManager | undefined;
  #shutdown: NodeShutdownManager | undefined;
  #quietGc: QuietCollector | undefined;
  #nodeCgroups: NodeCgroups | undefined;
  #fatal: (err: Error) => void = () => {};
  /** Settles with an error that ends the agent (a refused node registration); never resolves otherwise. */
  readonly fatal: Promise<Error> = new Promise<Error>((resolve) => (this.#fatal = resolve));

  constructor(deps: AgentDeps) {
    this.#d = deps;
  }

  get state(): AgentState {
    return this.#state;
  }

  /** The pod dispatcher (a PoolDispatcher with threads, InlineDispatcher with --workers 0). */
  get dispatcher(): PodDispatcher | undefined {
    return this.#dispatcher;
  }

  /** The metrics system (undefined before start); hollow mode renders each node's with a `node` label. */
  get metrics(): MetricsSystem | undefined {
    return this.#metrics;
  }

  /** The supervised PLEG thread (undefined before start). */
  get pleg(): PlegRunner | undefined {
    return this.#pleg;
  }

  /** Cluster mode: the node registration and status manager (undefined standalone). */
  get nodeStatus(): NodeStatusManager | undefined {
    return this.#cluster?.nodeStatus;
  }

  /** Cluster mode: the node lease (undefined standalone). */
  get nodeLease(): NodeLease | undefined {
    return this.#cluster?.nodeLease;
  }

  /** Cluster mode: the mirror pods of static pods (undefined standalone). */
  get mirrors(): MirrorPodManager | undefined {
    return this.#cluster?.mirrors;
  }

  /** The node-pressure eviction manager (undefined before start). */
  get eviction(): EvictionManager | undefined {
    return this.#eviction;
  }

  /** The graceful node shutdown manager (undefined when --shutdown-grace-period is 0). */
  get nodeShutdown(): NodeShutdownManager | undefined {
    return this.#shutdown;
  }

  /** Where the secure port listens (undefined when disabled). */
  get secureAddress(): { address: string; port: number } | undefined {
    return this.#servers?.secureAddress;
  }

  /** Where the read-only HTTP server listens (undefined when disabled). */
  get address(): { address: string; port: number } | undefined {
    return this.#servers?.address;
  }

  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`agent already ${this.#state}`);
    this.#state = 'starting';
    const { config: c, clock, random, logger } = this.#d;
    logger.info('starting shardlet agent', { nodeName: c.nodeName, workers: c.workers, maxPods: c.maxPods, endpoint: c.containerRuntimeEndpoint });

    const embedding = this.#d.embedding;
    const metrics = (this.#metrics = createAgentMetrics(embedding?.metrics));
    // Before any worker thread starts: every isolate gets `gc` for its quiet collector.
    if (embedding === undefined) this.#quietGc = startAgentHeapPolicy({ clock, logger });
    // Cluster mode: the main API client (rate-limited) and the pod status sync on it.
    const cluster = c.kubeconfig
      ? (this.#cluster = await ClusterMode.connect({ config: { ...c, kubeconfig: c.kubeconfig }, clock, random, logger, metrics, signal: this.#stop.signal, onFatal: (e) => this.#fatal(e) }))
      : undefined;

    const cri = (this.#cri = new CriClient({ endpoint: c.containerRuntimeEndpoint, timeoutMs: c.runtimeRequestTimeoutMs }));
    const runtimeHealth = (this.#runtimeHealth = new RuntimeHealth({ runtime: cri, clock, logger }));
    const version = await runtimeHealth.connect(this.#stop.signal);
    logger.info('connected to container runtime', { runtimeName: version.runtimeName, runtimeVersion: version.runtimeVersion, apiVersion: version.runtimeApiVersion });
    runtimeHealth.start();

    // Room for every admitted pod plus pods being torn down and orphans found at start; the
    // runtime may hold many more (orphans, finished pods), so it grows on demand up to 16× that.
    const cache = createPodCache({ ...podCacheSize(c.maxPods), maxEntryBytes: c.podCacheMaxEntryBytes });
    const recorder = await cluster?.startEvents();

    // Desired state: pods from the sources, their statuses, and what the workers are doing.
    const podManager = new PodManager();
    let lifecycle: PodLifecycle | undefined;
    const mirrors = cluster?.createMirrors(() => (lifecycle?.activePods() ?? []).filter(isStaticPod));
    const workQueue = new WorkQueue();
    const statusManager = new StatusManager({
      clock,
      logger,
      onPodRunning: (_pod, seconds) => metrics.main.podStartDuration.observe(seconds),
      onPodStartedSLI: (_pod, seconds) => metrics.main.podStartSliDuration.observe(seconds),
      ...(cluster ? { apiSink: cluster.apiStatus } : {}),
      ...(mirrors ? { staticSink: mirrors } : {}),
    });
    // One allocatable for the Node status and for admission (reserved resources subtracted).
    const machine = detectMachine(c.rootDir);
    const resources = computeNodeResources(machine, {
      maxPods: c.maxPods, systemReserved: c.systemReserved, kubeReserved: c.kubeReserved, allocatableOverride: c.nodeAllocatable,
    });
    const node = resources.admission;
    const securityAdmit = { sysctls: SysctlAllowlist.forNode(os.release(), c.allowedUnsafeSysctls), appArmorEnabled: hostAppArmorEnabled() };
    // --cgroups-per-qos: kubepods and the QoS cgroups before any pod worker (node-cgroups.ts).
    const nodeCgroups = (this.#nodeCgroups = await NodeCgroups.start({
      config: c, simulatedRuntime: version.runtimeName === SIMULATED_RUNTIME_NAME, clock, logger,
      capacity: { cpuMillis: machine.cpus * 1000, memoryBytes: machine.memoryBytes },
      allocatable: { cpuMillis: node.cpuMillis, memoryBytes: node.memoryBytes },
    }));
    const podConfig = (this.#podConfig = new PodConfig({ clock, logger }));

    // The pod workers (threads or inline); in cluster mode pods' API objects ride along.
    const dispatcher = (this.#dispatcher = createPodDispatcher({
      workers: c.workers,
      threadConfig: podWorkerThreadConfig({
        config: c, endpoint: cri.endpoint, runtimeName: version.runtimeName, cacheBuffer: cache.buffer, metricsBuffer: metrics.arena.buffer, recordEvents: recorder !== undefined,
        podCgroups: nodeCgroups?.settings, memoryCapacityBytes: machine.memoryBytes, nodeAllocatableMemoryBytes: node.memoryBytes,
        dns: readNodeDnsSettings({ clusterDNS: c.clusterDNS, clusterDomain: c.clusterDomain, resolvConf: c.resolvConf, nodeIPs: [nodeInternalIP(c.nodeIP)], logger }),
      }),
      events: workerMessageRoutes({ lifecycle: () => lifecycle, loop: () => this.#loop, recorder }),
      metrics, cache, clock, random, logger,
    }));
    lifecycle = new PodLifecycle({
      clock,
      logger,
      dispatcher: cluster ? cluster.wrapDispatcher(dispatcher) : dispatcher,
      podManager,
      statusManager,
      workQueue,
      admitter: {
        admit: (pod, active) => {
          const refs = admitStaticPodRefs(pod);
          if (!refs.admit) return refs;
          // The kubelet's first admit handler: the eviction manager's (pressure conditions).
          const pressure = this.#eviction?.admit(pod);
          if (pressure !== undefined && !pressure.admit) return pressure;
          const podOS = admitPodOS(pod);
          if (!podOS.admit) return podOS;
          const fields = admitResourceFields(pod);
          if (!fields.admit) return fields;
          const security = admitSecurity(pod, securityAdmit);
          if (!security.admit) return security;
          const usage = admitWithUsage(pod, active.count, active.used, node, c.maxPods);
          // The node shutdown manager's admit handler: every pod while the node shuts down.
          return usage.admit ? (this.#shutdown?.admit() ?? usage) : usage;
        },
      },
      sourcesReady: () => podConfig.sourcesReady(),
      cache: cache.reader,
      ...(recorder ? { onPodRejected: (pod, reason, message) => recorder.record({ kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' }, 'Warning', reason, message) } : {}),
      onOrphan: () => metrics.main.orphanedRuntimePods.inc(),
      networkError: () => runtimeHealth.networkError(),
    });
    const pods = lifecycle;
    // What /stats/summary reports and the eviction manager measures.
    const summary = createSummaryProvider({
      config: c, clock, logger, runtime: cri, pods: () => [...podManager.pods()],
      simulatedRuntime: version.runtimeName === SIMULATED_RUNTIME_NAME, memoryCapacityBytes: machine.memoryBytes,
    });

    // The sync loop, and the kubelet's container log GC in its housekeeping: log directories of
    // pods that are gone (orphans' kept logs, failed removals, pods removed while the agent was down).
    const plegMainSeconds = metrics.main.recorder.counter(sm.plegEventsMainThreadSeconds);
    const podLogGc = (this.#podLogGc = new PodLogGc({
      clock,
      logger,
      podLogsDir: c.podLogsDir,
      isPodKnown: (uid) => pods.isPodKnown(uid),
      sourcesReady: () => podConfig.sourcesReady(),
    }));
    const loop = (this.#loop = new SyncLoop({
      clock,
      logger,
      updates: podConfig,
      lifecycle,
      runtimeErrors: () => runtimeHealth.errors(),
      onHousekeeping: () => {
        void podLogGc.maybeRun();
        nodeCgroups?.maybeUpdate(() => pods.activePods());
        nodeCgroups?.maybeSweep((uid) => pods.isPodKnown(uid), () => podConfig.sourcesReady());
      },
      onIteration: (s) => metrics.main.syncLoopIteration.observe(s),
      onPlegEventsHandled: (s) => plegMainSeconds.inc({}, s),
    }));

    const pleg = (this.#pleg = await startAgentPleg({
      config: c, clock, logger, metrics, endpoint: cri.endpoint, cache, events: loop,
      onPlegMainSeconds: (s) => plegMainSeconds.inc({}, s),
      lifecycle, runtimeHealth, inline: embedding !== undefined,
    }));

    // Pod sources (the API one starts once the Node is registered, see startHeartbeats).
    const apiSource = cluster?.podSource(podConfig);
    const manifests = createManifestSources({ config: c, podConfig, clock, logger });
    this.#decoder = manifests.decoder;
    this.#sources.push(...manifests.sources);

    observeAtCollect(metrics, lifecycle, cache.reader);
    const servers = (this.#servers = new AgentServers({
      config: c, clock, logger, runtime: cri, metrics, podManager, statusManager, syncLoop: loop, pleg, cache: cache.reader, reviews: cluster?.reviews(), summary,
    }));
    if (c.containerLogMaxSize > 0) {
      this.#logRotation = new ContainerLogRotation({ runtime: cri, clock, logger, maxSizeBytes: c.containerLogMaxSize, maxFiles: c.containerLogMaxFiles, intervalMs: c.containerLogMonitorIntervalMs, podLogsDir: c.podLogsDir });
    }
    await servers.start();

    this.#loopDone = loop.run(this.#stop.signal);
    cluster?.apiStatus.start();
    this.#logRotation?.start();
    this.#gc = createAgentGc({ config: c, clock, logger, runtime: cri, metrics, recorder, sourcesReady: () => podConfig.sourcesReady(), isPodGone: (uid) => pods.isPodGone(uid) });
    this.#gc.start();
    this.#eviction = createAgentEviction({
      config: c, clock, logger, metrics, recorder, summary, gc: this.#gc,
      activePods: () => pods.activePods(),
      evict: (pod, grace, status) => pods.evict(pod, grace, status),
    });
    this.#eviction.start();
    // Graceful node shutdown: after the sync loop runs (kills go through it), before the sources.
    const shutdown = (this.#shutdown = createNodeShutdown({
      config: c, clock, logger, pods: lifecycle, recorder,
      syncNodeStatus: () => void this.#cluster?.nodeStatus?.syncStatus(),
    }));
    await shutdown?.start();
    for (const s of this.#sources) s.start();
    if (cluster && apiSource) {
      await cluster.startHeartbeats({
        resources, runtime: cri, runtimeVersion: version, runtimeHealth, hostIP: nodeInternalIP(c.nodeIP),
        kubeletPort: servers.secureAddress?.port ?? c.port,
        pressure: () => this.#eviction?.conditions ?? [],
        ...(shutdown ? { shutdownErrors: () => shutdown.errors() } : {}),
        apiSource,
        addSource: (s) => this.#sources.push(s),
      });
    }
    this.#state = 'running';
  }

  /** Graceful stop: loops, sources, threads and server end; pods keep running. Idempotent. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped' || this.#state === 'stopping') return;
    this.#state = 'stopping';
    this.#stop.abort();
    await Promise.allSettled(this.#sources.map((s) => s.close()));
    await this.#decoder?.close();
    this.#podConfig?.close();
    await this.#loopDone?.catch(() => {});
    await this.#cluster?.close();
    this.#runtimeHealth?.stop();
    this.#podLogGc?.close();
    this.#quietGc?.stop();
    await this.#logRotation?.close();
    await this.#eviction?.close();
    await this.#gc?.close();
    await this.#shutdown?.close();
    await this.#nodeCgroups?.settled();
    await Promise.allSettled([this.#dispatcher?.close(), this.#pleg?.close(), this.#servers?.close()]);
    if (this.#metrics !== undefined) closeAgentMetrics(this.#metrics, this.#d.embedding !== undefined);
    this.#cri?.close();
    this.#state = 'stopped';
    this.#d.logger.info('shardlet agent stopped; pods left running');
  }
}
