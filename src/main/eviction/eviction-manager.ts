/**
 * Node-pressure eviction on the main thread: the kubelet's eviction manager
 * (pkg/kubelet/eviction/eviction_manager.go), on the injected clock.
 *
 * Timeline (start() → a pass now, then one every `periodMs`, 10 s as the kubelet's
 * evictionMonitoringPeriod, each armed when the previous ended; passes never overlap):
 *   1. the summary (/stats/summary's figures) → signal observations (eviction-observations.ts);
 *   2. thresholds met now, plus those met at the last pass that have not yet recovered past their
 *      minimum reclaim; when each was first met; the pressure conditions they map to, each kept
 *      True until `pressureTransitionPeriodMs` after it was last observed;
 *   3. the thresholds whose grace period is over (hard: at once) drive eviction, only when their
 *      observation is newer than the last pass's;
 *   4. local storage first: a pod over its pod or container ephemeral-storage limit is evicted
 *      (grace 1 s), and the pass ends there when one was;
 *   5. otherwise the threshold to reclaim is the first by eviction priority (memory first); the
 *      Node gets an `EvictionThresholdMet` event ("Attempting to reclaim R"); node-level
 *      reclaim runs for disk signals (the container GC pass and the image GC pass, awaited),
 *      then the summary is read again: when no threshold is met any more (minimum reclaim
 *      included) no pod is evicted;
 *   6. else the active pods are ranked for the signal (eviction-ranking.ts) and the first one that
 *      is not critical is evicted: ONE pod per pass. Hard thresholds give it 1 s of grace
 *      (immediateEvictionGracePeriodSeconds); soft ones --eviction-max-pod-grace-period, capped
 *      by the pod's terminationGracePeriodSeconds.
 * Evicting: a Warning `Evicted` event on the pod with the message, then `evict` (the kubelet's
 * killPodFunc with its status func: phase Failed, reason Evicted, the message).
 *
 * Admission (admit): with no pressure condition every pod is admitted; critical pods always;
 * under MemoryPressure alone, pods that are not BestEffort (and BestEffort ones tolerating the
 * node.kubernetes.io/memory-pressure NoSchedule taint); under any other condition none. The
 * refusal is reason `Evicted`, message "The node had condition: [C ...]. ".
 *
 * State (conditions, first-observed times, last observations) is only written by a pass; the
 * conditions read by node status and admission are the last pass's.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../shared/clock/clock.js';
import { isCriticalPod } from '../../shared/kubetypes/critical-pod.js';
import { podFields, type Logger } from '../../shared/logging/logger.js';
import { podQOSClass } from '../../shared/resources/pod-qos.js';
import type { Summary } from '../server/stats-summary.js';
import type { AdmitResult } from '../syncloop/pod-admitter.js';
import { signalObservations, statsByUid } from './eviction-observations.js';
import { evictionMessage, rankFor } from './eviction-ranking.js';
import { PeriodicPass } from '../../shared/clock/periodic-pass.js';
import {
  byEvictionPriority, conditionsLastObservedAt, conditionsObservedSince, conditionsOf, isHard, mergeThresholds, SIGNAL_RESOURCE,
  thresholdsFirstObservedAt, thresholdsMet, thresholdsMetGracePeriod, thresholdsUpdatedStats,
  type ObservedAt, type Observations, type PressureCondition, type Signal, type Threshold,
} from './eviction-thresholds.js';
import { hasEphemeralStorageLimit, localStorageViolation } from './local-storage-limits.js';

/** The kubelet's eviction.Reason. */
export const EVICTED_REASON = 'Evicted';
/** immediateEvictionGracePeriodSeconds. */
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1;

export interface EvictionStatus {
  reason: string;
  message: string;
}

export interface EvictionPassReport {
  /** Conditions after the pass. */
  conditions: PressureCondition[];
  /** Thresholds whose grace period is over. */
  met: Signal[];
  /** The signal reclaimed, if any. */
  reclaimed?: Signal;
  /** Node-level reclaim relieved the pressure (no pod evicted). */
  reclaimedNodeLevel?: boolean;
  /** The pod evicted, if any (UID), and why. */
  evicted?: { uid: string; signal: string; gracePeriodSeconds: number; message: string };
  /** The summary could not be read. */
  error?: string;
}

export interface EvictionManagerDeps {
  clock: Clock;
  logger: Logger;
  thresholds: readonly Threshold[];
  pressureTransitionPeriodMs: number;
  maxPodGracePeriodSeconds: number;
  /** The figures of /stats/summary (node memory, fs, imagefs, rlimit; pods' usage). */
  summary: () => Promise<Summary>;
  /** Admitted pods not terminal or terminating (the kubelet's activePodsFunc). */
  activePods: () => V1Pod[];
  /** Kill the pod for good with this status (the kubelet's killPodFunc + status func). */
  evict: (pod: V1Pod, gracePeriodSeconds: number, status: EvictionStatus) => void;
  /** A Warning event on the pod (cluster mode). */
  podEvent?: (pod: V1Pod, reason: string, message: string) => void;
  /** A Warning event on the Node (cluster mode). */
  nodeEvent?: (reason: string, message: string) => void;
  /** Node-level reclaim for disk signals: a container GC pass, then an image GC pass. */
  reclaimDisk?: () => Promise<void>;
  /** kubelet_evictions{eviction_signal}. */
  onEviction?: (signal: string) => void;
  onPass?: (r: EvictionPassReport) => void;
  /** The evictionMonitoringPeriod (default 10 s). */
  periodMs?: number;
}

export const EVICTION_MANAGER_DEFAULTS = Object.freeze({ periodMs: 10_000 });

export class EvictionManager {
  readonly #d: EvictionManagerDeps;
  readonly #periodMs: number;
  #conditions: PressureCondition[] = [];
  #firstObservedAt: ObservedAt = new Map();
  #conditionsLastObservedAt = new Map<PressureCondition, number>();
  #thresholdsMet: Threshold[] = [];
  #lastObservations: Observations = new Map();
  readonly #pass: PeriodicPass<EvictionPassReport>;
  readonly #missingLogged = new Set<Signal>();

  constructor(deps: EvictionManagerDeps) {
    for (const k of ['clock', 'logger', 'summary', 'activePods', 'evict'] as const) if (!deps?.[k]) throw new TypeError(`EvictionManager: deps.${k} is required`);
    this.#periodMs = deps.periodMs ?? EVICTION_MANAGER_DEFAULTS.periodMs;
    if (!(this.#periodMs > 0)) throw new TypeError('EvictionManager: deps.periodMs must be > 0');
    this.#d = deps;
    this.#pass = new PeriodicPass(deps.clock, this.#periodMs, () => this.runOnce());
  }

  /** The pressure conditions of the last pass (MemoryPressure, DiskPressure, PIDPressure order). */
  get conditions(): readonly PressureCondition[] {
    return this.#conditions;
  }

  /** The pass in flight, if any (tests await it). */
  get running(): Promise<EvictionPassReport> | undefined {
    return this.#pass.running;
  }

  /** A pass now, then every period after the previous ended. Idempotent. */
  start(): void {
    this.#pass.start();
  }


  /** Stops the timer and waits for a pass in flight. Idempotent. */
  async close(): Promise<void> {
    await this.#pass.close();
  }

  /** Admission under pressure (the kubelet's eviction manager Admit). */
  admit(pod: V1Pod): AdmitResult {
    const conds = this.#conditions;
    if (conds.length === 0 || isCriticalPod(pod)) return { admit: true };
    if (conds.length === 1 && conds[0] === 'MemoryPressure') {
      if (podQOSClass(pod) !== 'BestEffort') return { admit: true };
      if (toleratesMemoryPressure(pod)) return { admit: true };
    }
    return { admit: false, reason: EVICTED_REASON, message: `The node had condition: [${conds.join(' ')}]. ` };
  }

  /** One synchronize pass (exported for tests; the timer calls it). Never rejects. */
  async runOnce(): Promise<EvictionPassReport> {
    let report: EvictionPassReport;
    try {
      report = await this.#synchronize();
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.#d.logger.error('Eviction manager: failed to get summary stats', { err: error });
      report = { conditions: [...this.#conditions], met: [], error };
    }
    this.#d.onPass?.(report);
    return report;
  }

  async #synchronize(): Promise<EvictionPassReport> {
    const d = this.#d;
    const active = d.activePods();
    if (d.thresholds.length === 0 && !active.some(hasEphemeralStorageLimit)) return { conditions: [], met: [] };
    const summary = await d.summary();
    const obs = signalObservations(summary);
    const stats = statsByUid(summary);
    const onMissing = (s: Signal): void => {
      if (this.#missingLogged.has(s)) return;
      this.#missingLogged.add(s);
      d.logger.info('Eviction manager: no observation found for eviction signal', { signal: s });
    };
    let thresholds = thresholdsMet(d.thresholds, obs, false, onMissing);
    if (this.#thresholdsMet.length > 0) thresholds = mergeThresholds(thresholds, thresholdsMet(this.#thresholdsMet, obs, true));
    const now = d.clock.now();
    const firstObservedAt = thresholdsFirstObservedAt(thresholds, this.#firstObservedAt, now);
    const lastObservedAt = conditionsLastObservedAt(conditionsOf(thresholds), this.#conditionsLastObservedAt, now);
    const conditions = conditionsObservedSince(lastObservedAt, d.pressureTransitionPeriodMs, now);
    const graceMet = thresholdsMetGracePeriod(firstObservedAt, now);
    if (conditions.join() !== this.#conditions.join()) d.logger.info('Eviction manager: node conditions changed', { conditions: conditions.join(',') });
    this.#conditions = conditions;
    this.#firstObservedAt = firstObservedAt;
    this.#conditionsLastObservedAt = lastObservedAt;
    this.#thresholdsMet = graceMet;
    const updated = thresholdsUpdatedStats(graceMet, obs, this.#lastObservations);
    this.#lastObservations = obs;
    const report: EvictionPassReport = { conditions: [...conditions], met: graceMet.map((t) => t.signal) };

    // Local storage limits first; a pass that evicted for them ends there.
    let localEvicted = false;
    for (const pod of active) {
      const s = stats(pod);
      if (s === undefined) continue;
      const v = localStorageViolation(pod, s);
      if (v === undefined) continue;
      if (this.#evictPod(pod, IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, v.message)) {
        d.onEviction?.(v.signal);
        report.evicted ??= { uid: pod.metadata?.uid ?? '', signal: v.signal, gracePeriodSeconds: IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, message: v.message };
        localEvicted = true;
      }
    }
    if (localEvicted || updated.length === 0) return report;

    const toReclaim = byEvictionPriority(updated)[0]!;
    const resource = SIGNAL_RESOURCE[toReclaim.signal];
    report.reclaimed = toReclaim.signal;
    d.logger.info('Eviction manager: attempting to reclaim', { resourceName: resource });
    d.nodeEvent?.('EvictionThresholdMet', `Attempting to reclaim ${resource}`);
    if (await this.#reclaimNodeLevel(toReclaim.signal)) {
      d.logger.info('Eviction manager: able to reduce resource pressure without evicting pods.', { resourceName: resource });
      report.reclaimedNodeLevel = true;
      return report;
    }
    d.logger.info('Eviction manager: must evict pod(s) to reclaim', { resourceName: resource });
    if (active.length === 0) {
      d.logger.error('Eviction manager: eviction thresholds have been met, but no pods are active to evict');
      return report;
    }
    const ranked = rankFor(toReclaim.signal)(active, stats);
    d.logger.info('Eviction manager: pods ranked for eviction', { pods: ranked.map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`).join(',') });
    for (const pod of ranked) {
      let grace = IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS;
      if (!isHard(toReclaim)) {
        grace = d.maxPodGracePeriodSeconds;
        const own = pod.spec?.terminationGracePeriodSeconds;
        if (typeof own === 'number') grace = Math.min(grace, own);
      }
      const message = evictionMessage(resource, pod, stats, updated, obs);
      if (this.#evictPod(pod, grace, message)) {
        d.onEviction?.(toReclaim.signal);
        report.evicted = { uid: pod.metadata?.uid ?? '', signal: toReclaim.signal, gracePeriodSeconds: grace, message };
        return report;
      }
    }
    d.logger.info('Eviction manager: unable to evict any pods from the node');
    return report;
  }

  /** reclaimNodeLevelResources: true when, after reclaiming, no threshold is met (min reclaim included). */
  async #reclaimNodeLevel(signal: Signal): Promise<boolean> {
    const d = this.#d;
    const resource = SIGNAL_RESOURCE[signal];
    if (d.reclaimDisk === undefined || (resource !== 'ephemeral-storage' && resource !== 'inodes')) return false;
    try {
      await d.reclaimDisk();
    } catch (err) {
      d.logger.info('Eviction manager: unexpected error when attempting to reduce resource pressure', { resourceName: resource, err: err instanceof Error ? err.message : String(err) });
    }
    let summary: Summary;
    try {
      summary = await d.summary();
    } catch (err) {
      d.logger.error('Eviction manager: failed to get summary stats after resource reclaim', { err: err instanceof Error ? err.message : String(err) });
      return false;
    }
    return thresholdsMet(d.thresholds, signalObservations(summary), true).length === 0;
  }

  /** evictPod: never a critical pod; the event, then the kill with the Evicted status. */
  #evictPod(pod: V1Pod, gracePeriodSeconds: number, message: string): boolean {
    const d = this.#d;
    if (isCriticalPod(pod)) {
      d.logger.error('Eviction manager: cannot evict a critical pod', podFields(pod));
      return false;
    }
    d.podEvent?.(pod, EVICTED_REASON, message);
    d.logger.info('Evicting pod', { ...podFields(pod), message });
    d.evict(pod, gracePeriodSeconds, { reason: EVICTED_REASON, message });
    return true;
  }
}

/** TolerationsTolerateTaint for node.kubernetes.io/memory-pressure:NoSchedule. */
function toleratesMemoryPressure(pod: V1Pod): boolean {
  return (pod.spec?.tolerations ?? []).some((t) => {
    if (t.effect !== undefined && t.effect !== '' && t.effect !== 'NoSchedule') return false;
    if (t.key === undefined || t.key === '') return t.operator === 'Exists';
    if (t.key !== 'node.kubernetes.io/memory-pressure') return false;
    return t.operator === 'Exists' || ((t.operator ?? 'Equal') === 'Equal' && (t.value ?? '') === '');
  });
}
