/**
 * The main side's bound on the main → worker path: per shard, at most one pending update per
 * pod. What the worker itself would keep (pod-workers.ts: newest wins, a kill pre-empts and is
 * never undone) is all that is kept here, so coalescing changes no outcome:
 *  - a kill absorbs anything after it except a kill, and two kills merge (removed if either
 *    is, the shorter grace, keepLogs only if both keep logs, the older terminalStatus if any);
 *  - otherwise the newer update wins, keeping 'create' as its type if the older one was a
 *    create (the first sync of a pod is a create, for the kubelet's metrics);
 *  - statusNotBeforeMs is the later of the two; previousStatus the newer one when present;
 *  - plegOnly stays only when both were PLEG-only syncs (any other reason makes it a full sync).
 * Insertion order is kept (Map), so pods are handed over in the order they first had work.
 */
import type { PodUpdateMessage } from '../../shared/protocol/pod-worker-protocol.js';

export function coalesceUpdates(older: PodUpdateMessage, newer: PodUpdateMessage): PodUpdateMessage {
  let out: PodUpdateMessage;
  if (older.updateType === 'kill' && newer.updateType === 'kill') {
    const a = older.kill ?? { removed: false, reason: 'kill' };
    const b = newer.kill ?? { removed: false, reason: 'kill' };
    const terminalStatus = a.terminalStatus ?? b.terminalStatus;
    const grace = a.gracePeriodSeconds === undefined ? b.gracePeriodSeconds : b.gracePeriodSeconds === undefined ? a.gracePeriodSeconds : Math.min(a.gracePeriodSeconds, b.gracePeriodSeconds);
    out = {
      ...newer,
      kill: {
        removed: a.removed || b.removed,
        reason: b.reason,
        ...(grace !== undefined ? { gracePeriodSeconds: grace } : {}),
        ...(a.keepLogs === true && b.keepLogs === true ? { keepLogs: true } : {}),
        ...(terminalStatus !== undefined ? { terminalStatus } : {}),
      },
    };
  } else if (older.updateType === 'kill') {
    out = { ...older };
  } else {
    out = { ...newer, updateType: older.updateType === 'create' && newer.updateType !== 'kill' ? 'create' : newer.updateType };
  }
  const notBefore = Math.max(older.statusNotBeforeMs ?? -Infinity, newer.statusNotBeforeMs ?? -Infinity);
  if (notBefore !== -Infinity) out.statusNotBeforeMs = notBefore;
  else delete out.statusNotBeforeMs;
  const prev = newer.previousStatus ?? older.previousStatus;
  if (prev !== undefined) out.previousStatus = prev;
  if (out.plegOnly === true && older.plegOnly !== true) delete out.plegOnly;
  return out;
}

/** Pending updates of one shard, one per pod. */
export class UpdateCoalescer {
  readonly #pending = new Map<string, PodUpdateMessage>();

  add(msg: PodUpdateMessage): void {
    const prev = this.#pending.get(msg.uid);
    this.#pending.set(msg.uid, prev ? coalesceUpdates(prev, msg) : msg);
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Takes every pending update (in first-pending order) and empties the buffer. */
  drain(): PodUpdateMessage[] {
    const out = [...this.#pending.values()];
    this.#pending.clear();
    return out;
  }
}
