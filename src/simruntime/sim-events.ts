/**
 * Fan-out of container lifecycle events to GetContainerEvents streams. The runtime core
 * publishes; each open stream is a subscriber. Publishing is synchronous and in order, so a
 * subscriber sees CREATED → STARTED → STOPPED → DELETED for a container in that order.
 * Like containerd 1.7+, sandbox lifecycle is reported too, with containerId = sandbox id
 * (STARTED on RunPodSandbox, STOPPED on StopPodSandbox, DELETED on RemovePodSandbox).
 */
import type { ContainerEventResponse } from '../shared/cri/cri-types.js';

export type EventListener = (ev: ContainerEventResponse) => void;

export class SimEventHub {
  readonly #listeners = new Set<EventListener>();
  /** Waiters for a subscriber count (whenSubscribers), resolved as streams open and close. */
  #countWaiters: { n: number; resolve: () => void }[] = [];

  get subscriberCount(): number {
    return this.#listeners.size;
  }

  /** Returns the unsubscribe function. */
  subscribe(fn: EventListener): () => void {
    this.#listeners.add(fn);
    this.#countChanged();
    return () => {
      if (this.#listeners.delete(fn)) this.#countChanged();
    };
  }

  /** Resolves when exactly `n` streams are open (at once if they are now). */
  whenSubscribers(n: number): Promise<void> {
    if (this.#listeners.size === n) return Promise.resolve();
    return new Promise<void>((resolve) => this.#countWaiters.push({ n, resolve }));
  }

  #countChanged(): void {
    const size = this.#listeners.size;
    const due = this.#countWaiters.filter((w) => w.n === size);
    if (due.length === 0) return;
    this.#countWaiters = this.#countWaiters.filter((w) => w.n !== size);
    for (const w of due) w.resolve();
  }

  publish(ev: ContainerEventResponse): void {
    for (const fn of this.#listeners) fn(ev);
  }
}
