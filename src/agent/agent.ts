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
import { resolveNodeAllocatable } from '../admission/node-allocatable.js';
import type { Clock, Random } from '../clock/clock.js';
import { PodConfig } from '../config/pod-config.js';
import { ApiserverSource, FileSource, HttpSource, type PodSource } from '../config/pod-update.js';
import { ApiserverPodSource } from '../config/source-apiserver.js';
import { ApiClient } from '../apiserver/api-client.js';
import { HttpsTransport } from '../apiserver/https-transport.js';
import { TokenBucket } from '../apiserver/token-bucket.js';
import { ApiStatusSync } from '../status/api-status-sync.js';
import { createFileSource } from '../config/source-file.js';
import { createHttpSource } from '../config/source-http.js';
import { ThreadManifestDecoder } from '../config/manifest-decode-thread-client.js';
import { CriClient } from '../cri/cri-client.js';
import { InlineDispatcher } from '../dispatch/inline-dispatcher.js';
import type { PodDispatcher, PodDispatcherEvents } from '../dispatch/pod-dispatcher.js';
import { PoolDispatcher } from '../dispatch/pool-dispatcher.js';
import type { Logger } from '../logging/logger.js';
import * as km from '../metrics/kubelet-metrics.js';
import * as sm from '../metrics/shardlet-metrics.js';
import { createMetricsSystem, type ContainerStateLabel, type MetricsSystem } from '../metrics/main-metrics.js';
import { coalesceCollect } from '../metrics/coalesced-collect.js';
import { createPodCache } from '../pod-cache/pod-cache-create.js';
import { cacheNow } from '../pod-cache/pod-cache.js';
import { PodManager, isStaticPod } from '../pod-manager/pod-manager.js';
import { startPleg, type PlegRunner } from '../pleg/pleg-runner.js';
import { createAgentServer, type AgentServer } from '../server/agent-server.js';
import { plegCheck, syncLoopCheck } from '../server/health-checks.js';
import { StatusManager } from '../status/status-manager.js';
import { PodLifecycle } from '../syncloop/pod-lifecycle.js';
import { SyncLoop } from '../syncloop/sync-loop.js';
import { WorkQueue } from '../syncloop/work-queue.js';
import { createPodWorkerHost } from '../../workers/pod-worker-factory.js';
import type { PodWorkerThreadConfig, WorkerToMain } from '../../workers/pod-worker-protocol.js';
import type { AgentConfig } from './agent-config.js';
import { RuntimeHealth } from './runtime-health.js';

export interface AgentDeps {
  config: AgentConfig;
  clock: Clock;
  random: Random;
  logger: Logger;
}

export type AgentState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Compiled thread entries, relative to dist/src/agent/. */
export const POD_WORKER_THREAD_FILE = path.resolve(here, '../../workers/pod-worker-thread.js');

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
  #runtimeHealth: RuntimeHealth | undefined;
  #address: { address: string; port: number } | undefined;
  #transport: HttpsTransport | undefined;
  #apiStatus: ApiStatusSync | undefined;
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

  /** Where the HTTP server listens (undefined when disabled). */
  get address(): { address: string; port: number } | undefined {
    return this.#address;
  }

  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`agent already ${this.#state}`);
    this.#state = 'starting';
    const { config: c, clock, random, logger } = this.#d;
    logger.info('starting shardlet agent', { nodeName: c.nodeName, workers: c.workers, maxPods: c.maxPods, endpoint: c.containerRuntimeEndpoint });

    const metrics = (this.#metrics = createMetricsSystem());
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

    // Room for every admitted pod plus pods being torn down and orphans found at start.
    const cache = createPodCache({ capacity: Math.max(1024, c.maxPods * 2 + 64) });
    metrics.main.cacheSlotsCapacity.set(cache.reader.stats().capacity);

    const podManager = new PodManager();
    const workQueue = new WorkQueue();
    const statusManager = new StatusManager({
      clock,
      logger,
      onPodRunning: (_pod, seconds) => metrics.main.podStartDuration.observe(seconds),
      onPodStartedSLI: (_pod, seconds) => metrics.main.podStartSliDuration.observe(seconds),
      ...(this.#apiStatus ? { apiSink: this.#apiStatus } : {}),
    });
    const node = resolveNodeAllocatable(Object.entries(c.nodeAllocatable).map(([k, v]) => `${k}=${v}`).join(',') || undefined);
    const podConfig = (this.#podConfig = new PodConfig({ clock, logger }));

    let lifecycle: PodLifecycle | undefined;
    const events: PodDispatcherEvents = {
      onMessage: (msg: WorkerToMain) => {
        if (msg.kind === 'podResult') lifecycle?.handlePodResult(msg);
        else this.#loop?.pushProbeUpdate(msg.update);
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
    });
    // Main-thread share of PLEG work: queueing event batches here plus the sync loop handling them.
    const plegMainSeconds = metrics.main.recorder.counter(sm.plegEventsMainThreadSeconds);
    const loop = (this.#loop = new SyncLoop({
      clock,
      logger,
      updates: podConfig,
      lifecycle,
      runtimeErrors: () => runtimeHealth.errors(),
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

    if (api) {
      this.#sources.push(new ApiserverPodSource({ lw: api.client, nodeName: c.nodeName, sink: podConfig.channel(ApiserverSource), clock, random, logger }));
    }
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
      metrics.main.cacheSlotsUsed.set(cache.reader.stats().slotsUsed);
    });

    if (c.port !== 0) {
      this.#server = createAgentServer({
        address: c.address,
        port: c.port,
        logger,
        metrics: coalesceCollect(metrics.aggregator, clock),
        pods: { list: (): V1Pod[] => statusManager.podsWithStatus(podManager.pods()) },
        health: {
          checks: () => [
            syncLoopCheck({ clock, latestLoopEntry: () => loop.lastIterationMs, resyncIntervalMs: c.syncFrequencyMs }),
            plegCheck({ clock, lastRelistMs: () => pleg.lastRelistMs(), thresholdMs: c.plegRelistThresholdMs }),
          ],
        },
      });
      this.#address = await this.#server.listen();
      logger.info('serving', { address: this.#address.address, port: this.#address.port });
      if (!isLoopbackAddress(this.#address.address)) {
        logger.error('serving /pods on a non-loopback address without authentication: pod specs, env values included, are readable by anyone who can reach it', { address: this.#address.address, port: this.#address.port });
      }
    }

    this.#loopDone = loop.run(this.#stop.signal);
    this.#apiStatus?.start();
    for (const s of this.#sources) s.start();
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
    await this.#apiStatus?.close();
    this.#tokens?.close();
    await this.#objectWatches?.close();
    this.#transport?.close();
    this.#runtimeHealth?.stop();
    await Promise.allSettled([this.#dispatcher?.close(), this.#pleg?.close(), this.#server?.close()]);
    this.#metrics?.close();
    this.#cri?.close();
    this.#state = 'stopped';
    this.#d.logger.info('shardlet agent stopped; pods left running');
  }
}

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
