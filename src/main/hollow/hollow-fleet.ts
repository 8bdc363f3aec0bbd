/**
 * The hollow nodes of one process: builds each node (its runtime, then its agent), starts them
 * `startConcurrency` at a time, applies faults, renders the node-labelled metrics and stops them.
 *
 * Isolation: a node whose runtime or agent fails to start, or whose registration is refused
 * later, becomes 'failed' (HollowNode) and is stopped alone; start() resolves once every node
 * has started or failed and reports how many of each. A fault aimed at a failed node is refused
 * with an error naming it, never thrown into another node.
 *
 * What the nodes share: the process (one event loop, one heap), the code and module caches, the
 * process-wide metrics, and the logger's sink. What they do not share: API connections (each
 * agent has its own keep-alive agents: a watch holds an HTTP/1.1 connection, so a shared pool
 * would still need one connection per watch), token buckets, caches, runtimes.
 */
import type { Clock, Random } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { MetricsSystemOptions } from '../metrics/main-metrics.js';
import { hollowAgentConfig } from './hollow-agent-config.js';
import { hollowNodeNames, hollowNodePaths, type HollowConfig } from './hollow-config.js';
import type { FaultStep } from './hollow-faults.js';
import { HollowProcessMetrics, mergeNodeExpositions } from './hollow-metrics.js';
import { HollowNode, type HollowNodeState } from './hollow-node.js';
import type { HollowRuntimeFactory } from './hollow-runtime.js';

export interface HollowFleetDeps {
  config: HollowConfig;
  runtimes: HollowRuntimeFactory;
  clock: Clock;
  random: Random;
  /** The process logger; each node logs through a child with its `node` field. */
  logger: Logger;
  /** Builds a node's logger (fields: node). */
  nodeLogger: (node: string) => Logger;
  /** Observer: a node finished starting (running or failed). */
  onNodeStarted?: (node: HollowNode) => void;
}

/**
 * Each embedded agent's metrics arena: the main thread's slot and one per pod-worker thread
 * (the PLEG is inline), 256 KiB each; process and event-loop metrics are the process's, once.
 */
export function hollowMetricsOptions(workers: number): MetricsSystemOptions {
  return { arena: { slots: 2 + workers, slotBytes: 1 << 19, maxSeries: 2048, keyBytes: 64 << 10 }, processMetrics: false, eventLoopDelay: false };
}

export interface FleetStartResult {
  running: number;
  failed: { node: string; error: string }[];
}

export class HollowFleet {
  readonly #d: HollowFleetDeps;
  readonly #names: readonly string[];
  readonly #nodes = new Map<string, HollowNode>();
  /** Nodes whose runtime could not be built (no HollowNode exists for them). */
  readonly #failedEarly = new Map<string, string>();
  readonly #processMetrics = new HollowProcessMetrics();
  #stopped = false;

  constructor(deps: HollowFleetDeps) {
    this.#d = deps;
    this.#names = hollowNodeNames(deps.config);
  }

  get names(): readonly string[] {
    return this.#names;
  }

  node(name: string): HollowNode | undefined {
    return this.#nodes.get(name);
  }

  /** Starts every node, `startConcurrency` at a time; resolves when each is running or failed. */
  async start(): Promise<FleetStartResult> {
    const { config: c } = this.#d;
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < this.#names.length && !this.#stopped) {
        const name = this.#names[next++] as string;
        await this.#startOne(name);
      }
    };
    await Promise.all(Array.from({ length: Math.min(c.startConcurrency, this.#names.length) }, lane));
    const failed = [...this.#failedEarly].map(([node, error]) => ({ node, error }));
    let running = 0;
    for (const n of this.#nodes.values()) {
      if (n.state === 'running') running++;
      else if (n.state === 'failed') failed.push({ node: n.name, error: n.error });
    }
    return { running, failed };
  }

  async #startOne(name: string): Promise<void> {
    const { config: c, clock, random } = this.#d;
    const logger = this.#d.nodeLogger(name);
    let node: HollowNode;
    try {
      const runtime = await this.#d.runtimes(name, hollowNodePaths(c, name));
      node = new HollowNode({ name, agentConfig: hollowAgentConfig(c, name), runtime, metrics: hollowMetricsOptions(c.workers), clock, random, logger });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.#failedEarly.set(name, error);
      this.#d.logger.error('hollow node failed to start its runtime; the other nodes go on', { node: name, error });
      return;
    }
    this.#nodes.set(name, node);
    if (this.#stopped) return;
    await node.start();
    this.#d.onNodeStarted?.(node);
  }

  /** Carries out one step now; resolves with what it did, rejects naming the node. */
  async applyFault(step: FaultStep): Promise<string> {
    const node = this.#nodes.get(step.node);
    if (node === undefined) {
      const early = this.#failedEarly.get(step.node);
      throw new Error(`node ${step.node} ${early !== undefined ? `failed to start (${early})` : 'is not started'}`);
    }
    return node.applyFault(step.action);
  }

  /** Counts per state (failed-early nodes count as failed). */
  states(): Record<HollowNodeState, number> {
    const s: Record<HollowNodeState, number> = { new: 0, starting: 0, running: 0, failed: this.#failedEarly.size, stopped: 0 };
    for (const n of this.#nodes.values()) s[n.state]++;
    s.new += this.#names.length - this.#nodes.size - this.#failedEarly.size;
    return s;
  }

  /** Each node's state by name (failed-early nodes: 'failed'). */
  nodeStates(): Record<string, HollowNodeState> {
    const out: Record<string, HollowNodeState> = {};
    for (const name of this.#names) out[name] = this.#failedEarly.has(name) ? 'failed' : (this.#nodes.get(name)?.state ?? 'new');
    return out;
  }

  registered(): number {
    let n = 0;
    for (const node of this.#nodes.values()) if (node.registered) n++;
    return n;
  }

  /** The node-labelled exposition plus the process summary (hollow-metrics.ts). */
  async metricsText(): Promise<string> {
    const parts: { node: string; text: string }[] = [];
    for (const n of this.#nodes.values()) {
      const text = await n.metricsText().catch(() => '');
      if (text !== '') parts.push({ node: n.name, text });
    }
    return mergeNodeExpositions(parts) + (await this.#processMetrics.text({ states: this.states(), registered: this.registered() }));
  }

  /** Stops every node (pods stay in their runtimes' saved state). Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.allSettled([...this.#nodes.values()].map((n) => n.stop()));
  }
}
