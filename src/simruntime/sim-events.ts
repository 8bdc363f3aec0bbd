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

  get subscriberCount(): number {
    return this.#listeners.size;
  }

  /** Returns the unsubscribe function. */
  subscribe(fn: EventListener): () => void {
    this.#listeners.add(fn);
    return () => void this.#listeners.delete(fn);
  }

  publish(ev: ContainerEventResponse): void {
    for (const fn of this.#listeners) fn(ev);
  }
}
