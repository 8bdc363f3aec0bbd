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

export function snapshotOf(pod: RelistPod, previous?: PodSnapshot): PodSnapshot {
  // Steady state (the listing shows exactly the states of the previous snapshot): share its
  // map, so a relist of thousands of unchanged pods allocates no map per pod. Maps are never
  // mutated after they are built, so sharing one between snapshots is safe.
  // The CRI client's list memo hands back the very object for an item whose bytes did not
  // change, so the same objects in the same order are the same states without a lookup.
  if (previous !== undefined && (sameObjects(pod, previous.pod) || sameStates(pod, previous.states))) return { id: pod.id, states: previous.states, pod };
  const states = new Map<string, PlegContainerState>();
  for (const c of pod.containers) states.set(c.id, containerPlegState(c.state));
  for (const s of pod.sandboxes) if (!states.has(s.id)) states.set(s.id, sandboxPlegState(s.state));
  return { id: pod.id, states, pod };
}

/** Whether both listings hold the same objects in the same order (identity, not equality). */
function sameObjects(a: RelistPod, b: RelistPod): boolean {
  if (a.containers.length !== b.containers.length || a.sandboxes.length !== b.sandboxes.length) return false;
  for (let i = 0; i < a.containers.length; i++) if (a.containers[i] !== b.containers[i]) return false;
  for (let i = 0; i < a.sandboxes.length; i++) if (a.sandboxes[i] !== b.sandboxes[i]) return false;
  return true;
}

/**
 * Whether building a snapshot of `pod` would give exactly `states` (same ids, same states).
 * Every listed id must be in `states` with the state it would get, and the listed ids must be
 * as many as the entries: so the listing is counted by distinct ids (an id listed twice — a
 * broken runtime — is never taken for the steady case; a pod has a handful of objects, so the
 * quadratic duplicate checks cost less than a map).
 */
function sameStates(pod: RelistPod, states: ReadonlyMap<string, PlegContainerState>): boolean {
  let n = 0;
  const cs = pod.containers;
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    for (let j = 0; j < i; j++) if (cs[j]!.id === c.id) return false;
    if (states.get(c.id) !== containerPlegState(c.state)) return false;
    n++;
  }
  const ss = pod.sandboxes;
  for (let i = 0; i < ss.length; i++) {
    const s = ss[i]!;
    for (let j = 0; j < i; j++) if (ss[j]!.id === s.id) return false;
    // An id listed as a container too keeps the container's state (snapshotOf's rule).
    if (cs.some((c) => c.id === s.id)) continue;
    if (states.get(s.id) !== sandboxPlegState(s.state)) return false;
    n++;
  }
  return n === states.size;
}

/** No events: shared, never mutated (callers only read and spread it). */
const NO_EVENTS: readonly PodLifecycleEvent[] = Object.freeze([]);

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
      if (r) r.current = snapshotOf(pod, r.old);
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
  computeEvents(uid: string): readonly PodLifecycleEvent[] {
    const r = this.#records.get(uid);
    if (!r) return NO_EVENTS;
    // Unchanged since the delivered snapshot (the common case of a steady relist): no events,
    // without building the union of ids.
    if (r.old !== undefined && r.current !== undefined && r.old.states === r.current.states) return NO_EVENTS;
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
