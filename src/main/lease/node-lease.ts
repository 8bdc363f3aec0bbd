/**
 * The node lease (the kubelet's pkg/kubelet/nodelease controller, component-helpers'
 * leasecontroller): a coordination.k8s.io/v1 Lease named after the node in `kube-node-lease`,
 * holderIdentity = node name, leaseDurationSeconds = 40, renewTime refreshed every 10 s, with an
 * ownerReference to the Node (so deleting the Node deletes its lease) once the Node's UID is known.
 *
 * One renewal (`renewOnce`):
 *   known lease ──PUT (renewTime = now, from the last lease the server returned)──▶ done
 *        │             └─ 409 Conflict: someone else wrote it: GET it, PUT again (≤ 5 attempts)
 *        └─ none known: GET; 404 → POST a new one (that is the renewal); else PUT as above.
 * A failure is logged and the next renewal comes at the next interval (never a hot loop; the
 * kubelet's grace period is 40–50 s, four renewals).
 *
 * Cadence: renewals are due every `renewIntervalMs` from the first (start-to-start: the timer is
 * re-armed against the schedule, not against the previous renewal's completion, so a slow answer
 * does not push every later renewal; never two at once; one that overruns pushes the next to its
 * end, without a catch-up burst). The kubelet (wait.JitterUntil, sliding) re-arms after each
 * completion instead, so its renewals drift by the request time every interval.
 *
 * Lateness, as the control plane sees it: the node lifecycle controller looks at the renewTime
 * the server holds, and renewTime is stamped here right before the write that carries it is
 * handed to the socket. So `onRenew` reports, per renewal, how long after its due time the
 * successful write was stamped and sent (`latenessMs`, shardlet_node_lease_renew_lateness_seconds:
 * the timer firing late on a busy main thread, plus a GET first when the lease was not known or
 * changed) and, apart, `requestMs` (first request sent → last answer handled). The latter is not
 * lateness: the bytes leave at once and the API server answers a lease PUT in milliseconds even
 * during a 1,000-pod burst (the bench reads the server's own histogram), but a main thread busy
 * for seconds handles the answer late — measured in 2026-11 runs, requestMs ≤ 5 s with the
 * server's PUT p99 ≤ 50 ms and renewTime gaps ≤ 10.2 s. Counting it would report the agent's
 * stall as a late lease.
 *
 * Invariant: `#latest` is the lease as the server last returned it (its resourceVersion is what
 * the next PUT is conditional on), or undefined after a failure that may have left it stale.
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { apiErrorMessage, isConflict, isNotFound } from '../apiserver/api-errors.js';
import type { LeaseObject, LeaseStore, OwnerReference } from '../apiserver/object-roles.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

export const NODE_LEASE_DEFAULTS = Object.freeze({
  durationSeconds: 40,
  /** The kubelet renews at 1/4 of the duration. */
  renewIntervalMs: 10_000,
  maxUpdateRetries: 5,
});

export interface NodeLeaseDeps {
  store: LeaseStore;
  clock: Clock;
  logger: Logger;
  nodeName: string;
  /** The Node's UID once registered (for the ownerReference). */
  nodeUid: () => string | undefined;
  durationSeconds?: number;
  renewIntervalMs?: number;
  onRenew?: (renewal: LeaseRenewal) => void;
}

/** One renewal as `run` reports it (see the module comment). Milliseconds, monotonic. */
export interface LeaseRenewal {
  /** Due time → the renewing write stamped and sent (a failed renewal: → its last attempt, or its start). */
  latenessMs: number;
  /** First request sent → last answer handled. */
  requestMs: number;
  ok: boolean;
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class NodeLease {
  readonly #d: NodeLeaseDeps;
  #latest: LeaseObject | undefined;
  #lastError = '';
  /** Monotonic ms at which the last write (create or update) was stamped with its renewTime. */
  #stampedAt: number | undefined;

  constructor(deps: NodeLeaseDeps) {
    this.#d = deps;
  }

  /** The lease as the server last returned it. */
  get latest(): LeaseObject | undefined {
    return this.#latest;
  }

  #ownerRefs(): OwnerReference[] | undefined {
    const uid = this.#d.nodeUid();
    return uid === undefined ? undefined : [{ apiVersion: 'v1', kind: 'Node', name: this.#d.nodeName, uid }];
  }

  /** The lease to write: `base` (or a new one) renewed now by this node. */
  #renewed(base: LeaseObject | undefined): LeaseObject {
    const lease: LeaseObject = base
      ? { ...base, metadata: { ...base.metadata }, spec: { ...base.spec } }
      : { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.#d.nodeName, namespace: NODE_LEASE_NAMESPACE }, spec: {} };
    lease.spec.holderIdentity = this.#d.nodeName;
    lease.spec.leaseDurationSeconds = this.#d.durationSeconds ?? NODE_LEASE_DEFAULTS.durationSeconds;
    lease.spec.renewTime = microTime(this.#d.clock.now());
    this.#stampedAt = this.#d.clock.monotonic();
    const refs = lease.metadata.ownerReferences ?? [];
    if (!refs.some((r) => r.kind === 'Node' && r.name === this.#d.nodeName)) {
      const own = this.#ownerRefs();
      if (own !== undefined) lease.metadata.ownerReferences = [...refs, ...own];
    }
    return lease;
  }

  /** GET the lease, creating it when missing. `created`: the POST was the renewal. */
  async #ensure(signal: AbortSignal | undefined): Promise<{ lease: LeaseObject; created: boolean }> {
    const opts = signal ? { signal } : {};
    try {
      return { lease: await this.#d.store.getLease(NODE_LEASE_NAMESPACE, this.#d.nodeName, opts), created: false };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return { lease: await this.#d.store.createLease(this.#renewed(undefined), opts), created: true };
  }

  /** One renewal; resolves true when the server holds a lease renewed now. Never rejects. */
  async renewOnce(signal?: AbortSignal): Promise<boolean> {
    const opts = signal ? { signal } : {};
    try {
      let base = this.#latest;
      if (base === undefined) {
        const { lease, created } = await this.#ensure(signal);
        this.#latest = lease;
        if (created) return this.#ok('lease created');
        base = lease;
      }
      const max = NODE_LEASE_DEFAULTS.maxUpdateRetries;
      for (let attempt = 1; ; attempt++) {
        try {
          this.#latest = await this.#d.store.updateLease(this.#renewed(base), opts);
          return this.#ok('lease renewed');
        } catch (err) {
          if (!isConflict(err) || attempt >= max) throw err;
          this.#d.logger.v(2).info('node lease changed on the server; reading it again', { node: this.#d.nodeName });
          base = (await this.#ensure(signal)).lease;
          this.#latest = base;
        }
      }
    } catch (err) {
      this.#latest = undefined;
      if (signal?.aborted) return false;
      const msg = apiErrorMessage(err);
      // Logged at error each time it changes, then at -v 2: a refusal (403) repeats every interval.
      if (msg !== this.#lastError) this.#d.logger.error('node lease renewal failed; retrying at the next interval', { node: this.#d.nodeName, error: msg });
      else this.#d.logger.v(2).info('node lease renewal failed again', { node: this.#d.nodeName, error: msg });
      this.#lastError = msg;
      return false;
    }
  }

  #ok(what: string): boolean {
    if (this.#lastError !== '') this.#d.logger.info('node lease renewed again', { node: this.#d.nodeName });
    this.#lastError = '';
    this.#d.logger.v(5).info(what, { node: this.#d.nodeName });
    return true;
  }

  #paused = false;

  /**
   * Fault injection (hollow mode): while paused, `run` keeps its schedule but sends nothing, so
   * the lease expires and the node lifecycle controller marks the node NotReady/Unknown, as for a
   * node that lost the API server. `resume()` renews at the next due time. Both idempotent.
   */
  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** Renews every interval until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const interval = this.#d.renewIntervalMs ?? NODE_LEASE_DEFAULTS.renewIntervalMs;
    let due = this.#d.clock.monotonic();
    while (!signal.aborted) {
      if (!this.#paused) {
        const started = this.#d.clock.monotonic();
        this.#stampedAt = undefined;
        const ok = await this.renewOnce(signal);
        if (signal.aborted) break;
        const answered = this.#d.clock.monotonic();
        const sent = this.#stampedAt ?? started;
        this.#d.onRenew?.({ latenessMs: Math.max(0, sent - due), requestMs: answered - started, ok });
      }
      due += interval;
      const now = this.#d.clock.monotonic();
      if (due < now) due = now; // overran: start the next one now, do not catch up with a burst
      try {
        await this.#d.clock.sleep(due - now, signal);
      } catch {
        break;
      }
    }
  }
}
