/**
 * The pod cache's lock and seqlock primitives (pod-cache-layout.ts: "Publication protocol" and
 * "A writer that dies"): a slot's LOCK word (CAS 0 → owner id) with its SEQ word (odd while the
 * holder writes), ALLOC_LOCK, lock-free seqlocked reads, and the bounded wait every one of them
 * uses, so a lock whose holder died is given up on (ERR_CACHE_LOCK_STUCK), never waited on
 * forever.
 */
import { CacheError } from './pod-cache-errors.js';
import { H, LOCK_STUCK_WAITS, S } from './pod-cache-layout.js';

/** The words and the owner id the locks need (PodCacheView satisfies it). */
export interface LockWords {
  readonly i32: Int32Array;
  /** This thread's owner id (threadId + 1). */
  readonly owner: number;
}

/**
 * Wait for a word to leave `value`: a short spin first (critical sections are µs), then 1 ms
 * Atomics.wait rounds, then ERR_CACHE_LOCK_STUCK. Returns the updated wait count.
 */
export function backoff(i32: Int32Array, idx: number, value: number, waits: number): number {
  if (waits < 64) return waits + 1;
  if (waits - 64 >= LOCK_STUCK_WAITS) {
    throw new CacheError('ERR_CACHE_LOCK_STUCK', `pod cache word ${idx} stayed locked for ${LOCK_STUCK_WAITS} ms`);
  }
  Atomics.wait(i32, idx, value, 1);
  return waits + 1;
}

/**
 * One consistent read of a slot under its seqlock: waits while a writer holds it (odd), runs
 * `read`, and runs it again if a write was published meanwhile. `read` must not write shared
 * memory (it may run several times; only its last run's result counts).
 */
export function seqRead<T>(i32: Int32Array, seqIdx: number, read: () => T): T {
  for (let waits = 0; ; ) {
    const s0 = Atomics.load(i32, seqIdx);
    if ((s0 & 1) === 1) {
      waits = backoff(i32, seqIdx, s0, waits);
      continue;
    }
    const result = read();
    if (Atomics.load(i32, seqIdx) === s0) return result;
  }
}

/** Take the slot's LOCK (owner id), then make SEQ odd. Returns the even SEQ before. */
export function acquireSlot(w: LockWords, seqIdx: number): number {
  const lockIdx = seqIdx + S.LOCK / 4;
  for (let waits = 0; ; ) {
    const held = Atomics.compareExchange(w.i32, lockIdx, 0, w.owner);
    if (held === 0) break;
    waits = backoff(w.i32, lockIdx, held, waits);
  }
  // Only LOCK holders move SEQ, so it is even here (recoverThread leaves it even too).
  return Atomics.add(w.i32, seqIdx, 1);
}

/** Publish (s+2) after a write; restore s when nothing was written (readers need not retry). */
export function releaseSlot(i32: Int32Array, seqIdx: number, s: number, wrote: boolean): void {
  Atomics.store(i32, seqIdx, wrote ? s + 2 : s);
  Atomics.store(i32, seqIdx + S.LOCK / 4, 0);
  Atomics.notify(i32, seqIdx);
  Atomics.notify(i32, seqIdx + S.LOCK / 4, 1);
}

export function lockAlloc(w: LockWords): void {
  for (let waits = 0; ; ) {
    const held = Atomics.compareExchange(w.i32, H.ALLOC_LOCK, 0, w.owner);
    if (held === 0) return;
    waits = backoff(w.i32, H.ALLOC_LOCK, held, waits);
  }
}

export function unlockAlloc(i32: Int32Array): void {
  Atomics.store(i32, H.ALLOC_LOCK, 0);
  Atomics.notify(i32, H.ALLOC_LOCK, 1);
}
