/**
 * Writes pod statuses to the API server (the kubelet's status manager syncPod/syncBatch,
 * reshaped for density), and carries out the last step of graceful deletion.
 *
 * Per pod (uid) it keeps: the status the API held when the pod was first seen (`api`), the
 * last status written (`sent`) and the newest status not yet written (`pending`), all in API
 * form (status-normalize.ts). Rules:
 * - Coalescing: a new status replaces the pending one (counted as coalesced); only the newest
 *   is ever written. A status equal to what the API holds is not written (a pending one that
 *   went back to it is dropped).
 * - Terminal phases never go back: once the API's status or any status accepted since is
 *   Succeeded/Failed, a non-terminal status is ignored.
 * - Writes are strategic-merge PATCHes of pods/NAME/status carrying metadata.uid (no GET first,
 *   no resourceVersion): a pod deleted and recreated under the same name answers 422 (and a
 *   deleted one 404); the record is then dropped and never written again. The body is
 *   status-patch.ts's: only the conditions the kubelet owns are compared and written (another
 *   client's, e.g. a readiness gate's, are never touched).
 * - Priority: `concurrency` senders each take a token from the client's throttle first and only
 *   then pick work, high queue first: a pod's first Running status, terminal statuses and final
 *   DELETEs are high; refreshes are normal. So under the QPS budget a starting pod is reported
 *   before pods already reported are refreshed.
 * - Graceful deletion: once the pod has a deletionTimestamp, its worker reported it terminated
 *   and nothing is pending, the pod is DELETEd with gracePeriodSeconds 0 and a UID
 *   precondition (404/409: already gone or replaced — done).
 * - Failures other than 404/422 keep the status pending and pause every sender with backoff
 *   (800 ms doubling to 30 s, reset by a success): nothing loops hot while the server is down.
 *
 * Invariant: a record is in at most one queue, and is never queued while a request for it is
 * in flight (it is re-queued when that request ends, if work remains).
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { podFields } from '../../shared/logging/logger.js';
import { apiErrorMessage, isAborted, isConflict, isInvalid, isNotFound } from '../apiserver/api-errors.js';
import type { PodDeleter, PodRef, PodStatusWriter } from '../apiserver/api-roles.js';
import type { RequestPriority, RequestThrottle } from '../apiserver/token-bucket.js';
import { changedFields, isTerminalPhaseName, normalizeStatus, phaseOf, statusUnchanged, type ApiPodStatus } from './status-normalize.js';
import { statusPatchBody, withOwnedConditions } from './status-patch.js';
import { nextBackoffMs } from '../../shared/backoff/exponential-backoff.js';

/** What the status manager forwards for API pods. */
export interface ApiStatusSink {
  setStatus(pod: V1Pod, status: V1PodStatus): void;
  /** The pod's worker stopped every container for good (graceful deletion may finish). */
  podTerminated(pod: V1Pod): void;
  forget(uid: string): void;
}

export type PatchResult = 'sent' | 'failed' | 'dropped';

export interface ApiStatusSyncDeps {
  writer: PodStatusWriter;
  deleter: PodDeleter;
  /** The main client's throttle (the writer and deleter are called with tokenHeld). */
  throttle: RequestThrottle;
  clock: Clock;
  logger: Logger;
  concurrency?: number;
  /** kubelet_pod_status_sync_duration_seconds: first change → written. */
  onSynced?: (seconds: number) => void;
  onPatch?: (result: PatchResult) => void;
  onCoalesced?: () => void;
  onDelete?: (result: 'sent' | 'failed') => void;
}

export const API_STATUS_SYNC_DEFAULTS = Object.freeze({
  concurrency: 8,
  backoffInitialMs: 800,
  backoffMaxMs: 30_000,
});

interface PodRecord {
  ref: PodRef;
  pod: V1Pod;
  api: ApiPodStatus;
  sent: ApiPodStatus | undefined;
  pending: ApiPodStatus | undefined;
  /** The status of the PATCH in flight (the base for comparisons until it is answered). */
  writing: ApiPodStatus | undefined;
  /** The newest status accepted (pending, in flight or written), for the terminal-phase rule. */
  latest: ApiPodStatus;
  /** When the oldest unwritten change arrived (clock.now()). */
  pendingSinceMs: number | undefined;
  runningReported: boolean;
  terminated: boolean;
  deleted: boolean;
  /** 404/422 answered: this uid is gone from the API; never write again. */
  dropped: boolean;
  queued: RequestPriority | undefined;
  inFlight: boolean;
}

/**
 * Whether a status read from the API was written by a kubelet (it has container statuses). Then
 * a field it lacks is one the server does not store (version skew: a 1.20 server drops
 * status.hostIPs), not one to write: after an agent restart, adopted pods would otherwise all be
 * rewritten once for nothing.
 */
function readBackByKubelet(api: ApiPodStatus): boolean {
  return Array.isArray(api['containerStatuses']);
}

export class ApiStatusSync implements ApiStatusSink {
  readonly #d: ApiStatusSyncDeps;
  readonly #records = new Map<string, PodRecord>();
  /** Queues of uids, insertion-ordered; a uid is in at most one. */
  readonly #queues: Record<RequestPriority, Set<string>> = { high: new Set(), normal: new Set() };
  #wakers: Array<() => void> = [];
  #pausedUntilMs = 0;
  #backoffMs: number = API_STATUS_SYNC_DEFAULTS.backoffInitialMs;
  readonly #stop = new AbortController();
  #senders: Promise<void>[] | undefined;

  constructor(deps: ApiStatusSyncDeps) {
    if (!deps?.writer || !deps.deleter || !deps.throttle || !deps.clock || !deps.logger) throw new TypeError('ApiStatusSync: writer, deleter, throttle, clock and logger are required');
    const c = deps.concurrency ?? API_STATUS_SYNC_DEFAULTS.concurrency;
    if (!Number.isInteger(c) || c < 1 || c > 256) throw new RangeError(`ApiStatusSync: concurrency must be an integer in [1, 256], got ${c}`);
    this.#d = deps;
  }

  /** Number of pods with a status or DELETE waiting to be written. */
  get queued(): number {
    return this.#queues.high.size + this.#queues.normal.size;
  }

  start(): void {
    if (this.#senders) return;
    const n = this.#d.concurrency ?? API_STATUS_SYNC_DEFAULTS.concurrency;
    this.#senders = Array.from({ length: n }, () => this.#sender(this.#stop.signal));
  }

  /** Stops the senders (requests in flight are aborted); pending statuses are dropped. Idempotent. */
  async close(): Promise<void> {
    this.#stop.abort();
    for (const w of this.#wakers.splice(0)) w();
    await Promise.allSettled(this.#senders ?? []);
  }

  setStatus(pod: V1Pod, status: V1PodStatus): void {
    const rec = this.#record(pod);
    if (rec === undefined || rec.dropped || rec.deleted) return;
    rec.pod = pod;
    const next = withOwnedConditions(normalizeStatus(status));
    const base = rec.writing ?? rec.sent ?? rec.api;
    if (!isTerminalPhaseName(phaseOf(next)) && isTerminalPhaseName(phaseOf(rec.latest))) {
      this.#d.logger.v(3).info('ignoring a non-terminal status for a terminal pod', { ...podFields(pod), phase: phaseOf(next) ?? '' });
      return;
    }
    rec.latest = next;
    if (statusUnchanged(base, next, rec.writing === undefined && rec.sent === undefined && readBackByKubelet(rec.api))) {
      if (rec.pending !== undefined) {
        rec.pending = undefined;
        rec.pendingSinceMs = undefined;
        this.#d.onCoalesced?.();
      }
      this.#maybeQueue(rec);
      return;
    }
    if (rec.pending !== undefined) this.#d.onCoalesced?.();
    else if (this.#d.logger.verbosity >= 5) this.#d.logger.v(5).info('pod status changed', { ...podFields(pod), fields: changedFields(base, next).join(',') });
    rec.pending = next;
    rec.pendingSinceMs ??= this.#d.clock.now();
    this.#maybeQueue(rec);
  }

  podTerminated(pod: V1Pod): void {
    const rec = this.#record(pod);
    if (rec === undefined) return;
    rec.pod = pod;
    rec.terminated = true;
    this.#maybeQueue(rec);
  }

  forget(uid: string): void {
    this.#records.delete(uid);
    this.#queues.high.delete(uid);
    this.#queues.normal.delete(uid);
  }

  #record(pod: V1Pod): PodRecord | undefined {
    const uid = pod.metadata?.uid ?? '';
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    if (uid === '' || ns === '' || name === '') return undefined;
    let rec = this.#records.get(uid);
    if (rec === undefined) {
      const api = withOwnedConditions(normalizeStatus(pod.status));
      rec = {
        ref: { namespace: ns, name, uid }, pod, api, sent: undefined, pending: undefined, writing: undefined, latest: api, pendingSinceMs: undefined,
        runningReported: phaseOf(api) === 'Running', terminated: false, deleted: false, dropped: false, queued: undefined, inFlight: false,
      };
      this.#records.set(uid, rec);
    }
    return rec;
  }

  #needsDelete(rec: PodRecord): boolean {
    const dt = rec.pod.metadata?.deletionTimestamp;
    return rec.terminated && !rec.deleted && !rec.dropped && rec.pending === undefined && dt !== undefined && dt !== null;
  }

  #priorityOf(rec: PodRecord): RequestPriority | undefined {
    if (rec.dropped) return undefined;
    if (rec.pending !== undefined) {
      const phase = phaseOf(rec.pending);
      return (phase === 'Running' && !rec.runningReported) || isTerminalPhaseName(phase) ? 'high' : 'normal';
    }
    return this.#needsDelete(rec) ? 'high' : undefined;
  }

  /** Puts the record in the queue its work calls for (or takes it out), unless a request is in flight. */
  #maybeQueue(rec: PodRecord): void {
    if (rec.inFlight) return;
    const want = this.#priorityOf(rec);
    if (rec.queued === want) return;
    if (rec.queued !== undefined) this.#queues[rec.queued].delete(rec.ref.uid);
    rec.queued = want;
    if (want === undefined) return;
    this.#queues[want].add(rec.ref.uid);
    this.#wakers.shift()?.();
  }

  #take(): PodRecord | undefined {
    for (const q of [this.#queues.high, this.#queues.normal]) {
      for (const uid of q) {
        q.delete(uid);
        const rec = this.#records.get(uid);
        if (rec === undefined) continue;
        rec.queued = undefined;
        return rec;
      }
    }
    return undefined;
  }

  async #waitForWork(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (signal.aborted) return;
      const pause = this.#pausedUntilMs - this.#d.clock.now();
      if (pause > 0) {
        await this.#d.clock.sleep(pause, signal).catch(() => {});
        continue;
      }
      if (this.queued > 0) return;
      await new Promise<void>((resolve) => this.#wakers.push(resolve));
    }
  }

  async #sender(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.#waitForWork(signal);
      if (signal.aborted) return;
      try {
        await this.#d.throttle.acquire(this.#queues.high.size > 0 ? 'high' : 'normal', signal);
      } catch {
        return; // aborted
      }
      const rec = this.#take();
      if (rec === undefined) continue;
      rec.inFlight = true;
      try {
        if (rec.pending !== undefined) await this.#patch(rec, signal);
        else if (this.#needsDelete(rec)) await this.#delete(rec, signal);
      } finally {
        rec.inFlight = false;
      }
      if (this.#records.get(rec.ref.uid) === rec) this.#maybeQueue(rec);
    }
  }

  async #patch(rec: PodRecord, signal: AbortSignal): Promise<void> {
    const status = rec.pending!;
    const since = rec.pendingSinceMs ?? this.#d.clock.now();
    rec.pending = undefined;
    rec.pendingSinceMs = undefined;
    rec.writing = status;
    const body = statusPatchBody(status, rec.sent, rec.sent ?? rec.api);
    try {
      await this.#d.writer.patchPodStatus(rec.ref, body, { tokenHeld: true, signal });
      rec.writing = undefined;
      rec.sent = status;
      if (phaseOf(status) === 'Running') rec.runningReported = true;
      this.#succeeded();
      this.#d.onPatch?.('sent');
      this.#d.onSynced?.(Math.max(0, this.#d.clock.now() - since) / 1000);
      this.#d.logger.v(4).info('pod status written', { ...podFields(rec.pod), phase: phaseOf(status) ?? '' });
    } catch (err) {
      rec.writing = undefined;
      if (isInvalid(err) || isNotFound(err)) {
        rec.dropped = true;
        this.#d.onPatch?.('dropped');
        this.#d.logger.info('pod status not written: the pod is gone or was recreated with another UID', { ...podFields(rec.pod), error: apiErrorMessage(err) });
        return;
      }
      if (rec.pending === undefined) {
        rec.pending = status;
        rec.pendingSinceMs = since;
      } else rec.pendingSinceMs = Math.min(since, rec.pendingSinceMs ?? since);
      if (signal.aborted || isAborted(err)) return;
      this.#d.onPatch?.('failed');
      this.#failed('pod status write failed', rec, err);
    }
  }

  async #delete(rec: PodRecord, signal: AbortSignal): Promise<void> {
    try {
      await this.#d.deleter.deletePod(rec.ref, { tokenHeld: true, signal });
      rec.deleted = true;
      this.#succeeded();
      this.#d.onDelete?.('sent');
      this.#d.logger.v(2).info('pod deleted from the API server', podFields(rec.pod));
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) {
        rec.deleted = true;
        return;
      }
      if (signal.aborted || isAborted(err)) return;
      this.#d.onDelete?.('failed');
      this.#failed('pod delete failed', rec, err);
    }
  }

  #succeeded(): void {
    this.#backoffMs = API_STATUS_SYNC_DEFAULTS.backoffInitialMs;
  }

  #failed(what: string, rec: PodRecord, err: unknown): void {
    const now = this.#d.clock.now();
    if (this.#pausedUntilMs <= now) {
      this.#pausedUntilMs = now + this.#backoffMs;
      this.#d.logger.error(what, { ...podFields(rec.pod), error: apiErrorMessage(err), backoffMs: this.#backoffMs });
      this.#backoffMs = nextBackoffMs(this.#backoffMs, { maxMs: API_STATUS_SYNC_DEFAULTS.backoffMaxMs });
    }
  }
}
