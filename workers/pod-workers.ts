/**
 * The per-pod serialized loop (the kubelet's pod_workers.go managePodLoop), one instance per
 * worker thread (or one inline on the main thread with --workers 0).
 *
 * Per pod, a record moves through an explicit state machine:
 *
 *     syncing ──(kill, or sync reports terminal phase)──▶ terminating ──(containers + sandbox
 *     stopped)──▶ terminated ──(pod removed from config: CRI objects removed)──▶ forgotten
 *
 * Invariants:
 *  - At most one unit of work (sync, terminate, cleanup) runs per pod at a time.
 *  - A newer pending update replaces an older one (newest wins); it runs after the current work.
 *  - A kill pre-empts: it aborts the in-flight sync's AbortSignal (its CRI calls are cancelled)
 *    and termination runs next. A later kill may only shorten the grace period.
 *  - States only move forward. Once terminating, non-kill updates are ignored: a pod UID is
 *    never restarted after it began terminating (a new UID is a new pod).
 *  - Before each unit of work the loop waits until the cache holds status newer than the end
 *    of the previous unit (`getNewerThan`), so decisions never act on stale runtime state.
 *    A sync never runs on an entry holding an error; a termination or cleanup does, from the
 *    runtime's own listing (a kill never depends on a readable cached status).
 *    After work that called the runtime, the worker publishes its pod's fresh status itself
 *    (StatusRefresher) instead of waiting up to a relist period for the PLEG.
 *
 * Skipped syncs (beyond the kubelet): a 'sync' sent only because the PLEG saw the pod's objects
 * change (`plegOnly`) is skipped, with no result, when it would run on exactly the inputs of the
 * pod's last clean sync: the same pod object (an update whose pod equals the held one keeps the
 * held object), the same cache entry and the same network readiness. "Clean" is a sync without
 * error that left the pod syncing and either changed nothing in the runtime (its entry is the
 * one it ran on) or published a status derived from its own calls' answers (that entry is
 * exactly what it created, in the states the runtime answered). Such a sync would decide
 * nothing and generate the status already sent. This is the PLEG's echo of the worker's own
 * creates: in a burst each new pod's sandbox and container show up in one or two relists, and
 * each used to cost a full sync. Any other reason to sync (config, probes, API objects, due
 * work, a failed or fetched-status sync, a newer entry from anyone) runs the sync.
 *
 * Requeue: after a successful sync the pod is resynced in syncFrequency × [1, 1.5) (60–90 s by
 * default), after an error in 10 s × [1, 1.5) — the kubelet's jittered intervals — or sooner if
 * the syncer asks (a backoff expiring). The delay is reported to the main thread, whose work
 * queue owns requeue timing (as the kubelet's does).
 */
import { setMaxListeners } from 'node:events';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { Clock, Random } from '../src/shared/clock/clock.js';
import type { WireError } from '../src/shared/cri/cri-errors.js';
import type { Logger } from '../src/shared/logging/logger.js';
import { podFields } from '../src/shared/logging/logger.js';
import { deepEqual } from '../src/shared/immutable/deep-equal.js';
import { cacheNow } from '../src/shared/pod-cache/pod-cache.js';
import type { RuntimePodStatus } from '../src/shared/pod-cache/runtime-pod-status.js';
import type { PodSyncer } from './pod-sync.js';
import { PodStartGate, type StartSlotRelease } from './pod-start-gate.js';
import { withoutPlegOnly, type PodResultMessage, type PodUpdateMessage, type PodWorkerState, type SyncPodType, type WorkerThreadStats } from '../src/shared/protocol/pod-worker-protocol.js';

/** What the loop needs from the pod cache (satisfied by the SharedArrayBuffer cache reader). */
export interface PodStatusWaiter {
  getNewerThan(uid: string, minTimestampMs: number, signal?: AbortSignal): Promise<{ status: RuntimePodStatus; error?: WireError | null; timestampMs: number }>;
}

/**
 * Publishes a pod's status to the cache at a timestamp > afterMs: `derived` when the sync's own
 * answers told it (no CRI call), else fetched from the runtime.
 */
export type StatusRefresher = (pod: V1Pod, afterMs: number, signal: AbortSignal, derived?: RuntimePodStatus) => Promise<RefreshedStatus | undefined>;

export interface RefreshedStatus {
  status: RuntimePodStatus;
  /** The cache entry now holds exactly this status at this timestamp; undefined: it does not (a newer entry won, or it was trimmed to fit). */
  entryTs: number | undefined;
}

/** Optional per-pod hooks (the prober attaches here). */
export interface PodLifecycleHooks {
  podSynced(pod: V1Pod, status: RuntimePodStatus | undefined, state: PodWorkerState): void;
  podForgotten(uid: string): void;
}

export interface PodWorkersDeps {
  syncer: PodSyncer;
  cache: PodStatusWaiter;
  refreshStatus?: StatusRefresher;
  hooks?: PodLifecycleHooks;
  clock: Clock;
  random: Random;
  logger: Logger;
  emit: (msg: PodResultMessage) => void;
  threadId: number;
  /** The kubelet's --sync-frequency. */
  syncFrequencyMs?: number;
  /** The kubelet's backOffPeriod after a failed sync. */
  errorBackoffMs?: number;
  /** Observer of each PLEG-only sync skipped (shardlet_pod_syncs_skipped_total). */
  onSkippedSync?: () => void;
  /** Observer of each unit of work (kubelet_pod_worker_duration_seconds). */
  onWork?: (operationType: 'create' | 'update' | 'sync' | 'kill', seconds: number) => void;
  /**
   * Observer of this thread's load (shardlet_thread_pods_owned / _queue_depth): called with
   * {@link PodWorkers.stats} after updates are accepted and after units of work, at most once
   * per microtask turn (a burst of updates costs one O(pods) stats pass, not one per update).
   */
  onStats?: (stats: WorkerThreadStats) => void;
  /**
   * The most pod starts (a pod's first sync here) in flight at once, admitted oldest first
   * (pod-start-gate.ts); 0 = no bound. Terminations and later syncs never wait for a slot.
   */
  maxParallelStarts?: number;
}

export const POD_WORKERS_DEFAULTS = Object.freeze({
  syncFrequencyMs: 60_000,
  errorBackoffMs: 10_000,
  jitterFactor: 0.5,
  defaultGracePeriodSeconds: 30,
  maxParallelStarts: 0,
});

interface PodRecord {
  uid: string;
  pod: V1Pod;
  state: PodWorkerState;
  pending: PodUpdateMessage | undefined;
  /** The loop is running for this pod. */
  active: boolean;
  /** Aborts the current unit of work (kill pre-emption). */
  abort: AbortController | undefined;
  /** Which kind of work is in flight, if any. */
  inFlight: 'sync' | 'terminate' | 'cleanup' | undefined;
  /** End of the previous unit of work (cache time: monotonic ms). */
  lastSyncTimeMs: number;
  /** Timestamp of the cache entry the current unit of work runs on. */
  statusTimestampMs: number;
  /** Grace period for termination, seconds; set when the kill arrives. */
  gracePeriodSeconds: number | undefined;
  /** The pod is gone from config: clean up and forget after termination. */
  removed: boolean;
  /** Cleanup leaves the log directory (orphans; see KillOptions.keepLogs). */
  keepLogs: boolean;
  /** KillOptions.terminalStatus of the kill that set it (see there). */
  terminalStatus: { reason: string; message: string } | undefined;
  /**
   * The main thread's last API status for the pod when this record was created (a re-dispatch
   * after a thread restart): handed to the first sync or termination only, after which the
   * syncer's own last status is newer.
   */
  previousStatus: V1PodStatus | undefined;
  /** The API status in this pod's last result to the main thread (see #withoutUnchangedStatus). */
  sentStatus: V1PodStatus | undefined;
  /** The inputs of the pod's last clean sync, while nothing else ran since (see "Skipped syncs"). */
  settled: SettledSync | undefined;
  /** The pod's first sync here has run (later syncs do not take a start slot). */
  started: boolean;
  /** The pod's first sync is waiting for a start slot (a kill aborts that wait). */
  awaitingStart: boolean;
}

interface SettledSync {
  pod: V1Pod;
  /** The cache entry a sync with these inputs would run on. */
  entryTs: number;
  networkNotReady: string | undefined;
}

export class PodWorkers {
  readonly #d: PodWorkersDeps;
  readonly #pods = new Map<string, PodRecord>();
  #busyMs = 0;
  #closed = false;
  #statsScheduled = false;
  readonly #starts: PodStartGate;

  constructor(deps: PodWorkersDeps) {
    this.#d = deps;
    this.#starts = new PodStartGate(deps.maxParallelStarts ?? POD_WORKERS_DEFAULTS.maxParallelStarts);
  }

  /** Accept an update for a pod; returns at once (work runs asynchronously, one at a time per pod). */
  update(msg: PodUpdateMessage): void {
    if (this.#closed) return;
    let rec = this.#pods.get(msg.uid);
    if (!rec) {
      // A kill for a pod this worker never knew is ignored unless it is a removal (clean up
      // whatever the runtime holds) or a re-dispatch after a thread restart (the pod was being
      // terminated on the dead thread: finish that here).
      if (msg.updateType === 'kill' && msg.kill?.removed !== true && msg.kill?.terminateUnknown !== true && msg.statusNotBeforeMs === undefined) return;
      rec = {
        uid: msg.uid,
        pod: msg.pod,
        state: 'syncing',
        pending: undefined,
        active: false,
        abort: undefined,
        inFlight: undefined,
        lastSyncTimeMs: msg.statusNotBeforeMs ?? 0,
        statusTimestampMs: 0,
        gracePeriodSeconds: undefined,
        removed: false,
        keepLogs: msg.kill?.keepLogs === true,
        terminalStatus: undefined,
        previousStatus: msg.previousStatus,
        sentStatus: undefined,
        settled: undefined,
        started: false,
        awaitingStart: false,
      };
      this.#pods.set(msg.uid, rec);
    }
    if (msg.updateType === 'kill') this.#acceptKill(rec, msg);
    else if (rec.state === 'syncing') {
      // An equal pod keeps the held object: what was computed from it stays valid (container
      // hashes are memoized per object) and "the same pod" is an identity check.
      if (rec.pod !== msg.pod && !deepEqual(rec.pod, msg.pod)) rec.pod = msg.pod;
      // Newest wins, but a PLEG-only sync does not erase another pending reason to sync.
      rec.pending = msg.plegOnly === true && rec.pending !== undefined && rec.pending.plegOnly !== true ? withoutPlegOnly(msg) : msg;
    } else if (!rec.active && rec.pending === undefined && (rec.state === 'terminating' || rec.removed)) {
      // A resync of a pod whose termination or cleanup failed earlier: retry that work.
      rec.pending = { kind: 'update', uid: rec.uid, updateType: 'kill', pod: rec.pod, kill: { removed: rec.removed, reason: 'retry' } };
    } else {
      // Once terminating, a pod's spec no longer matters (the kubelet ignores it too).
      this.#d.logger.v(4).info('ignoring update for terminating pod', { ...podFields(msg.pod), updateType: msg.updateType });
    }
    this.#kick(rec);
    this.#statsChanged();
  }

  /** Reports stats to onStats once the current burst of synchronous changes is over. */
  #statsChanged(): void {
    const onStats = this.#d.onStats;
    if (onStats === undefined || this.#statsScheduled) return;
    this.#statsScheduled = true;
    queueMicrotask(() => {
      this.#statsScheduled = false;
      if (!this.#closed) onStats(this.stats());
    });
  }

  #acceptKill(rec: PodRecord, msg: PodUpdateMessage): void {
    const kill = msg.kill ?? { removed: false, reason: 'kill' };
    rec.removed ||= kill.removed;
    if (kill.terminalStatus !== undefined && rec.terminalStatus === undefined && rec.state !== 'terminated') rec.terminalStatus = kill.terminalStatus;
    const grace = this.#gracePeriodFor(msg.pod, kill.gracePeriodSeconds);
    const shortened = rec.gracePeriodSeconds !== undefined && grace < rec.gracePeriodSeconds;
    rec.gracePeriodSeconds = rec.gracePeriodSeconds === undefined ? grace : Math.min(rec.gracePeriodSeconds, grace);
    switch (rec.state) {
      case 'syncing':
        rec.state = 'terminating';
        rec.pending = msg;
        // Kill pre-empts an in-flight sync (cancel its CRI calls) or a start still waiting for
        // its slot; termination runs next.
        if (rec.inFlight === 'sync' || rec.awaitingStart) rec.abort?.abort(new Error(`pod killed: ${kill.reason}`));
        this.#d.logger.v(2).info('pod terminating', { ...podFields(rec.pod), reason: kill.reason, gracePeriodSeconds: rec.gracePeriodSeconds });
        return;
      case 'terminating':
        rec.pending = msg;
        // A shorter grace period restarts termination with the new deadline.
        if (shortened && rec.inFlight === 'terminate') rec.abort?.abort(new Error('grace period shortened'));
        return;
      case 'terminated':
        if (rec.removed) rec.pending = msg;
        return;
      default:
        assertNever(rec.state);
    }
  }

  #gracePeriodFor(pod: V1Pod, override: number | undefined): number {
    let g = pod.spec?.terminationGracePeriodSeconds ?? POD_WORKERS_DEFAULTS.defaultGracePeriodSeconds;
    const deletion = pod.metadata?.deletionGracePeriodSeconds;
    if (deletion !== undefined && deletion !== null) g = Math.min(g, deletion);
    if (override !== undefined) g = Math.min(g, override);
    return Math.max(0, g);
  }

  #kick(rec: PodRecord): void {
    if (rec.active || rec.pending === undefined) return;
    rec.active = true;
    void this.#loop(rec).finally(() => {
      rec.active = false;
      // An update may have arrived while the loop was finishing.
      if (this.#pods.get(rec.uid) === rec) this.#kick(rec);
    });
  }

  async #loop(rec: PodRecord): Promise<void> {
    while (rec.pending !== undefined && !this.#closed) {
      const update = rec.pending;
      rec.pending = undefined;
      // A kill that arrived while terminating (the main thread resends it on every resync) has
      // nothing left to do once terminated: runtime objects are cleaned up only for a pod
      // removed from config (the state machine above), never for one merely deleted/finished.
      if (rec.state === 'terminated' && !rec.removed) continue;
      const ac = new AbortController();
      // One signal fans out to every CRI call of the unit of work (many in flight at once).
      setMaxListeners(0, ac.signal);
      rec.abort = ac;
      const work = this.#workFor(rec.state);
      let start = this.#d.clock.monotonic();
      let result: Omit<PodResultMessage, 'kind' | 'threadId' | 'uid' | 'durationMs' | 'state' | 'work'> = {};
      let skipped = false;
      let startSlot: StartSlotRelease | undefined;
      try {
        if (work === 'sync' && !rec.started) {
          // A start waits for a slot before it reads the cache, so it runs on a fresh entry.
          rec.awaitingStart = true;
          if (this.#starts.held >= this.#starts.limit && this.#starts.limit > 0) this.#d.logger.v(4).info('pod start waiting for a slot', { ...podFields(rec.pod), inFlight: this.#starts.held, waiting: this.#starts.waiting });
          try {
            startSlot = await this.#starts.acquire(ac.signal);
          } finally {
            rec.awaitingStart = false;
          }
          // The unit's duration (kubelet_pod_worker_duration_seconds, thread busy time) starts
          // once it holds its slot: waiting for one is queueing, not work.
          start = this.#d.clock.monotonic();
        }
        const entry = await this.#d.cache.getNewerThan(rec.uid, rec.lastSyncTimeMs, ac.signal);
        // As the kubelet (managePodLoop: "error determining status"): never act on a status
        // stored with an error (its values are placeholders); the PLEG reinspects the pod and
        // its events bring the pod back, or the error backoff retries.
        // A kill is the exception: it never depends on a readable cached status (a pod whose
        // status could not be stored must still die); termination and cleanup run from the
        // runtime's own listing of the pod's objects instead (TerminatePodInput.statusUnknown).
        if (entry.error && work === 'sync') throw Object.assign(new Error(`error determining status: ${entry.error.message}`), { code: entry.error.code });
        if (entry.error) this.#d.logger.info('pod cache entry unusable; stopping the pod from the runtime\'s listing', { ...podFields(rec.pod), work, code: entry.error.code });
        const settled = rec.settled;
        if (work === 'sync' && update.plegOnly === true && settled !== undefined && settled.pod === rec.pod && settled.entryTs === entry.timestampMs && settled.networkNotReady === update.networkNotReady) {
          skipped = true;
        } else {
          rec.settled = undefined;
          rec.inFlight = work;
          rec.statusTimestampMs = entry.timestampMs;
          result = await this.#doWork(rec, work, update.updateType, entry.status, ac.signal, update.networkNotReady, entry.error ?? undefined);
        }
      } catch (err) {
        if (ac.signal.aborted) {
          // Pre-empted (kill or shorter grace): the pending update drives what runs next.
          this.#d.logger.v(4).info('pod work pre-empted', { ...podFields(rec.pod), work });
        } else {
          const error = toWireError(err);
          this.#d.logger.error('pod worker error', { ...podFields(rec.pod), work, code: error.code, error: error.message });
          result = { error, requeueAfterMs: this.#jitter(this.#errorBackoffMs()) };
        }
      } finally {
        rec.inFlight = undefined;
        rec.abort = undefined;
        if (startSlot !== undefined) {
          rec.started = true;
          startSlot();
        }
      }
      if (skipped) {
        this.#d.onSkippedSync?.();
        continue;
      }
      const durationMs = this.#d.clock.monotonic() - start;
      this.#busyMs += durationMs;
      this.#d.onWork?.(work === 'sync' ? update.updateType : 'kill', durationMs / 1000);
      if (ac.signal.aborted && result.apiStatus === undefined && result.error === undefined) continue;
      const forgotten = work === 'cleanup' && result.error === undefined;
      if (forgotten) {
        this.#pods.delete(rec.uid);
        this.#d.hooks?.podForgotten(rec.uid);
      }
      this.#statsChanged();
      result = this.#withoutUnchangedStatus(rec, work, result);
      this.#d.emit({ kind: 'podResult', threadId: this.#d.threadId, uid: rec.uid, state: rec.state, work, durationMs, ...result, ...(forgotten ? { forgotten, forgottenAtMs: this.#d.clock.now() } : {}) });
      if (forgotten) return;
    }
  }

  /**
   * A sync result whose API status equals the one last sent for the pod goes without it (the
   * protocol: absent = unchanged). Most syncs of a running pod (PLEG events, resyncs) change
   * nothing, and the status is the bulk of a result: its structured clone on both threads and
   * the main thread's status bookkeeping are skipped. Only for syncs of a syncing pod: the main
   * thread replaces a status on its own only for pods that are not syncing (admission, a pod
   * re-added while killed), and terminations always report theirs.
   */
  #withoutUnchangedStatus<R extends { apiStatus?: V1PodStatus }>(rec: PodRecord, work: 'sync' | 'terminate' | 'cleanup', result: R): R {
    const status = result.apiStatus;
    if (status === undefined) return result;
    if (work === 'sync' && rec.state === 'syncing' && rec.sentStatus !== undefined && deepEqual(rec.sentStatus, status)) {
      const { apiStatus: _unchanged, ...rest } = result;
      return rest as R;
    }
    rec.sentStatus = status;
    return result;
  }

  #workFor(state: PodWorkerState): 'sync' | 'terminate' | 'cleanup' {
    switch (state) {
      case 'syncing':
        return 'sync';
      case 'terminating':
        return 'terminate';
      case 'terminated':
        return 'cleanup';
      default:
        return assertNever(state);
    }
  }

  async #doWork(
    rec: PodRecord,
    work: 'sync' | 'terminate' | 'cleanup',
    updateType: SyncPodType,
    status: RuntimePodStatus,
    signal: AbortSignal,
    networkNotReady: string | undefined,
    statusUnknown: WireError | undefined,
  ): Promise<Omit<PodResultMessage, 'kind' | 'threadId' | 'uid' | 'durationMs' | 'state' | 'work'>> {
    const d = this.#d;
    switch (work) {
      case 'sync': {
        const out = await d.syncer.syncPod({ updateType, pod: rec.pod, runtimeStatus: status, signal, ...this.#takePreviousStatus(rec), ...(networkNotReady !== undefined ? { networkNotReady } : {}) });
        if (signal.aborted) throw signal.reason;
        // Nothing changed in the runtime: the status just read is current; the next sync waits
        // for the PLEG as in the kubelet instead of re-reading it (4 CRI calls per no-op sync).
        const refreshed = out.runtimeChanged !== false;
        const after = refreshed ? await this.#afterWork(rec, signal, out.runtimeAfter) : undefined;
        const fresh = refreshed ? after?.status : this.#markEnd(rec, status);
        if (out.isTerminal && rec.state === 'syncing') {
          // A finished pod (Succeeded/Failed) terminates like a killed one, but stays known
          // (its objects are kept until the pod is removed from config).
          rec.state = 'terminating';
          rec.gracePeriodSeconds ??= this.#gracePeriodFor(rec.pod, undefined);
          rec.pending ??= { kind: 'update', uid: rec.uid, updateType: 'kill', pod: rec.pod, kill: { removed: false, reason: 'pod finished' } };
        }
        d.hooks?.podSynced(rec.pod, fresh, rec.state);
        const settledTs = out.error || out.isTerminal || rec.state !== 'syncing' ? undefined : this.#cleanEntry(rec, refreshed, out.runtimeAfter !== undefined, after);
        if (settledTs !== undefined) rec.settled = { pod: rec.pod, entryTs: settledTs, networkNotReady };
        const requeue = out.error ? this.#jitter(this.#errorBackoffMs()) : this.#jitter(d.syncFrequencyMs ?? POD_WORKERS_DEFAULTS.syncFrequencyMs);
        // Report what the runtime shows now (e.g. the container just restarted), not the
        // pre-sync view; start failures of this sync are kept by the syncer's reason cache.
        const apiStatus = refreshed && fresh && !out.isTerminal && d.syncer.generateAPIStatus ? d.syncer.generateAPIStatus(rec.pod, fresh) : out.apiStatus;
        return {
          apiStatus,
          ...(out.error ? { error: out.error } : {}),
          ...(out.imagePullWindow ? { imagePullWindow: out.imagePullWindow } : {}),
          requeueAfterMs: out.requeueAfterMs !== undefined ? Math.min(out.requeueAfterMs, requeue) : requeue,
        };
      }
      case 'terminate': {
        const grace = rec.gracePeriodSeconds ?? this.#gracePeriodFor(rec.pod, undefined);
        const out = await d.syncer.terminatePod({ pod: rec.pod, runtimeStatus: status, gracePeriodSeconds: grace, signal, ...this.#takePreviousStatus(rec), ...(statusUnknown ? { statusUnknown } : {}), ...(rec.terminalStatus ? { terminalStatus: rec.terminalStatus } : {}) });
        if (signal.aborted) throw signal.reason;
        const fresh = (await this.#afterWork(rec, signal))?.status;
        if (out.error) {
          // The pod stays terminating; the requeued resync retries termination (see update()).
          return { apiStatus: out.apiStatus, error: out.error, requeueAfterMs: this.#jitter(this.#errorBackoffMs()) };
        }
        rec.state = 'terminated';
        d.hooks?.podSynced(rec.pod, fresh, rec.state);
        d.logger.v(2).info('pod terminated', podFields(rec.pod));
        if (rec.removed) rec.pending ??= { kind: 'update', uid: rec.uid, updateType: 'kill', pod: rec.pod, kill: { removed: true, reason: 'cleanup' } };
        return { apiStatus: out.apiStatus };
      }
      case 'cleanup': {
        const out = await d.syncer.cleanupPod({ pod: rec.pod, runtimeStatus: status, signal, ...(rec.keepLogs ? { keepLogs: true } : {}), ...(statusUnknown ? { statusUnknown } : {}) });
        if (out.error) return { error: out.error, requeueAfterMs: this.#jitter(this.#errorBackoffMs()) };
        // No status refresh: the pod is gone, and its cache entry is dropped when it is forgotten.
        this.#markEnd(rec, status);
        return {};
      }
      default:
        return assertNever(work);
    }
  }

  /**
   * The cache entry a clean sync leaves the pod on (see "Skipped syncs"): the one it ran on when
   * it changed nothing, the one it published when that was derived from its own answers and
   * stored as is; undefined otherwise (a re-read status may hold changes nobody acted on).
   */
  #cleanEntry(rec: PodRecord, refreshed: boolean, derived: boolean, after: RefreshedStatus | undefined): number | undefined {
    if (!refreshed) return rec.statusTimestampMs;
    return derived ? after?.entryTs : undefined;
  }

  #takePreviousStatus(rec: PodRecord): { previousStatus?: V1PodStatus } {
    const p = rec.previousStatus;
    rec.previousStatus = undefined;
    return p === undefined ? {} : { previousStatus: p };
  }

  /**
   * Marks the end of a unit of work that changed nothing in the runtime: the status it ran on
   * still reflects all of this worker's actions, so the next unit may run on that same entry
   * (or anything newer) without waiting for a relist.
   */
  #markEnd(rec: PodRecord, status: RuntimePodStatus): RuntimePodStatus {
    rec.lastSyncTimeMs = rec.statusTimestampMs - 1;
    return status;
  }

  /** Marks the end of a unit of work and publishes fresh status when a refresher is wired. */
  async #afterWork(rec: PodRecord, signal: AbortSignal, derived?: RuntimePodStatus): Promise<RefreshedStatus | undefined> {
    const end = cacheNow(this.#d.clock);
    let fresh: RefreshedStatus | undefined;
    if (this.#d.refreshStatus) {
      try {
        fresh = await this.#d.refreshStatus(rec.pod, end, signal, derived);
      } catch (err) {
        this.#d.logger.v(3).info('status refresh failed; waiting for relist', { ...podFields(rec.pod), error: toWireError(err).message });
      }
    }
    rec.lastSyncTimeMs = end;
    return fresh;
  }

  #errorBackoffMs(): number {
    return this.#d.errorBackoffMs ?? POD_WORKERS_DEFAULTS.errorBackoffMs;
  }

  #jitter(ms: number): number {
    return Math.round(ms * (1 + POD_WORKERS_DEFAULTS.jitterFactor * this.#d.random()));
  }

  stateOf(uid: string): PodWorkerState | undefined {
    return this.#pods.get(uid)?.state;
  }

  stats(): WorkerThreadStats {
    let queueDepth = 0;
    for (const r of this.#pods.values()) if ((r.pending !== undefined && r.inFlight === undefined) || r.awaitingStart) queueDepth++;
    return { threadId: this.#d.threadId, podsOwned: this.#pods.size, queueDepth, busyMs: this.#busyMs };
  }

  /** Stop accepting work and abort everything in flight (shutdown; pods keep running). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const r of this.#pods.values()) r.abort?.abort(new Error('pod workers closed'));
  }
}

function toWireError(err: unknown): WireError {
  const e = err as { code?: unknown; message?: unknown } | null;
  return {
    code: typeof e?.code === 'string' ? e.code : 'ERR_POD_WORKER',
    message: typeof e?.message === 'string' ? e.message : String(err),
  };
}

function assertNever(x: never): never {
  throw new Error(`unexpected state ${String(x)}`);
}
