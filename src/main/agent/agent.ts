/**
 * Wires the agent together and owns its lifecycle: runtime connection, shared memory (pod cache,
 * metrics arena), the PLEG thread, the pod-worker pool (or inline workers), pod sources and
 * the config merger, the sync loop, and the HTTP server.
 *
 * Lifecycle: 'new' → start() → 'running' → stop() → 'stopped'. stop() (SIGTERM) ends loops and
 * threads within a few seconds and leaves pods running, as the kubelet does; a restarted agent
 * adopts them (same UIDs → same sandboxes; see pod-workers and the syncer).
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Pod } from '@kubernetes/client-node';
import { admitWithUsage } from '../admission/admit-pod.js';
import { admitStaticPodRefs } from '../admission/static-pod-refs.js';
import { ApiObjectDispatcher } from '../config-objects/api-object-dispatcher.js';
import { ObjectWatches } from '../config-objects/object-watches.js';
import { TokenManager } from '../config-objects/token-manager.js';
import type { Clock, Random } from '../../shared/clock/clock.js';
import { PodConfig } from '../config/pod-config.js';
import { ApiserverSource, FileSource, HttpSource, type PodSource } from '../../shared/manifest/pod-update.js';
import { ApiserverPodSource } from '../config/source-apiserver.js';
import { ApiClient } from '../apiserver/api-client.js';
import { HttpsTransport } from '../apiserver/https-transport.js';
import { TokenBucket } from '../apiserver/token-bucket.js';
import { ObjectApi } from '../apiserver/object-api.js';
import type { NodeRef } from '../apiserver/object-roles.js';
import { NodeLease } from '../lease/node-lease.js';
import { MirrorPodManager } from '../mirror/mirror-pods.js';
import { EventRecorder } from '../events/event-recorder.js';
import { detectMachine, startNodeStatus } from '../node-status/node-agent-wiring.js';
import { computeNodeResources } from '../node-status/node-resources.js';
import type { NodeStatusManager } from '../node-status/node-status-manager.js';
import { ApiStatusSync } from '../status/api-status-sync.js';
import { createFileSource } from '../config/source-file.js';
import { createHttpSource } from '../config/source-http.js';
import { ThreadManifestDecoder } from '../config/manifest-decode-thread-client.js';
import { CriClient } from '../../shared/cri/cri-client.js';
import { InlineDispatcher } from '../dispatch/inline-dispatcher.js';
import type { PodDispatcher, PodDispatcherEvents } from '../dispatch/pod-dispatcher.js';
import { PoolDispatcher } from '../dispatch/pool-dispatcher.js';
import { stderrSink, type Logger } from '../../shared/logging/logger.js';
import * as km from '../../shared/metrics/kubelet-metrics.js';
import * as sm from '../../shared/metrics/shardlet-metrics.js';
import { createMetricsSystem, type ContainerStateLabel, type MetricsSystem } from '../metrics/main-metrics.js';
import { coalesceCollect } from '../metrics/coalesced-collect.js';
import { createPodCache } from '../../shared/pod-cache/pod-cache-create.js';
import { POD_CACHE_DEFAULTS } from '../../shared/pod-cache/pod-cache-layout.js';
import { PodCacheMetrics } from '../metrics/pod-cache-metrics.js';
import { cacheNow } from '../../shared/pod-cache/pod-cache.js';
import { PodManager, isStaticPod } from '../pod-manager/pod-manager.js';
import { startPleg, type PlegRunner } from '../pleg/pleg-runner.js';
import { createAgentServer, type AgentServer } from '../server/agent-server.js';
import { createSecurePort } from '../server/secure-port.js';
import type { SecureServer } from '../server/secure-server.js';
import { procNodeStats } from '../server/stats-node.js';
import { resourceMetricsText } from '../server/stats-resource-metrics.js';
import { SummaryProvider } from '../server/stats-summary.js';
import { ApiReviewCreator } from '../apiserver/api-reviews.js';
import { ContainerLogRotation } from '../logs/container-log-rotation.js';
import { plegCheck, podCacheCheck, syncLoopCheck } from '../server/health-checks.js';
import { StatusManager } from '../status/status-manager.js';
import { PodLifecycle } from '../syncloop/pod-lifecycle.js';
import { SyncLoop } from '../syncloop/sync-loop.js';
import { WorkQueue } from '../syncloop/work-queue.js';
import { createPodWorkerHost } from '../../../workers/pod-worker-factory.js';
import type { PodWorkerThreadConfig, WorkerToMain } from '../../shared/protocol/pod-worker-protocol.js';
import type { AgentConfig } from './agent-config.js';
import { PodLogGc } from '../podlogs/pod-log-gc.js';
import { RuntimeHealth } from './runtime-health.js';

export interface AgentDeps {
  config: AgentConfig;
  clock: Clock;
  random: Random;
  logger: Logger;
}

export type AgentState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Compiled thread entries, relative to dist/src/main/agent/. */
export const POD_WORKER_THREAD_FILE = path.resolve(here, '../../../workers/pod-worker-thread.js');

export class Agent {
  readonly #d: AgentDeps;
  #state: AgentState = 'new';
  readonly #stop = new AbortController();
  #cri: CriClient | undefined;
  #metrics: MetricsSystem | undefined;
  #pleg: PlegRunner | undefined;
  #dispatcher: PodDispatcher | undefined;
  #sources: PodSource[] = [];
  #decoder: ThreadManifestDecoder | undefined;
  #podConfig: PodConfig | undefined;
  #loop: SyncLoop | undefined;
  #loopDone: Promise<void> | undefined;
  #server: AgentServer | undefined;
  #secureServer: SecureServer | undefined;
  #secureAddress: { address: string; port: number } | undefined;
  #logRotation: ContainerLogRotation | undefined;
  #runtimeHealth: RuntimeHealth | undefined;
  #podLogGc: PodLogGc | undefined;
  #address: { address: string; port: number } | undefined;
  #transport: HttpsTransport | undefined;
  #apiStatus: ApiStatusSync | undefined;
  #heartbeatTransport: HttpsTransport | undefined;
  #nodeStatus: NodeStatusManager | undefined;
  #nodeLease: NodeLease | undefined;
  #mirrors: MirrorPodManager | undefined;
  #events: EventRecorder | undefined;
  #eventsTransport: HttpsTransport | undefined;
  #background: Promise<void>[] = [];
  #fatal: (err: Error) => void = () => {};
  /** Settles with an error that ends the agent (a refused node registration); never resolves otherwise. */
  readonly fatal: Promise<Error> = new Promise<Error>((resolve) => (this.#fatal = resolve));
  #objectWatches: ObjectWatches | undefined;
  #tokens: TokenManager | undefined;

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

  /** The supervised PLEG thread (undefined before start). */
  get pleg(): PlegRunner | undefined {
    return this.#pleg;
  }

  /** Cluster mode: the node registration and status manager (undefined standalone). */
  get nodeStatus(): NodeStatusManager | undefined {
    return this.#nodeStatus;
  }

  /** Cluster mode: the node lease (undefined standalone). */
  get nodeLease(): NodeLease | undefined {
    return this.#nodeLease;
  }

  /** Cluster mode: the mirror pods of static pods (undefined standalone). */
  get mirrors(): MirrorPodManager | undefined {
    return this.#mirrors;
  }

  /** Where the secure port listens (undefined when disabled). */
  get secureAddress(): { address: string; port: number } | undefined {
    return this.#secureAddress;
  }

  /** Where the read-only HTTP server listens (undefined when disabled). */
  get address(): { address: string; port: number } | undefined {
    return this.#address;
  }

  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`agent already ${this.#state}`);
    this.#state = 'starting';
    const { config: c, clock, random, logger } = this.#d;
    logger.info('starting shardlet agent', { nodeName: c.nodeName, workers: c.workers, maxPods: c.maxPods, endpoint: c.containerRuntimeEndpoint });

    const metrics = (this.#metrics = createMetricsSystem());
    // The main thread's stderr carries its own lines and the PLEG thread's.
    const logDropped = metrics.main.recorder.counter(sm.logLinesDroppedTotal);
    stderrSink.observeDrops(() => logDropped.inc({}));
    // Cluster mode: one main client (rate-limited) for the pod source, status writes and deletes.
    let api: { client: ApiClient; bucket: TokenBucket } | undefined;
    if (c.kubeconfig) {
      const transport = (this.#transport = await HttpsTransport.fromKubeconfig({ kubeconfigPath: c.kubeconfig }));
      const bucket = new TokenBucket({ qps: c.kubeAPIQPS, burst: c.kubeAPIBurst, clock });
      const requests = metrics.main.recorder.counter(sm.apiRequestsTotal);
      const client = new ApiClient({ transport, throttle: bucket, clock, nodeName: c.nodeName, onRequest: (verb, resource, code) => requests.inc({ verb, resource, code }) });
      api = { client, bucket };
      logger.info('cluster mode', { server: transport.server, kubeAPIQPS: c.kubeAPIQPS, kubeAPIBurst: c.kubeAPIBurst });
      const patches = metrics.main.recorder.counter(sm.podStatusPatchesTotal);
      const coalesced = metrics.main.recorder.counter(sm.podStatusCoalescedTotal);
      const syncDuration = metrics.main.recorder.histogram(km.podStatusSyncDuration);
      this.#apiStatus = new ApiStatusSync({
        writer: client,
        deleter: client,
        throttle: bucket,
        clock,
        logger,
        onSynced: (s) => syncDuration.observe({}, s),
        onPatch: (result) => patches.inc({ result }),
        onCoalesced: () => coalesced.inc({}),
      });
    }
    const cri = (this.#cri = new CriClient({ endpoint: c.containerRuntimeEndpoint, timeoutMs: c.runtimeRequestTimeoutMs }));
    const runtimeHealth = (this.#runtimeHealth = new RuntimeHealth({ runtime: cri, clock, logger }));
    const version = await runtimeHealth.connect(this.#stop.signal);
    logger.info('connected to container runtime', { runtimeName: version.runtimeName, runtimeVersion: version.runtimeVersion, apiVersion: version.runtimeApiVersion });
    runtimeHealth.start();

    // Room for every admitted pod plus pods being torn down and orphans found at start; the
    // runtime may hold many more (orphans, finished pods), so it grows on demand up to 16× that.
    const cache = createPodCache(podCacheSize(c.maxPods));
    const cacheMetrics = new PodCacheMetrics(metrics.main);
    cacheMetrics.observe(cache.reader.stats());

    if (c.kubeconfig) {
      // Events have their own client and throttle (--event-qps / --event-burst) and connections.
      const transport = (this.#eventsTransport = await HttpsTransport.fromKubeconfig({ kubeconfigPath: c.kubeconfig, maxSockets: 2 }));
      const results = metrics.main.recorder.counter(sm.eventsTotal);
      this.#events = new EventRecorder({
        writer: new ObjectApi(new ApiClient({ transport, throttle: new TokenBucket({ qps: c.eventRecordQPS, burst: c.eventBurst, clock }), clock, nodeName: c.nodeName, maxRetries: 1 })),
        clock, logger, host: c.nodeName, onResult: (result) => results.inc({ result }),
      });
      this.#events.start();
    }
    const recorder = this.#events;
    const podManager = new PodManager();
    let lifecycle: PodLifecycle | undefined;
    let nodeUid: () => string | undefined = () => undefined;
    if (api && this.#apiStatus) {
      const mirrorOps = metrics.main.recorder.counter(sm.mirrorPodOperationsTotal);
      this.#mirrors = new MirrorPodManager({
        creator: new ObjectApi(api.client),
        deleter: api.client,
        statusSink: this.#apiStatus,
        desired: () => (lifecycle?.activePods() ?? []).filter(isStaticPod),
        nodeName: c.nodeName,
        nodeUid: () => nodeUid(),
        clock,
        logger,
        onOperation: (operation, result) => mirrorOps.inc({ operation, result }),
      });
    }
    const workQueue = new WorkQueue();
    const statusManager = new StatusManager({
      clock,
      logger,
      onPodRunning: (_pod, seconds) => metrics.main.podStartDuration.observe(seconds),
      onPodStartedSLI: (_pod, seconds) => metrics.main.podStartSliDuration.observe(seconds),
      ...(this.#apiStatus ? { apiSink: this.#apiStatus } : {}),
      ...(this.#mirrors ? { staticSink: this.#mirrors } : {}),
    });
    // One allocatable for the Node status and for admission (reserved resources subtracted).
    const resources = computeNodeResources(detectMachine(c.rootDir), {
      maxPods: c.maxPods, systemReserved: c.systemReserved, kubeReserved: c.kubeReserved, allocatableOverride: c.nodeAllocatable,
    });
    const node = resources.admission;
    const podConfig = (this.#podConfig = new PodConfig({ clock, logger }));

    const events: PodDispatcherEvents = {
      onMessage: (msg: WorkerToMain) => {
        if (msg.kind === 'podResult') lifecycle?.handlePodResult(msg);
        else if (msg.kind === 'probe') this.#loop?.pushProbeUpdate(msg.update);
        else recorder?.record({ kind: 'Pod', namespace: msg.namespace, name: msg.name, uid: msg.podUID, ...(msg.fieldPath ? { fieldPath: msg.fieldPath } : {}) }, msg.type, msg.reason, msg.message);
      },
      onShardRestarted: (shard, shards) => lifecycle?.handleShardRestarted(shard, shards),
    };
    const threadConfig: PodWorkerThreadConfig = {
      endpoint: cri.endpoint,
      cacheBuffer: cache.buffer,
      nodeName: c.nodeName,
      hostIP: primaryHostIP(),
      podLogsDir: c.podLogsDir,
      rootDir: c.rootDir,
      runtimeName: version.runtimeName,
      verbosity: c.verbosity,
      runtimeRequestTimeoutMs: c.runtimeRequestTimeoutMs,
      syncFrequencyMs: c.syncFrequencyMs,
      metricsBuffer: metrics.arena.buffer,
      recordEvents: recorder !== undefined,
    };
    const dispatcher = (this.#dispatcher =
      c.workers === 0
        ? new InlineDispatcher(createPodWorkerHost({ config: threadConfig, threadId: 0, emit: (m) => events.onMessage(m), clock, random, logger }))
        : new PoolDispatcher({
            threads: c.workers,
            filename: POD_WORKER_THREAD_FILE,
            workerData: threadConfig,
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
          }));

    // Cluster mode: pods' configMaps, secrets and tokens ride along with their updates.
    let podDispatcher: PodDispatcher = dispatcher;
    if (api) {
      let objects: ApiObjectDispatcher | undefined;
      const watches = (this.#objectWatches = new ObjectWatches({ lw: api.client, clock, random, logger, onChange: (r, ns, n) => objects?.objectChanged(r, ns, n) }));
      const tokens = (this.#tokens = new TokenManager({ issuer: api.client, clock, logger, onChange: (uid) => objects?.tokenChanged(uid) }));
      podDispatcher = objects = new ApiObjectDispatcher({ inner: dispatcher, watches, tokens });
    }
    lifecycle = new PodLifecycle({
      clock,
      logger,
      dispatcher: podDispatcher,
      podManager,
      statusManager,
      workQueue,
      admitter: {
        admit: (pod, active) => {
          const refs = admitStaticPodRefs(pod);
          return refs.admit ? admitWithUsage(pod, active.count, active.used, node, c.maxPods) : refs;
        },
      },
      sourcesReady: () => podConfig.sourcesReady(),
      cache: cache.reader,
      onOrphan: () => metrics.main.orphanedRuntimePods.inc(),
      networkError: () => runtimeHealth.networkError(),
    });
    // A relist that fails means the runtime could not be listed; the first one to succeed after
    // it means the runtime is back: pods whose sync failed meanwhile are retried at once.
    let relistFailing = false;
    // Main-thread share of PLEG work: queueing event batches here plus the sync loop handling them.
    const plegMainSeconds = metrics.main.recorder.counter(sm.plegEventsMainThreadSeconds);
    // Log directories of pods that are gone (orphans' kept logs, failed removals, pods removed
    // while the agent was down): the kubelet's container log GC.
    const podLogGc = (this.#podLogGc = new PodLogGc({
      clock,
      logger,
      podLogsDir: c.podLogsDir,
      isPodKnown: (uid) => lifecycle.isPodKnown(uid),
      sourcesReady: () => podConfig.sourcesReady(),
    }));
    const loop = (this.#loop = new SyncLoop({
      clock,
      logger,
      updates: podConfig,
      lifecycle,
      runtimeErrors: () => runtimeHealth.errors(),
      onHousekeeping: () => void podLogGc.maybeRun(),
      onIteration: (s) => metrics.main.syncLoopIteration.observe(s),
      onPlegEventsHandled: (s) => plegMainSeconds.inc({}, s),
    }));

    this.#pleg = await startPleg({
      endpoint: cri.endpoint,
      cacheBuffer: cache.buffer,
      relistPeriodMs: c.plegRelistPeriodMs,
      relistThresholdMs: c.plegRelistThresholdMs,
      // The kubelet's plegChannelCapacity is 1000; one relist after a burst yields about two
      // events per pod (sandbox + container started), so on a dense node it scales with max-pods.
      eventCapacity: Math.max(1000, c.maxPods * 4),
      verbosity: c.verbosity,
      logger,
      onEvents: (evs) => {
        const t0 = clock.monotonic();
        loop.pushPlegEvents(evs);
        plegMainSeconds.inc({}, (clock.monotonic() - t0) / 1000);
      },
      onRelist: (r) => {
        // Observed on the main thread from the PLEG thread's report (one message per relist).
        const rec = metrics.main.recorder;
        rec.histogram(km.plegRelistDuration).observe({}, r.durationSeconds);
        if (r.intervalSeconds !== null) rec.histogram(km.plegRelistInterval).observe({}, r.intervalSeconds);
        if (r.ok) rec.gauge(km.plegLastSeen).set({}, clock.now() / 1000);
        if (!r.ok) relistFailing = true;
        else if (relistFailing) {
          relistFailing = false;
          lifecycle?.handleRuntimeReturned();
        }
        if (r.discarded > 0) rec.counter(km.plegDiscardEvents).inc({}, r.discarded);
        // kubelet_running_pods / kubelet_running_containers{container_state}: set from each
        // relist's listing, as the kubelet's PLEG does (every runtime pod, orphans included).
        if (r.runtimeCounts) {
          metrics.main.runningPods.set(r.runtimeCounts.runningPods);
          for (const [state, n] of Object.entries(r.runtimeCounts.containers) as [ContainerStateLabel, number][]) metrics.main.runningContainers(state).set(n);
        }
      },
      clock,
      onThreadExit: (threadId) => {
        const n = cache.recoverThread(threadId);
        if (n > 0) logger.error('recovered pod cache locks of the dead PLEG thread', { threadId, locks: n });
      },
      onRestart: () => metrics.main.threadRestarts.inc(),
    });
    // As the kubelet's runtimeState.addHealthCheck("PLEG", pleg.Healthy): an unhealthy PLEG is a
    // runtime error, so the sync loop backs off instead of acting on a cache nobody refreshes.
    const pleg = this.#pleg;
    runtimeHealth.addHealthCheck('PLEG', () => {
      const h = pleg.health();
      return h.healthy ? undefined : h.reason;
    });

    // The API pod source starts once the Node exists (the kubelet's order), see below.
    // Mirror pods in the API set go to the mirror manager, never to the pod workers.
    const apiSink = this.#mirrors ? this.#mirrors.splitSink(podConfig.channel(ApiserverSource)) : podConfig.channel(ApiserverSource);
    const apiSource = api ? new ApiserverPodSource({ lw: api.client, nodeName: c.nodeName, sink: apiSink, clock, random, logger }) : undefined;
    // Manifests are untrusted input: decoded on a thread of their own, with time and memory limits.
    const decoder = (this.#decoder = new ThreadManifestDecoder({ clock, logger }));
    if (c.podManifestPath) {
      this.#sources.push(
        createFileSource({ path: c.podManifestPath, nodeName: c.nodeName, sink: podConfig.channel(FileSource), clock, logger, resyncMs: c.fileCheckFrequencyMs, decoder }),
      );
    }
    if (c.manifestURL) {
      this.#sources.push(createHttpSource({ url: c.manifestURL, nodeName: c.nodeName, sink: podConfig.channel(HttpSource), clock, logger, pollMs: c.httpCheckFrequencyMs, decoder }));
    }

    metrics.aggregator.onCollect(() => {
      const counts = lifecycle.counts();
      metrics.main.desiredPods(true).set(counts.desired.static);
      metrics.main.desiredPods(false).set(counts.desired.other);
      for (const w of counts.working) metrics.main.workingPods(w.lifecycle, w.config, w.isStatic).set(w.count);
      const active = lifecycle.activePods();
      const activeStatic = active.filter(isStaticPod).length;
      metrics.main.activePods(true).set(activeStatic);
      metrics.main.activePods(false).set(active.length - activeStatic);
      cacheMetrics.observe(cache.reader.stats());
    });

    const readOnlySources = {
      metrics: coalesceCollect(metrics.aggregator, clock),
      pods: { list: (): V1Pod[] => statusManager.podsWithStatus(podManager.pods()) },
      health: {
        checks: () => [
          syncLoopCheck({ clock, latestLoopEntry: () => loop.lastIterationMs, resyncIntervalMs: c.syncFrequencyMs }),
          plegCheck({ clock, lastRelistMs: () => pleg.lastRelistMs(), thresholdMs: c.plegRelistThresholdMs }),
          podCacheCheck({ stats: () => cache.reader.stats() }),
        ],
      },
    };
    if (c.port !== 0) {
      const summary = new SummaryProvider({ runtime: cri, pods: () => [...podManager.pods()], node: procNodeStats, nodeName: c.nodeName, clock, startedAtMs: clock.now(),
        onSandboxStatsError: (err) => logger.info('ListPodSandboxStats failed; pod stats are the sums of their containers', { err: err instanceof Error ? err.message : String(err) }),
      });
      this.#secureServer = createSecurePort({
        config: c,
        reviews: this.#transport && api ? new ApiReviewCreator({ transport: this.#transport, throttle: api.bucket }) : undefined,
        runtime: cri,
        ...readOnlySources,
        podsByName: { byName: (ns, name) => podManager.getByFullName(`${ns}/${name}`) },
        stats: {
          summary: () => summary.summary(),
          resourceMetrics: () => summary.summary().then(resourceMetricsText, (err: unknown) => {
            logger.error('resource metrics: reading runtime stats failed', { err: err instanceof Error ? err.message : String(err) });
            // (the families are then empty and resource_scrape_error is 1)
            return resourceMetricsText(undefined);
          }),
        },
        nodeAddresses: [primaryHostIP()],
        clock,
        logger,
      });
      this.#secureAddress = await this.#secureServer.listen();
      logger.info('serving securely', { address: this.#secureAddress.address, port: this.#secureAddress.port });
    }
    if (c.containerLogMaxSize > 0) {
      this.#logRotation = new ContainerLogRotation({ runtime: cri, clock, logger, maxSizeBytes: c.containerLogMaxSize, maxFiles: c.containerLogMaxFiles, intervalMs: c.containerLogMonitorIntervalMs });
    }
    if (c.readOnlyPort !== 0) {
      this.#server = createAgentServer({ address: c.address, port: c.readOnlyPort, logger, ...readOnlySources });
      this.#address = await this.#server.listen();
      logger.info('serving', { address: this.#address.address, port: this.#address.port });
      if (!isLoopbackAddress(this.#address.address)) {
        logger.error('serving /pods on a non-loopback address without authentication: pod specs, env values included, are readable by anyone who can reach it', { address: this.#address.address, port: this.#address.port });
      }
    }

    this.#loopDone = loop.run(this.#stop.signal);
    this.#apiStatus?.start();
    this.#logRotation?.start();
    for (const s of this.#sources) s.start();
    if (api && apiSource) {
      // Heartbeats (node status, lease) have their own client: no token bucket, 10 s timeout, own
      // connections, so a burst of pod status writes on the main client never delays them.
      const transport = (this.#heartbeatTransport = await HttpsTransport.fromKubeconfig({ kubeconfigPath: c.kubeconfig!, maxSockets: 4 }));
      const hbRequests = metrics.main.recorder.counter(sm.heartbeatRequestsTotal);
      const heartbeat = new ObjectApi(
        new ApiClient({ transport, throttle: new TokenBucket({ qps: 0, burst: 1, clock }), clock, nodeName: c.nodeName, requestTimeoutMs: 10_000, maxRetries: 1, onRequest: (verb, resource, code) => hbRequests.inc({ verb, resource, code }) }),
        { requestTimeoutMs: 10_000 },
      );
      const nodeUpdates = metrics.main.recorder.counter(sm.nodeStatusUpdatesTotal);
      const nodeRef = { kind: 'Node' as const, namespace: '', name: c.nodeName, uid: c.nodeName };
      const nodeStatus = (this.#nodeStatus = startNodeStatus({
        config: c, clock, logger, registry: heartbeat, resources, runtime: cri, runtimeVersion: version, runtimeHealth, hostIP: primaryHostIP(),
        kubeletPort: this.#secureAddress?.port ?? c.port,
        onStatusSync: (result) => nodeUpdates.inc({ result }),
        // As the kubelet's nodeRef, node events name the node with its name as UID.
        onReadyChange: (ready) => recorder?.record(nodeRef, 'Normal', ready ? 'NodeReady' : 'NodeNotReady', `Node ${c.nodeName} status is now: ${ready ? 'NodeReady' : 'NodeNotReady'}`),
      }));
      const lateness = metrics.main.recorder.histogram(sm.nodeLeaseRenewLateness);
      const lease = (this.#nodeLease = new NodeLease({
        store: heartbeat, clock, logger, nodeName: c.nodeName, nodeUid: () => nodeStatus.node?.uid, durationSeconds: c.nodeLeaseDurationSeconds,
        renewIntervalMs: Math.round((c.nodeLeaseDurationSeconds * 1000) / 4),
        onRenew: (ms, ok) => lateness.observe({ result: ok ? 'ok' : 'failed' }, ms / 1000),
      }));
      const signal = this.#stop.signal;
      nodeUid = () => nodeStatus.node?.uid;
      const onRegistered = (_node: NodeRef): void => {
        recorder?.record(nodeRef, 'Normal', 'Starting', 'Starting kubelet.');
        this.#sources.push(apiSource);
        apiSource.start();
        this.#mirrors?.start();
        this.#background.push(lease.run(signal));
      };
      this.#background.push(
        nodeStatus.run(signal, onRegistered).catch((err: unknown) => {
          const e = err instanceof Error ? err : new Error(String(err));
          logger.error('cluster mode: node registration refused; stopping', { error: e.message });
          this.#fatal(e);
        }),
      );
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
    await Promise.allSettled(this.#background);
    await this.#mirrors?.close();
    await this.#events?.close();
    this.#eventsTransport?.close();
    await this.#apiStatus?.close();
    this.#tokens?.close();
    await this.#objectWatches?.close();
    this.#transport?.close();
    this.#heartbeatTransport?.close();
    this.#runtimeHealth?.stop();
    this.#podLogGc?.close();
    await this.#logRotation?.close();
    await Promise.allSettled([this.#dispatcher?.close(), this.#pleg?.close(), this.#server?.close(), this.#secureServer?.close()]);
    if (this.#metrics !== undefined) stderrSink.observeDrops(undefined);
    this.#metrics?.close();
    this.#cri?.close();
    this.#state = 'stopped';
    this.#d.logger.info('shardlet agent stopped; pods left running');
  }
}

/**
 * The pod cache's size for a node admitting `maxPods`: slots for every admitted pod twice over
 * (pods being torn down, orphans found at start), growable 16× (at least 16,384 slots) within
 * the cache's 1 GiB limit: only address space is reserved for the maximum.
 */
export function podCacheSize(maxPods: number): { capacity: number; maxCapacity: number } {
  const capacity = Math.min(Math.max(1024, maxPods * 2 + 64), MAX_CACHE_SLOTS);
  return { capacity, maxCapacity: Math.min(Math.max(capacity * 16, 16_384), MAX_CACHE_SLOTS) };
}
/** 1 GiB of 4 KiB slots (pod-cache-layout.ts's limit). */
const MAX_CACHE_SLOTS = (1 << 30) / POD_CACHE_DEFAULTS.bytesPerSlot;

function primaryHostIP(): string {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** 127.0.0.0/8, ::1 and IPv4-mapped loopback: the addresses only this machine reaches. */
export function isLoopbackAddress(address: string): boolean {
  const a = address.replace(/^::ffff:/i, '');
  return a === '::1' || a === 'localhost' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}
