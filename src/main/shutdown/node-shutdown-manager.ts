/**
 * Graceful node shutdown, as the kubelet's nodeshutdown manager (pkg/kubelet/nodeshutdown/
 * nodeshutdown_manager_linux.go) with its original configuration (ShutdownGracePeriod and
 * ShutdownGracePeriodCriticalPods, migrated to two priority groups as migrateConfig does):
 *
 *   regular  priority < 2e9   grace = shutdownGracePeriod − shutdownGracePeriodCriticalPods
 *   critical priority ≥ 2e9   grace = shutdownGracePeriodCriticalPods
 *
 * (priority: spec.priority, or a built-in class named by spec.priorityClassName where nothing
 * resolved it, e.g. a static pod: see shared/kubetypes/pod-priority.ts.)
 *
 * Timeline:
 *   start()         every signal source starts (logind: delay lock + PrepareForShutdown watch;
 *                   SIGUSR1). A source that cannot start is logged ("Failed to start node
 *                   shutdown manager", as the kubelet logs it) and left out; the agent goes on.
 *   event(true)     "shutdown is imminent": a Normal NodeShutdown event on the Node ("Shutdown
 *                   manager detected shutdown event"), shuttingDown = true (admission refuses
 *                   every pod: NodeShutdown / "Pod was rejected as the node is shutting down.";
 *                   Ready turns False, KubeletNotReady "node is shutting down"), the node status
 *                   is synced now, then the pods are handled group by group, lowest priority
 *                   first: every active pod of the group is killed at once with grace
 *                   min(group's grace, its terminationGracePeriodSeconds) and the terminal status
 *                   phase Failed, reason Terminated, message "Pod was terminated in response to
 *                   imminent node shutdown."; the group ends when all its pods have stopped or
 *                   after the group's grace period on the injected clock, whichever is first
 *                   (a group without pods takes no time). Then the delay lock is released
 *                   (the machine shuts down).
 *   event(false)    a cancelled shutdown: a NodeShutdown event ("Shutdown manager detected
 *                   shutdown cancellation"), shuttingDown = false (admission and Ready as
 *                   before; pods already killed stay killed, as in the kubelet), the delay lock
 *                   is taken again.
 * Events are handled one at a time, in arrival order (the kubelet's single goroutine).
 * Disabled (no manager is built) when shutdownGracePeriod is 0.
 *
 * Not done: shutdownGracePeriodByPodPriority, the DisruptionTarget pod condition, the
 * graceful_shutdown_state file and its start/end-time metrics.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import { podFields, type Logger } from '../../shared/logging/logger.js';
import type { KillOptions } from '../../shared/protocol/pod-worker-protocol.js';
import { SYSTEM_CRITICAL_PRIORITY, podPriority } from '../../shared/kubetypes/pod-priority.js';
import type { ShutdownConfig } from './shutdown-config.js';
import type { ShutdownSignalSource } from './shutdown-signal.js';

export const NODE_SHUTDOWN_REASON = 'Terminated';
export const NODE_SHUTDOWN_MESSAGE = 'Pod was terminated in response to imminent node shutdown.';
export const NODE_SHUTDOWN_NOT_ADMITTED_REASON = 'NodeShutdown';
export const NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE = 'Pod was rejected as the node is shutting down.';
/** ShutdownStatus()'s error: the Ready condition's message while shutting down. */
export const NODE_SHUTTING_DOWN = 'node is shutting down';

/** The two periods of the configuration (what the manager reads of it). */
export type ShutdownPeriods = Pick<ShutdownConfig, 'shutdownGracePeriodMs' | 'shutdownGracePeriodCriticalPodsMs'>;

/** One priority group (the kubelet's ShutdownGracePeriodByPodPriority). */
export interface ShutdownGracePeriodByPriority {
  priority: number;
  gracePeriodSeconds: number;
}

/** The kubelet's migrateConfig: the two groups of the original configuration; none when disabled. */
export function shutdownGroups(c: ShutdownPeriods): ShutdownGracePeriodByPriority[] {
  if (c.shutdownGracePeriodMs === 0) return [];
  const regular = c.shutdownGracePeriodMs - c.shutdownGracePeriodCriticalPodsMs;
  if (regular < 0) return [];
  return [
    { priority: 0, gracePeriodSeconds: Math.trunc(regular / 1000) },
    { priority: SYSTEM_CRITICAL_PRIORITY, gracePeriodSeconds: Math.trunc(c.shutdownGracePeriodCriticalPodsMs / 1000) },
  ];
}

/**
 * The kubelet's groupByPriority: `groups` sorted by priority, low to high; a pod goes to the
 * highest group whose priority is ≤ its own (below the lowest: the lowest).
 */
export function groupByPriority(groups: readonly ShutdownGracePeriodByPriority[], pods: readonly V1Pod[]): Array<ShutdownGracePeriodByPriority & { pods: V1Pod[] }> {
  const out = groups.map((g) => ({ ...g, pods: [] as V1Pod[] }));
  if (out.length === 0) return out;
  for (const pod of pods) {
    const p = podPriority(pod);
    let index = 0;
    for (let i = 0; i < out.length; i++) if (out[i]!.priority <= p) index = i;
    out[index]!.pods.push(pod);
  }
  return out;
}

/** What the manager needs of the pod side (PodLifecycle). */
export interface ShutdownPods {
  /** Admitted pods not yet terminal or terminating (the kubelet's GetActivePods). */
  activePods(): V1Pod[];
  /** Kill the pod on the node's account. */
  killPod(pod: V1Pod, kill: KillOptions): void;
  /** Resolves once the pod's containers and sandbox are stopped. */
  whenStopped(uid: string): Promise<void>;
}

export interface ShutdownGroupReport {
  priority: number;
  gracePeriodSeconds: number;
  pods: string[];
  /** The group's grace period ran out before all its pods stopped. */
  timedOut: boolean;
  /** Injected-clock ms from the group's kills to its end. */
  elapsedMs: number;
}

export interface NodeShutdownManagerDeps {
  clock: Clock;
  logger: Logger;
  config: ShutdownPeriods;
  sources: readonly ShutdownSignalSource[];
  pods: ShutdownPods;
  /** Push the Node's status now (the kubelet's syncNodeStatus): Ready turns False. */
  syncNodeStatus?: () => void;
  /** A Normal event on the Node (cluster mode). */
  event?: (reason: 'NodeShutdown', message: string) => void;
  /** Observes each handled shutdown (tests await it). */
  onShutdownHandled?: (groups: ShutdownGroupReport[]) => void;
}

export class NodeShutdownManager {
  readonly #d: NodeShutdownManagerDeps;
  readonly #groups: ShutdownGracePeriodByPriority[];
  readonly #started: ShutdownSignalSource[] = [];
  #shuttingDown = false;
  /** Events are handled one after another on this chain. */
  #chain: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(deps: NodeShutdownManagerDeps) {
    if (!deps?.clock || !deps.logger || !deps.pods || !Array.isArray(deps.sources)) throw new TypeError('NodeShutdownManager: clock, logger, pods and sources are required');
    this.#groups = shutdownGroups(deps.config);
    if (this.#groups.length === 0) throw new RangeError('NodeShutdownManager: shutdownGracePeriod is 0 (graceful node shutdown is off): build no manager');
    this.#d = deps;
  }

  /** The groups, low priority first (diagnostics, tests). */
  get groups(): readonly ShutdownGracePeriodByPriority[] {
    return this.#groups;
  }

  /** The kubelet's ShutdownStatus: the Ready condition's error while shutting down. */
  errors(): string[] {
    return this.#shuttingDown ? [NODE_SHUTTING_DOWN] : [];
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** The kubelet's Admit: every pod is refused while the node shuts down. */
  admit(): { admit: true } | { admit: false; reason: string; message: string } {
    return this.#shuttingDown ? { admit: false, reason: NODE_SHUTDOWN_NOT_ADMITTED_REASON, message: NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE } : { admit: true };
  }

  /** Starts every source; those that cannot start are logged and left out. Returns the names of those started. */
  async start(): Promise<string[]> {
    const { logger } = this.#d;
    logger.info('Creating node shutdown manager', { shutdownGracePeriodRequested: this.#d.config.shutdownGracePeriodMs / 1000, shutdownGracePeriodCriticalPods: this.#d.config.shutdownGracePeriodCriticalPodsMs / 1000 });
    for (const source of this.#d.sources) {
      try {
        await source.start((shuttingDown) => this.#enqueue(source, shuttingDown));
        this.#started.push(source);
        logger.info('node shutdown manager watching', { source: source.name });
      } catch (err) {
        logger.error('Failed to start node shutdown manager', { source: source.name, code: (err as { code?: string }).code, err: err instanceof Error ? err.message : String(err) });
      }
    }
    return this.#started.map((s) => s.name);
  }

  /** The event chain (tests await it after injecting an event). */
  get idle(): Promise<void> {
    return this.#chain;
  }

  #enqueue(source: ShutdownSignalSource, shuttingDown: boolean): void {
    if (this.#closed) return;
    this.#chain = this.#chain.then(() => this.#handle(source, shuttingDown)).catch((err: unknown) => {
      this.#d.logger.error('node shutdown manager: handling a shutdown event failed', { err: err instanceof Error ? err.message : String(err) });
    });
  }

  async #handle(source: ShutdownSignalSource, shuttingDown: boolean): Promise<void> {
    const { logger } = this.#d;
    logger.info('Shutdown manager detected new shutdown event', { event: shuttingDown ? 'shutdown' : 'cancelled', source: source.name });
    this.#d.event?.('NodeShutdown', shuttingDown ? 'Shutdown manager detected shutdown event' : 'Shutdown manager detected shutdown cancellation');
    this.#shuttingDown = shuttingDown;
    if (!shuttingDown) {
      await Promise.allSettled(this.#started.map((s) => s.reacquire()));
      return;
    }
    this.#d.syncNodeStatus?.();
    let report: ShutdownGroupReport[] = [];
    try {
      report = await this.#processShutdownEvent();
    } finally {
      await Promise.allSettled(this.#started.map((s) => s.release()));
      logger.info('Shutdown manager completed processing shutdown event, node will shutdown shortly');
    }
    this.#d.onShutdownHandled?.(report);
  }

  async #processShutdownEvent(): Promise<ShutdownGroupReport[]> {
    const { clock, logger, pods } = this.#d;
    const out: ShutdownGroupReport[] = [];
    for (const group of groupByPriority(this.#groups, pods.activePods())) {
      // No pods in the range: do not wait for it.
      if (group.pods.length === 0) continue;
      const began = clock.monotonic();
      const stopped: Array<Promise<void>> = [];
      for (const pod of group.pods) {
        let grace = group.gracePeriodSeconds;
        const own = pod.spec?.terminationGracePeriodSeconds;
        if (typeof own === 'number' && own <= grace) grace = Math.max(0, own);
        logger.info('Shutdown manager killing pod with gracePeriod', { ...podFields(pod), gracePeriod: grace });
        pods.killPod(pod, { removed: false, reason: 'node shutdown', gracePeriodSeconds: grace, terminalStatus: { reason: NODE_SHUTDOWN_REASON, message: NODE_SHUTDOWN_MESSAGE } });
        stopped.push(pods.whenStopped(pod.metadata?.uid ?? ''));
      }
      let timer: TimerHandle | undefined;
      const timedOut = await Promise.race([
        Promise.all(stopped).then(() => false),
        new Promise<boolean>((resolve) => (timer = clock.setTimer(group.gracePeriodSeconds * 1000, () => resolve(true)))),
      ]);
      timer?.cancel();
      if (timedOut) logger.info('Shutdown manager pod killing time out', { gracePeriod: group.gracePeriodSeconds, priority: group.priority });
      out.push({ priority: group.priority, gracePeriodSeconds: group.gracePeriodSeconds, pods: group.pods.map((p) => p.metadata?.uid ?? ''), timedOut, elapsedMs: clock.monotonic() - began });
    }
    return out;
  }

  /** Stops the sources (their locks are released). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled(this.#d.sources.map((s) => s.close()));
  }
}
