/**
 * The worker side of the API objects channel (api-object-snapshot.ts): the newest snapshot the
 * main thread sent for each pod, read by the pod's sync. Written when an update message arrives
 * (before the pod worker queues it, so a sync started later never sees an older snapshot),
 * dropped when the pod worker forgets the pod.
 */
import type { PodApiObjects } from '../../src/shared/protocol/api-object-snapshot.js';

export class PodApiObjectStore {
  readonly #byPod = new Map<string, PodApiObjects>();

  /** Records the snapshot of an update (an update without one leaves the last snapshot). */
  observe(uid: string, objects: PodApiObjects | undefined): void {
    if (objects !== undefined) this.#byPod.set(uid, objects);
  }

  get(uid: string): PodApiObjects | undefined {
    return this.#byPod.get(uid);
  }

  forget(uid: string): void {
    this.#byPod.delete(uid);
  }

  get size(): number {
    return this.#byPod.size;
  }
}
