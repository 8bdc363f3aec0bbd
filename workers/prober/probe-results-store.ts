/**
 * The prober's results cache (the kubelet's prober/results.Manager, one per thread for all three
 * probe types): the latest result per container instance (CRI container id) and probe type.
 *
 * Ownership: written only by probe workers and the prober manager on this thread; read by the
 * runtime logic on the same thread through {@link ProbeResultsReader}. No locking: one thread.
 * Entries are created when a worker adopts a container instance and deleted when it lets go of
 * it (new instance, worker stopped, pod removed), so the map never outgrows the live containers.
 */
import type { ProbeResult, ProbeType } from '../../src/shared/protocol/probe-update.js';
import type { ProbeResultsReader } from './probe-results.js';

interface Entry {
  liveness: ProbeResult | undefined;
  readiness: ProbeResult | undefined;
  startup: ProbeResult | undefined;
}

export class ProbeResultsStore implements ProbeResultsReader {
  readonly #entries = new Map<string, Entry>();

  get(containerId: string, type: ProbeType): ProbeResult {
    return this.#entries.get(containerId)?.[type] ?? 'unknown';
  }

  /** Whether a result of `type` is stored for the container (the kubelet's `Get`'s ok). */
  has(containerId: string, type: ProbeType): boolean {
    return this.#entries.get(containerId)?.[type] !== undefined;
  }

  /** Store `result`; returns whether the stored value changed (including from none). */
  set(containerId: string, type: ProbeType, result: ProbeResult): boolean {
    let e = this.#entries.get(containerId);
    if (e === undefined) {
      e = { liveness: undefined, readiness: undefined, startup: undefined };
      this.#entries.set(containerId, e);
    }
    if (e[type] === result) return false;
    e[type] = result;
    return true;
  }

  /** Forget the result of `type` for the container. */
  remove(containerId: string, type: ProbeType): void {
    const e = this.#entries.get(containerId);
    if (e === undefined) return;
    e[type] = undefined;
    if (e.liveness === undefined && e.readiness === undefined && e.startup === undefined) this.#entries.delete(containerId);
  }

  /** Number of container instances with at least one result (for tests and leak checks). */
  get size(): number {
    return this.#entries.size;
  }
}
