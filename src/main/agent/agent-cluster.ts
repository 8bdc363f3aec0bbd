/**
 * Cluster-mode wiring (--kubeconfig): the API clients and what talks through them — pod status
 * writes (ApiStatusSync), events, mirror pods, the API pod source, configMaps/secrets/tokens and
 * service links (one Service watch) that ride along with pod updates, node registration and
 * status, and the node lease.
 *
 * Four clients, each with its own connections so one cannot starve another:
 *  - main: rate-limited (--kube-api-qps/--kube-api-burst): pod source, status writes, deletes,
 *    mirror pods, object watches, the Service watch, tokens, reviews;
 *  - events: its own throttle (--event-qps/--event-burst), 2 sockets, one retry;
 *  - heartbeats (node status, lease): no token bucket, 10 s timeout, 4 sockets, so a burst of pod
 *    status writes on the main client never delays them.
 *
 * The agent calls the phases in its start order (connect → startEvents → createMirrors →
 * wrapDispatcher → podSource → startHeartbeats); each phase records what it built before it can
 * fail, so close() after a failed start releases exactly what exists. close() order (unchanged
 * from the agent's): background runs (node status, lease) → mirrors → events and their
 * transport → status sync → tokens → object watches → Service watch → main transport →
 * heartbeat transport.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock, Random } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import * as km from '../../shared/metrics/kubelet-metrics.js';
import * as sm from '../../shared/metrics/shardlet-metrics.js';
import { ApiserverSource, type PodSource } from '../../shared/manifest/pod-update.js';
import { ApiClient } from '../apiserver/api-client.js';
import { ApiReviewCreator } from '../apiserver/api-reviews.js';
import { HttpsTransport } from '../apiserver/https-transport.js';
import { ObjectApi } from '../apiserver/object-api.js';
import type { NodeRef } from '../apiserver/object-roles.js';
import { TokenBucket } from '../apiserver/token-bucket.js';
import { ApiObjectDispatcher } from '../config-objects/api-object-dispatcher.js';
import { ObjectWatches } from '../config-objects/object-watches.js';
import { ServiceEnvDispatcher } from '../config-objects/service-env-dispatcher.js';
import { ServiceWatch } from '../config-objects/service-watch.js';
import { TokenManager } from '../config-objects/token-manager.js';
import type { PodConfig } from '../config/pod-config.js';
import { ApiserverPodSource } from '../config/source-apiserver.js';
import type { PodDispatcher } from '../dispatch/pod-dispatcher.js';
import { EventRecorder } from '../events/event-recorder.js';
import { NodeLease } from '../lease/node-lease.js';
import type { MetricsSystem } from '../metrics/main-metrics.js';
import { MirrorPodManager } from '../mirror/mirror-pods.js';
import { startNodeStatus, type NodeStatusWiring } from '../node-status/node-agent-wiring.js';
import type { NodeStatusManager } from '../node-status/node-status-manager.js';
import { ApiStatusSync } from '../status/api-status-sync.js';
import type { AgentConfig } from './agent-config.js';

export interface ClusterModeDeps {
  config: AgentConfig & { kubeconfig: string };
  clock: Clock;
  random: Random;
  logger: Logger;
  metrics: MetricsSystem;
  /** Aborted when the agent stops: ends the node status and lease loops. */
  signal: AbortSignal;
  /** Node registration was refused: the agent must end (Agent.fatal). */
  onFatal: (err: Error) => void;
}

/** What node status needs from the agent (see NodeStatusWiring), and the API source to start once registered. */
export interface HeartbeatDeps extends Pick<NodeStatusWiring, 'resources' | 'runtime' | 'runtimeVersion' | 'runtimeHealth' | 'hostIP' | 'kubeletPort' | 'pressure' | 'shutdownErrors'> {
  /** The API pod source, started once the Node is registered (the kubelet's order). */
  apiSource: PodSource;
  /** Hands the started API source to the agent (closed with the other sources). */
  addSource: (source: PodSource) => void;
}

export class ClusterMode {
  readonly #d: ClusterModeDeps;
  readonly #transport: HttpsTransport;
  /** The main (rate-limited) client and its throttle. */
  readonly client: ApiClient;
  readonly bucket: TokenBucket;
  /** Pod status writes and the final deletes (the kubelet's status manager API side). */
  readonly apiStatus: ApiStatusSync;
  #events: EventRecorder | undefined;
  #eventsTransport: HttpsTransport | undefined;
  #mirrors: MirrorPodManager | undefined;
  #tokens: TokenManager | undefined;
  #objectWatches: ObjectWatches | undefined;
  #services: ServiceWatch | undefined;
  #heartbeatTransport: HttpsTransport | undefined;
  #nodeStatus: NodeStatusManager | undefined;
  #nodeLease: NodeLease | undefined;
  /** Long-running loops (node status, lease) awaited by close(). */
  readonly #background: Promise<void>[] = [];

  /** Opens the main client (reads the kubeconfig) and builds the status sync on it. */
  static async connect(deps: ClusterModeDeps): Promise<ClusterMode> {
    const transport = await HttpsTransport.fromKubeconfig({ kubeconfigPath: deps.config.kubeconfig });
    return new ClusterMode(deps, transport);
  }

  private constructor(deps: ClusterModeDeps, transport: HttpsTransport) {
    this.#d = deps;
    this.#transport = transport;
    const { config: c, clock, logger, metrics } = deps;
    const rec = metrics.main.recorder;
    this.bucket = new TokenBucket({ qps: c.kubeAPIQPS, burst: c.kubeAPIBurst, clock });
    const requests = rec.counter(sm.apiRequestsTotal);
    this.client = new ApiClient({ transport, throttle: this.bucket, clock, nodeName: c.nodeName, onRequest: (verb, resource, code) => requests.inc({ verb, resource, code }) });
    logger.info('cluster mode', { server: transport.server, kubeAPIQPS: c.kubeAPIQPS, kubeAPIBurst: c.kubeAPIBurst });
    const patches = rec.counter(sm.podStatusPatchesTotal);
    const coalesced = rec.counter(sm.podStatusCoalescedTotal);
    const syncDuration = rec.histogram(km.podStatusSyncDuration);
    this.apiStatus = new ApiStatusSync({
      writer: this.client,
      deleter: this.client,
      throttle: this.bucket,
      clock,
      logger,
      onSynced: (s) => syncDuration.observe({}, s),
      onPatch: (result) => patches.inc({ result }),
      onCoalesced: () => coalesced.inc({}),
    });
  }

  /** The event recorder (undefined before startEvents). */
  get events(): EventRecorder | undefined {
    return this.#events;
  }

  get mirrors(): MirrorPodManager | undefined {
    return this.#mirrors;
  }

  get nodeStatus(): NodeStatusManager | undefined {
    return this.#nodeStatus;
  }

  get nodeLease(): NodeLease | undefined {
    return this.#nodeLease;
  }

  /** Events have their own client and throttle (--event-qps / --event-burst) and connections. */
  async startEvents(): Promise<EventRecorder> {
    const { config: c, clock, logger, metrics } = this.#d;
    const transport = (this.#eventsTransport = await HttpsTransport.fromKubeconfig({ kubeconfigPath: c.kubeconfig, maxSockets: 2 }));
    const results = metrics.main.recorder.counter(sm.eventsTotal);
    const events = (this.#events = new EventRecorder({
      writer: new ObjectApi(new ApiClient({ transport, throttle: new TokenBucket({ qps: c.eventRecordQPS, burst: c.eventBurst, clock }), clock, nodeName: c.nodeName, maxRetries: 1 })),
      clock, logger, host: c.nodeName, onResult: (result) => results.inc({ result }),
    }));
    events.start();
    return events;
  }

  /** Mirror pods of the static pods `desired` returns (started once the Node is registered). */
  createMirrors(desired: () => V1Pod[]): MirrorPodManager {
    const { config: c, clock, logger, metrics } = this.#d;
    const mirrorOps = metrics.main.recorder.counter(sm.mirrorPodOperationsTotal);
    this.#mirrors = new MirrorPodManager({
      creator: new ObjectApi(this.client),
      deleter: this.client,
      statusSink: this.apiStatus,
      desired,
      nodeName: c.nodeName,
      nodeUid: () => this.#nodeStatus?.node?.uid,
      clock,
      logger,
      onOperation: (operation, result) => mirrorOps.inc({ operation, result }),
    });
    return this.#mirrors;
  }

  /**
   * Pods' configMaps, secrets and tokens, and their service environment variables, ride along
   * with their updates to `inner`. The node's one Service watch starts here (before any pod).
   */
  wrapDispatcher(inner: PodDispatcher): PodDispatcher {
    const { clock, random, logger } = this.#d;
    let objects: ApiObjectDispatcher | undefined;
    let serviceEnv: ServiceEnvDispatcher | undefined;
    const services = (this.#services = new ServiceWatch({ lw: this.client, clock, random, logger, onChange: () => serviceEnv?.servicesChanged() }));
    serviceEnv = new ServiceEnvDispatcher({ inner, services });
    services.start();
    const watches = (this.#objectWatches = new ObjectWatches({ lw: this.client, clock, random, logger, onChange: (r, ns, n) => objects?.objectChanged(r, ns, n) }));
    const tokens = (this.#tokens = new TokenManager({ issuer: this.client, clock, logger, onChange: (uid) => objects?.tokenChanged(uid) }));
    return (objects = new ApiObjectDispatcher({ inner: serviceEnv, watches, tokens }));
  }

  /**
   * The API pod source (not started: it starts once the Node exists, see startHeartbeats).
   * Mirror pods in the API set go to the mirror manager, never to the pod workers.
   */
  podSource(podConfig: PodConfig): ApiserverPodSource {
    const { config: c, clock, random, logger } = this.#d;
    const channel = podConfig.channel(ApiserverSource);
    const sink = this.#mirrors ? this.#mirrors.splitSink(channel) : channel;
    return new ApiserverPodSource({ lw: this.client, nodeName: c.nodeName, sink, clock, random, logger });
  }

  /** TokenReview / SubjectAccessReview for the secure port, on the main client's throttle. */
  reviews(): ApiReviewCreator {
    return new ApiReviewCreator({ transport: this.#transport, throttle: this.bucket });
  }

  /**
   * Node registration and status, then (once registered) the "Starting" event, the API pod
   * source, the mirror pods and the lease, in the kubelet's order. A refused registration ends
   * the agent (onFatal).
   */
  async startHeartbeats(h: HeartbeatDeps): Promise<void> {
    const { config: c, clock, logger, metrics, signal } = this.#d;
    const rec = metrics.main.recorder;
    const transport = (this.#heartbeatTransport = await HttpsTransport.fromKubeconfig({ kubeconfigPath: c.kubeconfig, maxSockets: 4 }));
    const hbRequests = rec.counter(sm.heartbeatRequestsTotal);
    const heartbeat = new ObjectApi(
      new ApiClient({ transport, throttle: new TokenBucket({ qps: 0, burst: 1, clock }), clock, nodeName: c.nodeName, requestTimeoutMs: 10_000, maxRetries: 1, onRequest: (verb, resource, code) => hbRequests.inc({ verb, resource, code }) }),
      { requestTimeoutMs: 10_000 },
    );
    const nodeUpdates = rec.counter(sm.nodeStatusUpdatesTotal);
    // As the kubelet's nodeRef, node events name the node with its name as UID.
    const nodeRef = { kind: 'Node' as const, namespace: '', name: c.nodeName, uid: c.nodeName };
    const nodeStatus = (this.#nodeStatus = startNodeStatus({
      config: c, clock, logger, registry: heartbeat, resources: h.resources, runtime: h.runtime, runtimeVersion: h.runtimeVersion, runtimeHealth: h.runtimeHealth, hostIP: h.hostIP,
      kubeletPort: h.kubeletPort,
      ...(h.pressure ? { pressure: h.pressure } : {}),
      ...(h.shutdownErrors ? { shutdownErrors: h.shutdownErrors } : {}),
      onStatusSync: (result) => nodeUpdates.inc({ result }),
      onReadyChange: (ready) => this.#events?.record(nodeRef, 'Normal', ready ? 'NodeReady' : 'NodeNotReady', `Node ${c.nodeName} status is now: ${ready ? 'NodeReady' : 'NodeNotReady'}`),
    }));
    const lateness = rec.histogram(sm.nodeLeaseRenewLateness);
    const leaseRequest = rec.histogram(sm.nodeLeaseRenewRequestDuration);
    const lease = (this.#nodeLease = new NodeLease({
      store: heartbeat, clock, logger, nodeName: c.nodeName, nodeUid: () => nodeStatus.node?.uid, durationSeconds: c.nodeLeaseDurationSeconds,
      renewIntervalMs: Math.round((c.nodeLeaseDurationSeconds * 1000) / 4),
      onRenew: (r) => {
        const result = r.ok ? 'ok' : 'failed';
        lateness.observe({ result }, r.latenessMs / 1000);
        leaseRequest.observe({ result }, r.requestMs / 1000);
      },
    }));
    const onRegistered = (_node: NodeRef): void => {
      this.#events?.record(nodeRef, 'Normal', 'Starting', 'Starting kubelet.');
      h.addSource(h.apiSource);
      h.apiSource.start();
      this.#mirrors?.start();
      this.#background.push(lease.run(signal));
    };
    this.#background.push(
      nodeStatus.run(signal, onRegistered).catch((err: unknown) => {
        const e = err instanceof Error ? err : new Error(String(err));
        logger.error('cluster mode: node registration refused; stopping', { error: e.message });
        this.#d.onFatal(e);
      }),
    );
  }

  /** After the agent's signal aborted and its sources and sync loop ended. Idempotent. */
  async close(): Promise<void> {
    await Promise.allSettled(this.#background);
    await this.#mirrors?.close();
    await this.#events?.close();
    this.#eventsTransport?.close();
    await this.apiStatus.close();
    this.#tokens?.close();
    await this.#objectWatches?.close();
    await this.#services?.close();
    this.#transport.close();
    this.#heartbeatTransport?.close();
  }
}
