/**
 * The PLEG's pod records (generic.go podRecords): per pod, the snapshot of the last relist
 * whose events were delivered (`old`) and of the current relist (`current`). A record's `old`
 * advances only when the pod's cache update succeeded, so a failed inspection makes the same
 * change show up again next relist.
 */
import type { RelistPod } from '../runtime-status/bulk-pod-status.js';
import type { PodIdentity } from '../runtime-status/cri-status-convert.js';
import type { PodLifecycleEvent } from '../../src/shared/pleg/pod-lifecycle-event.js';
import { containerPlegState, generateEvents, sandboxPlegState, type PlegContainerState } from './pleg-events.js';

/** What a relist saw of one pod: identity and each container's and sandbox's pleg state. */
export interface PodSnapshot {
  id: PodIdentity;
  /** Container and sandbox ids → state, in list order (containers first, then sandboxes). */
  states: Map<string, PlegContainerState>;
  /** The listed objects, for building the status. */
  pod: RelistPod;
}

export function snapshotOf(pod: RelistPod): PodSnapshot {
  const states = new Map<string, PlegContainerState>();
  for (const c of pod.containers) states.set(c.id, containerPlegState(c.state));
  for (const s of pod.sandboxes) if (!states.has(s.id)) states.set(s.id, sandboxPlegState(s.state));
  return { id: pod.id, states, pod };
}

interface PodRecord {
  old: PodSnapshot | undefined;
  current: PodSnapshot | undefined;
}

export class PodRecords {
  readonly #records = new Map<string, PodRecord>();

  /** Replace every current snapshot with this relist's (pods not listed get none). */
  setCurrent(pods: ReadonlyMap<string, RelistPod>): void {
    for (const r of this.#records.values()) r.current = undefined;
    for (const [uid, pod] of pods) {
      const r = this.#records.get(uid);
      if (r) r.current = snapshotOf(pod);
      else this.#records.set(uid, { old: undefined, current: snapshotOf(pod) });
    }
  }

  /** Whether the pod has a record (old or current). */
  has(uid: string): boolean {
    return this.#records.has(uid);
  }

  uids(): string[] {
    return [...this.#records.keys()];
  }

  getOld(uid: string): PodSnapshot | undefined {
    return this.#records.get(uid)?.old;
  }

  getCurrent(uid: string): PodSnapshot | undefined {
    return this.#records.get(uid)?.current;
  }

  /** The pod's events between old and current, over every id in either (containers, then sandboxes). */
  computeEvents(uid: string): PodLifecycleEvent[] {
    const r = this.#records.get(uid);
    if (!r) return [];
    const ids = new Set<string>([...(r.old?.states.keys() ?? []), ...(r.current?.states.keys() ?? [])]);
    const events: PodLifecycleEvent[] = [];
    for (const cid of ids) {
      const o = r.old?.states.get(cid) ?? 'non-existent';
      const n = r.current?.states.get(cid) ?? 'non-existent';
      events.push(...generateEvents(uid, cid, o, n));
    }
    return events;
  }

  /** The pod's events were delivered: current becomes old (a pod no longer listed is dropped). */
  update(uid: string): void {
    const r = this.#records.get(uid);
    if (!r) return;
    if (!r.current) {
      this.#records.delete(uid);
      return;
    }
    r.old = r.current;
    r.current = undefined;
  }

  /**
   * Take the current snapshot as already delivered (old := current, current kept): a pod known
   * to be up to date in the cache when this PLEG starts (GenericPleg's resync from the cache).
   */
  seed(uid: string): void {
    const r = this.#records.get(uid);
    if (r?.current) r.old = r.current;
  }

  get size(): number {
    return this.#records.size;
  }
}
