/**
 * HTTP serving wiring: what the endpoints read (metrics, /pods, the three /healthz checks, and
 * for the secure port pods by name and stats), the secure port (--port, 0 disables) and the
 * read-only port (--read-only-port, 0 disables). The secure port starts first, as before; each
 * server is recorded before it listens, so close() after a failed start closes what exists.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { PodCacheStats } from '../../shared/pod-cache/pod-cache.js';
import type { ReviewCreator } from '../apiserver/api-reviews.js';
import { coalesceCollect } from '../metrics/coalesced-collect.js';
import type { MetricsSystem } from '../metrics/main-metrics.js';
import type { PodManager } from '../pod-manager/pod-manager.js';
import { createAgentServer, type AgentServer, type ReadOnlySources } from '../server/agent-server.js';
import { plegCheck, podCacheCheck, syncLoopCheck } from '../server/health-checks.js';
import { createSecurePort, type SecurePortDeps } from '../server/secure-port.js';
import type { SecureServer } from '../server/secure-server.js';
import { procNodeStats } from '../server/stats-node.js';
import { resourceMetricsText } from '../server/stats-resource-metrics.js';
import { SummaryProvider, type SummaryProviderOptions } from '../server/stats-summary.js';
import { imageFsStats, statfsCapacity } from '../gc/image-fs-stats.js';
import type { ImageService } from '../../shared/cri/runtime-service.js';
import type { StatusManager } from '../status/status-manager.js';
import type { AgentConfig } from './agent-config.js';
import { isLoopbackAddress, nodeInternalIP } from './host-addresses.js';

export interface AgentServersDeps {
  config: AgentConfig;
  clock: Clock;
  logger: Logger;
  runtime: SecurePortDeps['runtime'] & SummaryProviderOptions['runtime'] & Pick<ImageService, 'imageFsInfo'>;
  metrics: MetricsSystem;
  podManager: Pick<PodManager, 'pods' | 'getByFullName'>;
  statusManager: Pick<StatusManager, 'podsWithStatus'>;
  syncLoop: { readonly lastIterationMs: number };
  pleg: { lastRelistMs(): number | undefined };
  cache: { stats(): PodCacheStats };
  /** The /stats/summary provider (agent-eviction.ts createSummaryProvider); absent: CPU, memory and image fs only. */
  summary?: SummaryProvider;
  /** Cluster mode: TokenReview / SubjectAccessReview for the secure port. */
  reviews: ReviewCreator | undefined;
}

type Address = { address: string; port: number };

export class AgentServers {
  readonly #d: AgentServersDeps;
  #server: AgentServer | undefined;
  #secureServer: SecureServer | undefined;
  #address: Address | undefined;
  #secureAddress: Address | undefined;

  constructor(deps: AgentServersDeps) {
    this.#d = deps;
  }

  /** Where the read-only server listens (undefined when disabled or not started). */
  get address(): Address | undefined {
    return this.#address;
  }

  /** Where the secure port listens (undefined when disabled or not started). */
  get secureAddress(): Address | undefined {
    return this.#secureAddress;
  }

  /** What both ports serve read-only: metrics (one collection per second), /pods, /healthz. */
  #readOnlySources(): ReadOnlySources {
    const { config: c, clock, metrics, podManager, statusManager, syncLoop, pleg, cache } = this.#d;
    return {
      metrics: coalesceCollect(metrics.aggregator, clock),
      pods: { list: (): V1Pod[] => statusManager.podsWithStatus(podManager.pods()) },
      health: {
        checks: () => [
          syncLoopCheck({ clock, latestLoopEntry: () => syncLoop.lastIterationMs, resyncIntervalMs: c.syncFrequencyMs }),
          plegCheck({ clock, lastRelistMs: () => pleg.lastRelistMs(), thresholdMs: c.plegRelistThresholdMs }),
          podCacheCheck({ stats: () => cache.stats() }),
        ],
      },
    };
  }

  /** Listens on the secure port, then the read-only port (each when enabled). */
  async start(): Promise<void> {
    const { config: c, clock, logger, runtime, podManager } = this.#d;
    const readOnlySources = this.#readOnlySources();
    if (c.port !== 0) {
      const summary = this.#d.summary ?? new SummaryProvider({ runtime, pods: () => [...podManager.pods()], node: procNodeStats, nodeName: c.nodeName, clock, startedAtMs: clock.now(),
        runtimeFs: () => imageFsStats(runtime, statfsCapacity, clock).catch((err: unknown) => {
          logger.v(2).info('stats: image filesystem figures unavailable', { err: err instanceof Error ? err.message : String(err) });
          return undefined;
        }),
        onSandboxStatsError: (err) => logger.info('ListPodSandboxStats failed; pod stats are the sums of their containers', { err: err instanceof Error ? err.message : String(err) }),
      });
      this.#secureServer = createSecurePort({
        config: c,
        reviews: this.#d.reviews,
        runtime,
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
        nodeAddresses: [nodeInternalIP(c.nodeIP)],
        clock,
        logger,
      });
      this.#secureAddress = await this.#secureServer.listen();
      logger.info('serving securely', { address: this.#secureAddress.address, port: this.#secureAddress.port });
    }
    if (c.readOnlyPort !== 0) {
      this.#server = createAgentServer({ address: c.address, port: c.readOnlyPort, logger, ...readOnlySources });
      this.#address = await this.#server.listen();
      logger.info('serving', { address: this.#address.address, port: this.#address.port });
      if (!isLoopbackAddress(this.#address.address)) {
        logger.error('serving /pods on a non-loopback address without authentication: pod specs, env values included, are readable by anyone who can reach it', { address: this.#address.address, port: this.#address.port });
      }
    }
  }

  /** Closes both servers (each gracefully); never rejects. */
  async close(): Promise<void> {
    await Promise.allSettled([this.#server?.close(), this.#secureServer?.close()]);
  }
}
