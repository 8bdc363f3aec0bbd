/**
 * One hollow node: the product's Agent (agent.ts), unchanged in what it does per node, run
 * embedded (AgentEmbedding) beside its own simulated runtime (HollowRuntime). Per node, exactly
 * what a standalone `shardlet agent --kubeconfig` has: its Node object and status, its Lease, its
 * API pod source (`spec.nodeName=<node>` list+watch), its Service watch, its status writer and
 * event recorder with their own token buckets (--kube-api-qps / --event-qps per node), its
 * admission and max-pods, pod manager, sync loop, pod workers and probes, PLEG and pod cache.
 * So each node's API traffic is a standalone node's by construction.
 *
 * What differs from a standalone agent (hollow-config.ts sets it): no kubelet ports (the ports
 * are per process), no QoS cgroups (one host), the PLEG relists on the main thread (no thread per
 * node), and a smaller metrics arena.
 *
 * Lifecycle: 'new' → start() → 'running' | 'failed'; a refused registration (Agent.fatal) or a
 * failed start makes the node 'failed' and stops only it. stop() → 'stopped'. Idempotent.
 */
import type { Clock, Random } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { Agent } from '../agent/agent.js';
import type { AgentConfig } from '../agent/agent-config.js';
import type { MetricsSystemOptions } from '../metrics/main-metrics.js';
import type { FaultAction } from './hollow-faults.js';
import type { HollowRuntime } from './hollow-runtime.js';

export type HollowNodeState = 'new' | 'starting' | 'running' | 'failed' | 'stopped';

export interface HollowNodeDeps {
  name: string;
  /** The node's agent configuration, runtime endpoint included (hollow-agent-config.ts). */
  agentConfig: AgentConfig;
  runtime: HollowRuntime;
  metrics: MetricsSystemOptions;
  clock: Clock;
  random: Random;
  logger: Logger;
}

export class HollowNodeFaultError extends Error {
  override readonly name = 'HollowNodeFaultError';
  readonly code = 'ERR_HOLLOW_FAULT_STATE';
}

export class HollowNode {
  readonly name: string;
  readonly #d: HollowNodeDeps;
  readonly #agent: Agent;
  #state: HollowNodeState = 'new';
  #error = '';
  #stopping: Promise<void> | undefined;

  constructor(deps: HollowNodeDeps) {
    this.name = deps.name;
    this.#d = deps;
    this.#agent = new Agent({ config: deps.agentConfig, clock: deps.clock, random: deps.random, logger: deps.logger, embedding: { metrics: deps.metrics } });
  }

  get state(): HollowNodeState {
    return this.#state;
  }

  /** Why the node failed ('' unless 'failed'). */
  get error(): string {
    return this.#error;
  }

  get agent(): Agent {
    return this.#agent;
  }

  get runtime(): HollowRuntime {
    return this.#d.runtime;
  }

  /** Whether the Node object exists (registered by this node). */
  get registered(): boolean {
    return this.#agent.nodeStatus?.node !== undefined;
  }

  /** Starts the agent; never rejects: a failure is the node's state ('failed', error). */
  async start(): Promise<void> {
    if (this.#state !== 'new') return;
    this.#state = 'starting';
    try {
      await this.#agent.start();
    } catch (err) {
      await this.#fail(err);
      return;
    }
    if (this.#state !== 'starting') return;
    this.#state = 'running';
    void this.#agent.fatal.then((err) => this.#fail(err));
  }

  async #fail(err: unknown): Promise<void> {
    if (this.#state === 'failed' || this.#state === 'stopped') return;
    this.#state = 'failed';
    this.#error = err instanceof Error ? err.message : String(err);
    this.#d.logger.error('hollow node failed; the other nodes go on', { node: this.name, error: this.#error });
    await this.#agent.stop().catch(() => undefined);
    await this.#d.runtime.close().catch(() => undefined);
  }

  /** Carries out one fault now; resolves with what it did. Rejects (HollowNodeFaultError) on a node not running. */
  async applyFault(a: FaultAction): Promise<string> {
    if (this.#state !== 'running') throw new HollowNodeFaultError(`node ${this.name} is ${this.#state}${this.#error ? ` (${this.#error})` : ''}`);
    switch (a.kind) {
      case 'lease-stop':
      case 'lease-resume': {
        // Both heartbeats stop, as for a node cut off from the API server: the lease alone would
        // not do (a kubelet whose status the controller marked Unknown writes it back at once).
        const lease = this.#agent.nodeLease;
        const status = this.#agent.nodeStatus;
        if (lease === undefined || status === undefined) throw new HollowNodeFaultError(`node ${this.name} has no lease yet (not registered)`);
        if (a.kind === 'lease-stop') {
          lease.pause();
          status.pause();
        } else {
          status.resume();
          lease.resume();
        }
        return `${this.name}: lease and node status ${a.kind === 'lease-stop' ? 'stopped' : 'renewing'}`;
      }
      case 'runtime-down':
        await this.#d.runtime.down();
        return `${this.name}: runtime down`;
      case 'runtime-up':
        await this.#d.runtime.up();
        return `${this.name}: runtime up`;
      case 'crash': {
        const n = this.#d.runtime.crashPod(a.namespace, a.pod);
        return `${this.name}: ${n} container(s) of ${a.namespace}/${a.pod} crashed`;
      }
      default: {
        const never: never = a;
        throw new HollowNodeFaultError(`unknown fault ${JSON.stringify(never)}`);
      }
    }
  }

  /** This node's metrics (Prometheus text, no `node` label yet); '' before start or after a failure. */
  async metricsText(): Promise<string> {
    const m = this.#agent.metrics;
    if (m === undefined || this.#state !== 'running') return '';
    return m.aggregator.collect();
  }

  /** Stops the agent (pods left in the runtime's state) and the runtime. Idempotent. */
  stop(): Promise<void> {
    return (this.#stopping ??= (async () => {
      if (this.#state !== 'failed') this.#state = 'stopped';
      await this.#agent.stop().catch(() => undefined);
      await this.#d.runtime.close().catch(() => undefined);
      this.#state = 'stopped';
    })());
  }
}
