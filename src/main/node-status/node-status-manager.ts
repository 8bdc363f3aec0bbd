/**
 * Registers this node with the API server and keeps its status there (the kubelet's
 * registerWithAPIServer + updateNodeStatus, pkg/kubelet/kubelet_node_status.go), over the
 * unthrottled heartbeat client.
 *
 * State machine:
 *   'new' ──register()──▶ 'registering' ──created / existing reconciled──▶ 'registered'
 *                              │  └─ other failure: retry, backoff 100 ms doubling to 7 s
 *                              └─ 403 (NodeRestriction / RBAC): 'refused' — fatal, never retried:
 *                                 a node identity that may not write this Node will never may.
 *   any ──stop──▶ 'stopped'
 *
 * Registration POSTs the whole Node (labels, taints, status). 409 AlreadyExists: GET it and
 * PATCH the labels this agent sets when they differ (taints are only set at creation:
 * NodeRestriction forbids a node to change its own), then report status at once.
 *
 * Status: computed every `updateFrequencyMs` (10 s) and PATCHed (strategic merge of
 * nodes/NAME/status) only when it changed apart from heartbeat times, or when
 * `reportFrequencyMs` (5 min) passed since the last report (the kubelet with leases). Readiness
 * inputs are also checked every `readinessCheckMs` (1 s) and a flip of Ready is reported at once
 * (a shardlet addition: the kubelet waits for the next 10 s tick). A failed PATCH is retried at
 * the next tick; nothing loops faster than the readiness check.
 *
 * Invariant: `#reported` is the last status the API server accepted (undefined: unknown, so the
 * next computation is sent).
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { apiErrorMessage, isConflict } from '../apiserver/api-errors.js';
import type { NodeRef, NodeRegistry } from '../apiserver/object-roles.js';
import { nodeConditions, readyCondition, type NodeCondition, type ReadinessInputs } from './node-conditions.js';
import type { Taint } from './node-labels.js';
import { buildNode, buildNodeStatus, changedNodeFields, nodeStatusChanged, type NodeImage, type NodeStaticStatus, type NodeStatus } from './node-status.js';
import { nextBackoffMs } from '../../shared/backoff/exponential-backoff.js';

export type NodeRegistrationState = 'new' | 'registering' | 'registered' | 'refused' | 'stopped';

export class NodeRegistrationError extends Error {
  override readonly name = 'NodeRegistrationError';
  readonly code = 'ERR_NODE_REGISTRATION_REFUSED';
}

export interface NodeStatusManagerDeps {
  registry: NodeRegistry;
  clock: Clock;
  logger: Logger;
  nodeName: string;
  labels: Readonly<Record<string, string>>;
  taints: readonly Taint[];
  static: NodeStaticStatus;
  readiness: () => ReadinessInputs;
  /** Images from the runtime; a failure keeps the previous list. */
  images: () => Promise<NodeImage[]>;
  updateFrequencyMs: number;
  reportFrequencyMs: number;
  readinessCheckMs?: number;
  /** Ready changed in a status the API server accepted (node events NodeReady / NodeNotReady). */
  onReadyChange?: (ready: boolean, condition: NodeCondition) => void;
  /** A status PATCH ended: written, skipped (unchanged) or failed. */
  onStatusSync?: (result: 'patched' | 'unchanged' | 'failed') => void;
}

export const NODE_STATUS_DEFAULTS = Object.freeze({
  registerBackoffInitialMs: 100,
  registerBackoffMaxMs: 7_000,
  readinessCheckMs: 1_000,
});

function isForbidden(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === 'ERR_API_FORBIDDEN';
}

export class NodeStatusManager {
  readonly #d: NodeStatusManagerDeps;
  #state: NodeRegistrationState = 'new';
  #node: NodeRef | undefined;
  #reported: NodeStatus | undefined;
  #reportedAtMs = 0;
  #conditions: NodeCondition[] | undefined;
  #images: NodeImage[] = [];
  #syncing: Promise<'patched' | 'unchanged' | 'failed'> | undefined;

  constructor(deps: NodeStatusManagerDeps) {
    this.#d = deps;
  }

  get state(): NodeRegistrationState {
    return this.#state;
  }

  /** The registered Node (name, UID, labels); undefined until registered. */
  get node(): NodeRef | undefined {
    return this.#node;
  }

  /** The last status the API server accepted. */
  get reported(): NodeStatus | undefined {
    return this.#reported;
  }

  async #compute(): Promise<NodeStatus> {
    try {
      this.#images = await this.#d.images();
    } catch (err) {
      this.#d.logger.v(2).info('node status: listing images failed; keeping the previous list', { error: apiErrorMessage(err) });
    }
    this.#conditions = nodeConditions(this.#conditions, this.#d.readiness(), this.#d.clock.now());
    return buildNodeStatus(this.#d.static, this.#conditions, this.#images);
  }

  /**
   * Registers (or reconciles) the Node; resolves with it. Retries with backoff until `signal`
   * aborts (rejects with the abort reason) or the server refuses with 403 (NodeRegistrationError).
   */
  async register(signal: AbortSignal): Promise<NodeRef> {
    if (this.#node !== undefined) return this.#node;
    this.#state = 'registering';
    let backoff: number = NODE_STATUS_DEFAULTS.registerBackoffInitialMs;
    const { registry, logger, nodeName } = this.#d;
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const status = await this.#compute();
      try {
        try {
          this.#node = await registry.createNode(buildNode(nodeName, { ...this.#d.labels }, this.#d.taints, status), { signal });
          this.#accepted(status);
          logger.info('node registered', { node: nodeName, uid: this.#node.uid });
        } catch (err) {
          if (!isConflict(err)) throw err;
          this.#node = await this.#reconcile(signal);
          logger.info('node already registered; reconciled', { node: nodeName, uid: this.#node.uid });
        }
        this.#state = 'registered';
        return this.#node;
      } catch (err) {
        if (isForbidden(err)) {
          this.#state = 'refused';
          throw new NodeRegistrationError(`node ${nodeName}: registration refused by the API server (check that the credentials are system:node:${nodeName}): ${apiErrorMessage(err)}`);
        }
        if (signal.aborted) throw signal.reason;
        logger.error('node registration failed; retrying', { node: nodeName, error: apiErrorMessage(err), backoffMs: backoff });
        await this.#d.clock.sleep(backoff, signal);
        backoff = nextBackoffMs(backoff, { maxMs: NODE_STATUS_DEFAULTS.registerBackoffMaxMs });
      }
    }
  }

  async #reconcile(signal: AbortSignal): Promise<NodeRef> {
    const existing = await this.#d.registry.getNode(this.#d.nodeName, { signal });
    const missing: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.#d.labels)) if (existing.labels[k] !== v) missing[k] = v;
    if (Object.keys(missing).length === 0) return existing;
    return this.#d.registry.patchNode(this.#d.nodeName, { metadata: { labels: missing } }, { signal });
  }

  #accepted(status: NodeStatus): void {
    const before = this.#reported?.conditions.find((c) => c.type === 'Ready');
    const after = status.conditions.find((c) => c.type === 'Ready');
    this.#reported = status;
    this.#reportedAtMs = this.#d.clock.monotonic();
    if (after !== undefined && before?.status !== after.status) this.#d.onReadyChange?.(after.status === 'True', after);
  }

  /**
   * Computes the status and PATCHes it when it changed or the report period passed. Concurrent
   * calls share one computation. Never rejects.
   */
  syncStatus(signal?: AbortSignal): Promise<'patched' | 'unchanged' | 'failed'> {
    this.#syncing ??= this.#sync(signal).finally(() => (this.#syncing = undefined));
    return this.#syncing;
  }

  #paused = false;

  /**
   * Fault injection (hollow mode's `lease-stop`, with the lease): while paused no status is
   * written, as for a node cut off from the API server. `resume()` forgets what was reported, so
   * the next update writes the whole status again (the node lifecycle controller may have set
   * Ready=Unknown meanwhile, which the kubelet's GET-then-compare would also overwrite).
   */
  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#reported = undefined;
  }

  async #sync(signal: AbortSignal | undefined): Promise<'patched' | 'unchanged' | 'failed'> {
    if (this.#state !== 'registered' || this.#paused) return 'unchanged';
    const status = await this.#compute();
    const due = this.#d.clock.monotonic() - this.#reportedAtMs >= this.#d.reportFrequencyMs;
    if (!nodeStatusChanged(this.#reported, status) && !due) {
      this.#d.onStatusSync?.('unchanged');
      return 'unchanged';
    }
    const fields = changedNodeFields(this.#reported, status);
    try {
      await this.#d.registry.patchNodeStatus(this.#d.nodeName, status as unknown as Record<string, unknown>, signal ? { signal } : {});
      this.#accepted(status);
      this.#d.onStatusSync?.('patched');
      this.#d.logger.v(fields.length > 0 ? 2 : 4).info('node status written', { node: this.#d.nodeName, changed: fields.join(',') || 'heartbeat' });
      return 'patched';
    } catch (err) {
      this.#d.onStatusSync?.('failed');
      if (signal?.aborted) return 'failed';
      this.#d.logger.error(isForbidden(err) ? 'node status write refused by the API server' : 'node status write failed; retrying at the next update', { node: this.#d.nodeName, error: apiErrorMessage(err) });
      return 'failed';
    }
  }

  /** Whether Ready computed from the inputs now differs from the last reported Ready. */
  readinessFlipped(): boolean {
    const reported = this.#reported?.conditions.find((c) => c.type === 'Ready')?.status;
    return reported !== undefined && readyCondition(this.#d.readiness()).status !== reported;
  }

  /**
   * Registers, then keeps the status until `signal` aborts. Resolves on abort; rejects with
   * NodeRegistrationError when registration is refused. `onRegistered` runs once, before the first
   * status tick (the agent starts its API pod source, lease and mirror pods there).
   */
  async run(signal: AbortSignal, onRegistered: (node: NodeRef) => void): Promise<void> {
    try {
      onRegistered(await this.register(signal));
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    const tick = this.#d.readinessCheckMs ?? NODE_STATUS_DEFAULTS.readinessCheckMs;
    let nextFullMs = this.#d.clock.monotonic();
    while (!signal.aborted) {
      if (this.#d.clock.monotonic() >= nextFullMs || this.readinessFlipped()) {
        await this.syncStatus(signal);
        nextFullMs = this.#d.clock.monotonic() + this.#d.updateFrequencyMs;
      }
      try {
        await this.#d.clock.sleep(tick, signal);
      } catch {
        break;
      }
    }
    this.#state = 'stopped';
  }
}
