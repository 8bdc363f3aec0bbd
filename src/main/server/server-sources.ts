/**
 * What the agent server reads, as small role interfaces the agent core implements. The server
 * never reaches into the sync loop, the pool or the runtime: it only calls these.
 */
import type { V1Pod } from '@kubernetes/client-node';

/** The Prometheus exposition (MetricsAggregator satisfies it). */
export interface MetricsSource {
  /** The whole exposition in text format 0.0.4. A rejection answers 500. */
  collect(): Promise<string>;
}

/** One named health check's current verdict. */
export interface HealthCheckResult {
  /** Path segment and output name: 'syncloop', 'pleg' ([a-z0-9-]+). */
  readonly name: string;
  readonly ok: boolean;
  /** Why it failed, e.g. "pleg was last seen active 3m5s ago; threshold is 3m0s". */
  readonly reason?: string;
}

export interface HealthSource {
  /** Evaluated on every /healthz request; must be cheap and synchronous. */
  checks(): readonly HealthCheckResult[];
}

/**
 * The pods this node runs, as the kubelet's read-only /pods endpoint lists them. Items are
 * immutable: a changed pod is a new item object (the route caches each item's JSON by identity).
 */
export interface PodListSource {
  list(): readonly V1Pod[];
}
