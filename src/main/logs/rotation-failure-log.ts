/**
 * Aggregated logging of container log rotation failures. A pass visits every running
 * container; a failure that repeats for thousands of containers (a pod of 10,000 containers
 * whose logs the runtime cannot reopen) used to write one error line per container per pass
 * (~3.6 MB every 20 s). Here, per pass:
 *   - a container's failure is logged on its own line only when it is new (the container was
 *     not failing) or its last line is older than `repeatMs`, and at most `perPassLines` times;
 *   - everything else is counted, and the pass ends with ONE summary line (failing containers,
 *     how many were not logged individually, the most common error) when anything was held back.
 * A container that rotates (or is seen healthy) again leaves the failing set, so its next
 * failure is logged at once. The set is pruned to the listed containers every pass (bounded by
 * the running containers). Time is the injected clock's monotonic ms.
 */
import type { Logger } from '../../shared/logging/logger.js';

export const ROTATION_FAILURE_LOG_DEFAULTS = Object.freeze({
  /** Individual failure lines per pass at most. */
  perPassLines: 10,
  /** A container still failing is logged on its own line again after this long. */
  repeatMs: 10 * 60_000,
});

export interface RotationFailureLogOptions {
  logger: Logger;
  monotonicMs: () => number;
  perPassLines?: number;
  repeatMs?: number;
}

export class RotationFailureLog {
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #perPass: number;
  readonly #repeatMs: number;
  /** Failing container id → monotonic ms it was last reported (its own line, or a summary). */
  readonly #failing = new Map<string, number>();
  #lines = 0;
  #held = 0;
  #failed = 0;
  readonly #messages = new Map<string, number>();

  constructor(o: RotationFailureLogOptions) {
    this.#log = o.logger;
    this.#now = o.monotonicMs;
    this.#perPass = o.perPassLines ?? ROTATION_FAILURE_LOG_DEFAULTS.perPassLines;
    this.#repeatMs = o.repeatMs ?? ROTATION_FAILURE_LOG_DEFAULTS.repeatMs;
  }

  /** A container's rotation (or log path lookup) failed in this pass. */
  failed(containerId: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.#failed++;
    this.#messages.set(message, (this.#messages.get(message) ?? 0) + 1);
    const now = this.#now();
    const last = this.#failing.get(containerId);
    if (this.#lines < this.#perPass && (last === undefined || now - last >= this.#repeatMs)) {
      this.#lines++;
      this.#failing.set(containerId, now);
      this.#log.error('failed to rotate container log', { containerId, err: message });
      return;
    }
    // Reported in this pass's summary: its own line waits repeatMs like a logged one.
    if (last === undefined) this.#failing.set(containerId, now);
    this.#held++;
  }

  /** The container is fine again (rotated, or its log needs nothing): its next failure is new. */
  ok(containerId: string): void {
    this.#failing.delete(containerId);
  }

  /** End of a pass: forget containers no longer listed, write the summary line if any was held back. */
  endPass(listed: ReadonlySet<string>): void {
    for (const id of this.#failing.keys()) if (!listed.has(id)) this.#failing.delete(id);
    if (this.#held > 0) {
      let top = '';
      let topCount = 0;
      for (const [m, n] of this.#messages) if (n > topCount) [top, topCount] = [m, n];
      this.#log.error('container log rotation failed for many containers; repeated failures are summarized', {
        failed: this.#failed, notLoggedIndividually: this.#held, failingContainers: this.#failing.size,
        commonError: top, commonErrorCount: topCount,
      });
    }
    this.#lines = 0;
    this.#held = 0;
    this.#failed = 0;
    this.#messages.clear();
  }

  /** Containers currently failing (for tests and a metric). */
  get failingContainers(): number {
    return this.#failing.size;
  }
}
