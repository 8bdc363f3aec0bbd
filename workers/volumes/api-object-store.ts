/**
 * The worker side of the API objects channel (api-object-snapshot.ts): the newest snapshot the
 * main thread sent for each pod, read by the pod's sync. Written when an update message arrives
 * (before the pod worker queues it, so a sync started later never sees an older snapshot),
 * dropped when the pod worker forgets the pod.
 */
import type { PodApiObjects } from '../../src/shared/protocol/api-object-snapshot.js';
import { isDeepStrictEqual } from 'node:util';

export class PodApiObjectStore {
  readonly #byPod = new Map<string, PodApiObjects>();

  /**
   * Records the snapshot of an update (an update without one leaves the last snapshot). Returns
   * whether the pod's objects changed (a first snapshot is a change; an equal one is not).
   * Node's comparison, not shared/immutable's deepEqual: snapshots hold Maps (and secret bytes),
   * which that JSON-shaped one does not look into; this runs once per update, in cluster mode.
   */
  observe(uid: string, objects: PodApiObjects | undefined): boolean {
    if (objects === undefined) return false;
    const before = this.#byPod.get(uid);
    this.#byPod.set(uid, objects);
    return before === undefined || !isDeepStrictEqual(before, objects);
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
