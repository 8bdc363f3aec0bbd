/**
 * Termination ordering for pods with sidecars (the kubelet's terminationOrdering,
 * kuberuntime_termination_order.go): when a pod is killed, every sidecar (restartable init
 * container) waits until all regular containers have exited, and each sidecar also waits for
 * the sidecar after it in spec order, so sidecars stop in reverse order, after the regular
 * containers. A wait never exceeds the container's remaining grace period: the pod as a whole
 * still ends within its grace period (killContainer subtracts the time waited).
 *
 * Invariants: one latch per container name of the spec; a container that was not running when
 * the ordering was built is released from the start (nothing waits on it); a latch is released
 * at most once (containerTerminated is idempotent). Regular init containers neither wait nor are
 * waited for. Time comes from the injected clock.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../src/shared/clock/clock.js';
import { appContainers, initContainers, isRestartableInitContainer } from './pod-spec.js';

interface Latch {
  readonly done: Promise<void>;
  release: () => void;
}

function latch(released: boolean): Latch {
  let release = (): void => {};
  const done = released ? Promise.resolve() : new Promise<void>((resolve) => (release = resolve));
  return { done, release };
}

export class TerminationOrdering {
  readonly #clock: Clock;
  /** By container name: released once that container terminated (or was not running). */
  readonly #terminated = new Map<string, Latch>();
  /** By container name: what must be released before that container may be stopped. */
  readonly #prereqs = new Map<string, Promise<void>[]>();

  /** `runningNames`: the containers of the pod that are running now (the ones the kill stops). */
  constructor(pod: V1Pod, runningNames: Iterable<string>, clock: Clock) {
    this.#clock = clock;
    const running = new Set(runningNames);
    const regular: Promise<void>[] = [];
    for (const c of appContainers(pod)) {
      const l = latch(!running.has(c.name));
      this.#terminated.set(c.name, l);
      regular.push(l.done);
    }
    const inits = initContainers(pod);
    let laterSidecar: string | undefined;
    for (let i = inits.length - 1; i >= 0; i--) {
      const c = inits[i]!;
      this.#terminated.set(c.name, latch(!running.has(c.name)));
      if (!isRestartableInitContainer(c)) continue;
      const waits = [...regular];
      if (laterSidecar !== undefined) waits.push(this.#terminated.get(laterSidecar)!.done);
      this.#prereqs.set(c.name, waits);
      laterSidecar = c.name;
    }
  }

  /**
   * Resolves when it is `name`'s turn to be stopped, or when `graceSeconds` ran out, or at once
   * when `graceSeconds` ≤ 0 or `name` waits for nothing. Returns the milliseconds waited.
   * Rejects only when `signal` aborts.
   */
  async waitForTurn(name: string, graceSeconds: number, signal: AbortSignal): Promise<number> {
    const waits = this.#prereqs.get(name);
    if (graceSeconds <= 0 || waits === undefined || waits.length === 0) return 0;
    const began = this.#clock.monotonic();
    const timer = new AbortController();
    const onAbort = (): void => timer.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const expired = this.#clock.sleep(graceSeconds * 1000, timer.signal).then(() => undefined, () => undefined);
      await Promise.race([Promise.all(waits), expired]);
      if (signal.aborted) throw signal.reason;
      return this.#clock.monotonic() - began;
    } finally {
      signal.removeEventListener('abort', onAbort);
      timer.abort(new Error('turn came'));
    }
  }

  /** `name` has exited: containers waiting on it may go. Idempotent. */
  containerTerminated(name: string): void {
    this.#terminated.get(name)?.release();
  }
}
