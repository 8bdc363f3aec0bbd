/**
 * The container and sandbox garbage collector: the kubelet's containerGC.GarbageCollect,
 * started as the kubelet starts it (StartGarbageCollection: a pass at start, then one every
 * ContainerGCPeriod = 1 min after the previous one ended; `wait.Until`), on the injected clock.
 *
 * One pass:
 *   1. ListContainers and ListPodSandbox (all states), once each;
 *   2. plan the container removals (container-gc-plan.ts: TTL, gone pods, per-container cap,
 *      global cap) and carry them out in order: an UNKNOWN container is stopped first (skipped
 *      when that fails, as the kubelet's removeOldestN), then its log files are removed
 *      (the kubelet's removeContainerLog; a container whose logs cannot be removed is kept, as
 *      there), then RemoveContainer;
 *   3. plan the sandbox removals from the containers that remain and carry them out:
 *      StopPodSandbox then RemovePodSandbox (skipped when the stop fails), as the kubelet.
 * Removals run one at a time (as the kubelet's loop). Failures are logged and counted; the
 * object is still listed next pass and tried again. A pass whose listing fails reports that
 * (the agent records the kubelet's ContainerGCFailed event).
 *
 * Bounded work per pass: at most `maxRemovalsPerPass` removals (containers and sandboxes
 * together); the rest is planned again from a fresh listing next pass (nothing carried over),
 * and counted in shardlet_container_gc_deferred_total. The planning is linear in the listing
 * (one sort per evict unit). Runs on the main thread: its CPU per pass is the two listings'
 * decoding and the plan (bench/container-gc-pass.ts measures it at 5,000 dead containers); the
 * removals are CRI round trips the event loop only waits on.
 *
 * Log files of a kept container are never removed: a log path that any container not removed
 * by this pass also has (two instances with one restart count) is left alone.
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { Container } from '../../shared/cri/cri-types.js';
import type { RuntimeService } from '../../shared/cri/runtime-service.js';
import { isNotFound } from '../../shared/cri/cri-errors.js';
import { removeContainerLogFiles } from '../../shared/fs/container-log-files.js';
import { listedContainerLogPath } from '../../shared/kubetypes/pod-log-paths.js';
import type { Logger } from '../../shared/logging/logger.js';
import { planContainerRemovals, planSandboxRemovals, type ContainerGcPolicy, type GcContainerInfo } from './container-gc-plan.js';
import { PeriodicPass } from '../../shared/clock/periodic-pass.js';

export type ContainerGcRuntime = Pick<RuntimeService, 'listContainers' | 'listPodSandbox' | 'removeContainer' | 'stopContainer' | 'stopPodSandbox' | 'removePodSandbox'>;

/** What a pass observes; the agent maps it to metrics. */
export interface ContainerGcObserver {
  removed(kind: 'container' | 'sandbox', ok: boolean): void;
  deferred(n: number): void;
  pass(seconds: number, ok: boolean): void;
}

export interface ContainerGcDeps {
  runtime: ContainerGcRuntime;
  clock: Clock;
  logger: Logger;
  policy: ContainerGcPolicy;
  /** --pod-logs-dir: where removed containers' log files are (derived from their kubelet labels). */
  podLogsDir: string;
  /** Whether every pod source has delivered once. */
  sourcesReady: () => boolean;
  /**
   * The kubelet's ShouldPodContentBeRemoved: no source wants the pod and no worker holds it.
   * Asked only once the sources are ready.
   */
  isPodGone: (podUID: string) => boolean;
  /** Removes a container's log files (default: removeContainerLogFiles). */
  removeLogs?: (logPath: string) => Promise<unknown>;
  periodMs?: number;
  maxRemovalsPerPass?: number;
  observer?: ContainerGcObserver;
  /** A pass failed (its listing): the agent's ContainerGCFailed event. */
  onFailure?: (err: Error) => void;
  /** Observer of each completed pass (tests, diagnostics). */
  onPass?: (r: ContainerGcPass) => void;
}

export interface ContainerGcPass {
  /** Whether the listings succeeded. */
  ok: boolean;
  containersRemoved: number;
  sandboxesRemoved: number;
  failed: number;
  /** Planned but left for the next pass (the cap). */
  deferred: number;
}

export const CONTAINER_GC_DEFAULTS = Object.freeze({
  /** The kubelet's ContainerGCPeriod. */
  periodMs: 60_000,
  maxRemovalsPerPass: 1_000,
});

/** The kubelet's minimumGracePeriodInSeconds: the grace an UNKNOWN container gets before removal (killContainer with no pod). */
const UNKNOWN_STOP_GRACE_SECONDS = 2;

export class ContainerGc {
  readonly #d: ContainerGcDeps;
  readonly #periodMs: number;
  readonly #maxRemovals: number;
  readonly #pass: PeriodicPass<ContainerGcPass>;

  constructor(deps: ContainerGcDeps) {
    if (!deps?.runtime || !deps.clock || !deps.logger) throw new TypeError('ContainerGc: runtime, clock and logger are required');
    if (typeof deps.podLogsDir !== 'string' || deps.podLogsDir === '') throw new TypeError('ContainerGc: podLogsDir must be a non-empty path');
    this.#periodMs = deps.periodMs ?? CONTAINER_GC_DEFAULTS.periodMs;
    this.#maxRemovals = deps.maxRemovalsPerPass ?? CONTAINER_GC_DEFAULTS.maxRemovalsPerPass;
    if (!(this.#periodMs > 0)) throw new RangeError(`ContainerGc: periodMs must be positive, got ${this.#periodMs}`);
    if (!Number.isInteger(this.#maxRemovals) || this.#maxRemovals < 1) throw new RangeError(`ContainerGc: maxRemovalsPerPass must be a positive integer, got ${this.#maxRemovals}`);
    this.#d = deps;
    this.#pass = new PeriodicPass(deps.clock, this.#periodMs, () => this.runOnce());
  }

  /** A pass now, then one every period after the previous ended. Idempotent. */
  start(): void {
    this.#pass.start();
  }


  /** The pass in flight, if any (tests await it). */
  get running(): Promise<ContainerGcPass> | undefined {
    return this.#pass.running;
  }

  /** One pass (exported for tests and the bench; the timer calls it). Never rejects. */
  async runOnce(): Promise<ContainerGcPass> {
    const began = this.#d.clock.monotonic();
    const r: ContainerGcPass = { ok: true, containersRemoved: 0, sandboxesRemoved: 0, failed: 0, deferred: 0 };
    try {
      await this.#collect(r);
    } catch (err) {
      r.ok = false;
      const e = err instanceof Error ? err : new Error(String(err));
      this.#d.logger.error('Container garbage collection failed', { err: e.message });
      this.#d.onFailure?.(e);
    }
    this.#d.observer?.pass((this.#d.clock.monotonic() - began) / 1000, r.ok);
    if (r.deferred > 0) this.#d.observer?.deferred(r.deferred);
    this.#d.onPass?.(r);
    return r;
  }

  async #collect(r: ContainerGcPass): Promise<void> {
    const { runtime } = this.#d;
    const containers = await runtime.listContainers({});
    const sandboxes = await runtime.listPodSandbox({});
    const removable = this.#d.sourcesReady() ? (uid: string) => this.#d.isPodGone(uid) : undefined;
    const plan = planContainerRemovals(containers, this.#d.policy, this.#d.clock.now(), removable);
    let budget = this.#maxRemovals;
    const planned = new Set(plan.map((c) => c.id));
    const keptLogs = this.#keptLogPaths(containers, planned);
    const removed = new Set<string>();
    for (const c of plan) {
      if (this.#pass.closed) return;
      if (budget === 0) {
        r.deferred++;
        continue;
      }
      budget--;
      if (await this.#removeContainer(c, keptLogs)) {
        removed.add(c.id);
        r.containersRemoved++;
      } else r.failed++;
    }
    const remaining = containers.filter((c) => !removed.has(c.id));
    for (const s of planSandboxRemovals(sandboxes, remaining, removable)) {
      if (this.#pass.closed) return;
      if (budget === 0) {
        r.deferred++;
        continue;
      }
      budget--;
      if (await this.#removeSandbox(s.id)) r.sandboxesRemoved++;
      else r.failed++;
    }
  }

  /** Log paths of every listed container this pass does not plan to remove. */
  #keptLogPaths(containers: readonly Container[], planned: ReadonlySet<string>): Set<string> {
    const kept = new Set<string>();
    for (const c of containers) {
      if (planned.has(c.id)) continue;
      const p = listedContainerLogPath(this.#d.podLogsDir, c.labels, c.annotations);
      if (p !== null) kept.add(p);
    }
    return kept;
  }

  async #removeContainer(c: GcContainerInfo, keptLogs: ReadonlySet<string>): Promise<boolean> {
    const { runtime, logger } = this.#d;
    if (c.unknown) {
      // Containers in unknown state could be running: stop them before removal.
      try {
        await runtime.stopContainer(c.id, UNKNOWN_STOP_GRACE_SECONDS);
      } catch (err) {
        if (!isNotFound(err)) {
          logger.error('Failed to stop container', { containerID: c.id, err: errorText(err) });
          this.#d.observer?.removed('container', false);
          return false;
        }
      }
    }
    const logPath = listedContainerLogPath(this.#d.podLogsDir, c.container.labels, c.container.annotations);
    try {
      if (logPath !== null && !keptLogs.has(logPath)) await (this.#d.removeLogs ?? removeContainerLogFiles)(logPath);
      await runtime.removeContainer(c.id);
    } catch (err) {
      if (!isNotFound(err)) {
        logger.error('Failed to remove container', { containerID: c.id, err: errorText(err) });
        this.#d.observer?.removed('container', false);
        return false;
      }
    }
    logger.v(4).info('Removed dead container', { containerID: c.id, containerName: c.name, podUID: c.podUID });
    this.#d.observer?.removed('container', true);
    return true;
  }

  async #removeSandbox(id: string): Promise<boolean> {
    const { runtime, logger } = this.#d;
    logger.v(4).info('Removing sandbox', { sandboxID: id });
    // Normally stopped long ago; the kubelet stops it again in case it was not.
    try {
      await runtime.stopPodSandbox(id);
    } catch (err) {
      if (!isNotFound(err)) {
        logger.error('Failed to stop sandbox before removing', { sandboxID: id, err: errorText(err) });
        this.#d.observer?.removed('sandbox', false);
        return false;
      }
    }
    try {
      await runtime.removePodSandbox(id);
    } catch (err) {
      if (!isNotFound(err)) {
        logger.error('Failed to remove sandbox', { sandboxID: id, err: errorText(err) });
        this.#d.observer?.removed('sandbox', false);
        return false;
      }
    }
    this.#d.observer?.removed('sandbox', true);
    return true;
  }

  /** Stops the timer and waits for a pass in flight (it stops at its next removal). Idempotent. */
  async close(): Promise<void> {
    await this.#pass.close();
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
