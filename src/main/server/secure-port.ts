/**
 * Assembles the secure port from the agent's configuration: serving pair (serving-cert.ts),
 * authenticators (x509 against --client-ca-file; TokenReview with --authentication-token-webhook),
 * anonymous access, the authorizer (AlwaysAllow or Webhook), and the routes' sources. The agent
 * calls it once; everything it needs arrives here as role interfaces.
 */
import fs from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import type { ReviewCreator } from '../apiserver/api-reviews.js';
import type { Clock } from '../../shared/clock/clock.js';
import type { RuntimeService } from '../../shared/cri/runtime-service.js';
import { KubernetesContainerNameLabel, KubernetesPodNameLabel, KubernetesPodNamespaceLabel, KubernetesPodUIDLabel } from '../../shared/kubetypes/kubelet-labels.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { AgentConfig } from '../agent/agent-config.js';
import { RequestAuth } from './auth-chain.js';
import { alwaysAllow, SubjectAccessReviewAuthorizer } from './auth-sar-authorizer.js';
import { TokenReviewAuthenticator } from './auth-token-webhook.js';
import type { Authenticator } from './auth-types.js';
import { X509Authenticator } from './auth-x509.js';
import { ContainerLogLocator } from './container-logs-locate.js';
import { kubeletApiRoutes, kubeletApiUpgrades, type KubeletApiRoutesOptions } from './kubelet-api-routes.js';
import { StreamProxy } from './stream-proxy.js';
import type { StreamRuntime } from './stream-request.js';
import { createSecureServer, type SecureServer } from './secure-server.js';
import type { HealthSource, MetricsSource, PodListSource } from './server-sources.js';
import type { PodByNameSource, RunningPodsSource, StatsSource } from './secure-sources.js';
import { resolveServingCert } from './serving-cert.js';

export interface SecurePortDeps {
  config: Pick<AgentConfig, 'streamingConnectionIdleTimeoutMs' | 'address' | 'port' | 'rootDir' | 'nodeName' | 'tlsCertFile' | 'tlsPrivateKeyFile' | 'clientCAFile' | 'anonymousAuth' | 'authenticationTokenWebhook' | 'authenticationTokenWebhookCacheTTLMs' | 'authorizationMode' | 'authorizationWebhookCacheAuthorizedTTLMs' | 'authorizationWebhookCacheUnauthorizedTTLMs'>;
  /** The API server's review endpoint (cluster mode); required for the token webhook and Webhook authz. */
  reviews: ReviewCreator | undefined;
  runtime: Pick<RuntimeService, 'listContainers' | 'containerStatus' | 'listPodSandbox'> & StreamRuntime;
  metrics: MetricsSource;
  health: HealthSource;
  pods: PodListSource;
  podsByName: PodByNameSource;
  stats: StatsSource;
  nodeAddresses: readonly string[];
  clock: Clock;
  logger: Logger;
}

export function createSecurePort(d: SecurePortDeps): SecureServer {
  const c = d.config;
  const serving = resolveServingCert({ tlsCertFile: c.tlsCertFile, tlsPrivateKeyFile: c.tlsPrivateKeyFile, rootDir: c.rootDir, altNames: d.nodeAddresses, nowMs: d.clock.now() });
  d.logger.info('secure port serving certificate', { certFile: serving.certFile, generated: serving.generated });
  const authenticators: Authenticator[] = [];
  const clientCA = c.clientCAFile !== undefined ? fs.readFileSync(c.clientCAFile) : undefined;
  if (clientCA !== undefined) authenticators.push(new X509Authenticator());
  if (c.authenticationTokenWebhook) {
    if (d.reviews === undefined) throw new TypeError('createSecurePort: --authentication-token-webhook needs the API server');
    authenticators.push(new TokenReviewAuthenticator({ reviews: d.reviews, clock: d.clock, cacheTtlMs: c.authenticationTokenWebhookCacheTTLMs }));
  }
  let authorizer = alwaysAllow;
  if (c.authorizationMode === 'Webhook') {
    if (d.reviews === undefined) throw new TypeError('createSecurePort: --authorization-mode Webhook needs the API server');
    authorizer = new SubjectAccessReviewAuthorizer({
      reviews: d.reviews,
      clock: d.clock,
      authorizedTtlMs: c.authorizationWebhookCacheAuthorizedTTLMs,
      unauthorizedTtlMs: c.authorizationWebhookCacheUnauthorizedTTLMs,
    });
  }
  if (c.anonymousAuth && c.authorizationMode === 'AlwaysAllow') {
    // As for a non-loopback read-only port (agent-servers.ts): allowed, but never silently.
    d.logger.error('--anonymous-auth with --authorization-mode AlwaysAllow: every secure-port endpoint (container logs, pod specs with env values, metrics, stats) is served without credentials to anyone who can reach it; turn anonymous access off or use --authorization-mode Webhook', { address: c.address, port: c.port });
  }
  const auth = new RequestAuth({ authenticators, anonymous: c.anonymousAuth, authorizer, nodeName: c.nodeName });
  const streamProxy = new StreamProxy({ clock: d.clock, logger: d.logger, idleTimeoutMs: c.streamingConnectionIdleTimeoutMs });
  const routeOptions: KubeletApiRoutesOptions = {
    metrics: d.metrics,
    health: d.health,
    pods: d.pods,
    podsByName: d.podsByName,
    runningPods: runningPodsFrom(d.runtime),
    logs: new ContainerLogLocator({ runtime: d.runtime }),
    stats: d.stats,
    clock: d.clock,
    logger: d.logger,
    streamRuntime: d.runtime,
    streamProxy,
  };
  const routes = kubeletApiRoutes(routeOptions);
  const upgrades = kubeletApiUpgrades(routeOptions);
  return createSecureServer({ address: c.address, port: c.port, cert: serving.cert, key: serving.key, clientCA, auth, routes, upgrades, onClose: () => streamProxy.destroy(), logger: d.logger, clock: d.clock });
}

/** The kubelet's /runningpods/: ready sandboxes with their running containers, as minimal pods. */
export function runningPodsFrom(runtime: Pick<RuntimeService, 'listContainers' | 'listPodSandbox'>): RunningPodsSource {
  return {
    async list(): Promise<V1Pod[]> {
      const [sandboxes, containers] = await Promise.all([
        runtime.listPodSandbox({ state: { state: 'SANDBOX_READY' } }),
        runtime.listContainers({ state: { state: 'CONTAINER_RUNNING' } }),
      ]);
      const byUid = new Map<string, V1Pod>();
      for (const s of sandboxes) {
        const uid = s.metadata?.uid ?? s.labels[KubernetesPodUIDLabel] ?? '';
        byUid.set(uid, { metadata: { name: s.metadata?.name ?? '', namespace: s.metadata?.namespace ?? '', uid }, spec: { containers: [] }, status: {} });
      }
      for (const ct of containers) {
        const uid = ct.labels[KubernetesPodUIDLabel] ?? '';
        let pod = byUid.get(uid);
        if (pod === undefined) {
          pod = { metadata: { name: ct.labels[KubernetesPodNameLabel] ?? '', namespace: ct.labels[KubernetesPodNamespaceLabel] ?? '', uid }, spec: { containers: [] }, status: {} };
          byUid.set(uid, pod);
        }
        pod.spec!.containers.push({ name: ct.metadata?.name ?? ct.labels[KubernetesContainerNameLabel] ?? '', image: ct.image?.image ?? ct.imageRef });
      }
      return [...byUid.values()];
    },
  };
}
