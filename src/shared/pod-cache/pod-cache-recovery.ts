/**
 * Recovery of a dead thread's cache locks ("A writer that dies" in pod-cache-layout.ts): the
 * main thread, told by a thread's 'exit' event, takes over every lock word holding the dead
 * thread's owner id and repairs what it guarded.
 */
import { CacheError } from './pod-cache-errors.js';
import { H, MAX_UID_BYTES, OVERFLOW_MARK, RESERVED, S } from './pod-cache-layout.js';
import { lockAlloc, unlockAlloc } from './pod-cache-locks.js';
import { rebuildAllocLocked } from './pod-cache-slots.js';
import type { StatusEncoder } from './pod-status-codec.js';
import type { PodCacheView } from './pod-cache-view.js';
import { emptyPodStatus } from './runtime-pod-status.js';

/**
 * Release and repair every lock held by a thread that has EXITED (its 'exit' event was seen;
 * calling this for a live thread corrupts the cache). Returns the number of lock words taken
 * over (0: it held none).
 */
export function recoverThread(v: PodCacheView, encoder: StatusEncoder, deadThreadId: number): number {
  const dead = deadThreadId + 1;
  if (dead === v.owner) throw new CacheError('ERR_CACHE_INVALID_OPTION', 'recoverThread: a thread cannot recover itself');
  const i32 = v.i32;
  let recovered = 0;
  const allocTaken = Atomics.compareExchange(i32, H.ALLOC_LOCK, dead, v.owner) === dead;
  if (allocTaken) recovered++;
  // Set when a head was repaired or a reservation dropped: FREE and the counters are rebuilt.
  let chainsTouched = false;
  const cap = v.refresh();
  for (let slot = 0; slot < cap; slot++) {
    const base = v.slotBase(slot);
    const seqIdx = base / 4;
    const lockIdx = seqIdx + S.LOCK / 4;
    const ulen = i32[seqIdx + S.UID_LEN / 4] ?? 0;
    if (ulen === OVERFLOW_MARK && Atomics.compareExchange(i32, seqIdx + RESERVED / 4, dead, 0) === dead) {
      // A reservation (reserved, or unlinked and not yet freed): dropped; the rebuild below
      // keeps the slot iff a head's chain reaches it.
      recovered++;
      chainsTouched = true;
    }
    if (Atomics.compareExchange(i32, lockIdx, dead, v.owner) !== dead) continue;
    recovered++;
    if (ulen === OVERFLOW_MARK) {
      // A writer that looked the slot up as a head died holding it: nothing of it was written.
      Atomics.store(i32, seqIdx, Atomics.load(i32, seqIdx) & ~1);
      Atomics.store(i32, lockIdx, 0);
      Atomics.notify(i32, lockIdx);
      continue;
    }
    const s = Atomics.load(i32, seqIdx);
    if ((s & 1) === 1) {
      const len = i32[seqIdx + S.PAYLOAD_LEN / 4] ?? 0;
      // The chain may be torn with the payload: the head keeps none and no oversize flag; the
      // rebuild below frees the chain and recounts OVERSIZE_NOW (the dead writer may have died
      // between a flag and its count).
      chainsTouched = true;
      i32[seqIdx + S.CHAIN / 4] = 0;
      i32[seqIdx + S.FLAGS / 4] = 0;
      Atomics.store(i32, seqIdx + S.NEXT / 4, 0);
      if (ulen > 0 && ulen <= MAX_UID_BYTES && len > 0) {
        // The payload may be torn: replace it by an error entry at the stored timestamp.
        const uid = v.bytes.toString('utf8', base + S.UID, base + S.UID + ulen);
        const payload = encoder.encode(emptyPodStatus(uid), { code: 'ERR_CACHE_WRITER_DIED', message: `thread ${deadThreadId} died while writing this entry` });
        if (payload.length <= v.layout.bytesPerSlot) {
          payload.copy(v.bytes, base + S.PAYLOAD);
          i32[seqIdx + S.PAYLOAD_LEN / 4] = payload.length;
        } else {
          i32[seqIdx + S.PAYLOAD_LEN / 4] = 0;
        }
      } else if (ulen < 0 || ulen > MAX_UID_BYTES) {
        i32[seqIdx + S.UID_LEN / 4] = 0;
        i32[seqIdx + S.PAYLOAD_LEN / 4] = 0;
      }
      Atomics.store(i32, seqIdx, s + 1);
    }
    Atomics.store(i32, lockIdx, 0);
    Atomics.notify(i32, seqIdx);
    Atomics.notify(i32, lockIdx);
  }
  if (allocTaken || chainsTouched) {
    if (!allocTaken) lockAlloc(v);
    try {
      rebuildAllocLocked(v);
    } finally {
      unlockAlloc(i32);
    }
  }
  if (recovered > 0) {
    Atomics.add(i32, H.RECOVERED, 1);
    v.countEntryWrite();
    v.publish();
  }
  return recovered;
}
