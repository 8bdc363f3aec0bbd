/**
 * Overflow chains: entries larger than one slot ("Variable-size entries" and the publication
 * protocol in pod-cache-layout.ts, the one description of the words used here). A head slot's
 * payload continues in overflow slots taken from FREE; the head's SEQ guards the whole chain.
 *
 * Who calls what, and the locks each needs:
 *   reserveOverflow   takes ALLOC_LOCK (never called while holding a slot LOCK);
 *   writeChain        with the head's LOCK held (SEQ odd); the caller marks an old chain it
 *                     replaces as reserved (RESERVED = owner) first;
 *   chainSlots        with the head's LOCK held, or ALLOC_LOCK + head LOCK (delete); fills
 *                     the view's chainScratch (no allocation inside a critical section);
 *   releaseReserved   after the head's LOCK is released: clears reservation markers;
 *   freeOverflow      takes ALLOC_LOCK; pushes slots this thread reserved on FREE;
 *   freeOverflowLocked  the same, with ALLOC_LOCK already held;
 *   copyEntry         lock-free, inside a seqRead of the head (bounds-checks everything).
 */
import { CacheError } from './pod-cache-errors.js';
import { growLocked } from './pod-cache-growth.js';
import { H, OVERFLOW_DATA, OVERFLOW_MARK, RESERVED, S } from './pod-cache-layout.js';
import { lockAlloc, unlockAlloc } from './pod-cache-locks.js';
import type { PodCacheView } from './pod-cache-view.js';

/** Overflow slots an entry of `len` payload bytes needs (0 when it fits its head). */
export function overflowSlotsFor(v: PodCacheView, len: number): number {
  const head = v.layout.bytesPerSlot;
  return len <= head ? 0 : Math.ceil((len - head) / v.layout.overflowBytes);
}

/**
 * Pop `n` slots from FREE (growing the cache as needed), each marked overflow and reserved by
 * this thread (RESERVED = owner). Throws ERR_CACHE_FULL, having reserved nothing, when the cache
 * cannot hold that many more slots.
 */
export function reserveOverflow(v: PodCacheView, n: number): number[] {
  const out: number[] = [];
  if (n === 0) return out;
  lockAlloc(v);
  try {
    const free = v.layout.freeByte / 4;
    while (out.length < n) {
      let top = v.i32[H.FREE_TOP] ?? 0;
      if (top === 0) top = growLocked(v);
      if (top === 0) {
        // Put back what was taken: nothing is reserved on failure.
        for (const slot of out) {
          const base = v.slotBase(slot);
          Atomics.store(v.i32, base / 4 + S.UID_LEN / 4, 0);
          Atomics.store(v.i32, base / 4 + RESERVED / 4, 0);
          const t = v.i32[H.FREE_TOP] ?? 0;
          v.i32[free + t] = slot;
          Atomics.store(v.i32, H.FREE_TOP, t + 1);
        }
        throw new CacheError('ERR_CACHE_FULL', `pod cache full: no ${n} overflow slots left (${v.cap} slots, at most ${v.layout.maxCapacity})`);
      }
      const slot = v.i32[free + top - 1] ?? -1;
      Atomics.store(v.i32, H.FREE_TOP, top - 1);
      const w = v.slotBase(slot) / 4;
      Atomics.store(v.i32, w + RESERVED / 4, v.owner);
      v.i32[w + S.PAYLOAD_LEN / 4] = 0;
      v.i32[w + S.NEXT / 4] = 0;
      Atomics.store(v.i32, w + S.UID_LEN / 4, OVERFLOW_MARK);
      out.push(slot);
    }
    Atomics.add(v.i32, H.OVERFLOW_USED, n);
    return out;
  } finally {
    unlockAlloc(v.i32);
  }
}

/**
 * With the head's LOCK held: the head's current chain (CHAIN slots from NEXT) into
 * v.chainScratch; returns its length. Allocates nothing (it runs inside critical sections). A
 * chain that leaves the buffer, is longer than any entry can be, or meets a slot that is not
 * overflow is corrupt (its writer held this lock).
 */
export function chainSlots(v: PodCacheView, headBase: number): number {
  const w = headBase / 4;
  const n = v.i32[w + S.CHAIN / 4] ?? 0;
  const out = v.chainScratch;
  if (n < 0 || n > out.length) throw new CacheError('ERR_CACHE_CORRUPT', `pod cache chain of ${n} slots is longer than any entry`);
  let next = Atomics.load(v.i32, w + S.NEXT / 4);
  for (let k = 0; k < n; k++) {
    const slot = next - 1;
    if (slot < 0 || slot >= v.refresh() || v.i32[v.slotBase(slot) / 4 + S.UID_LEN / 4] !== OVERFLOW_MARK) {
      throw new CacheError('ERR_CACHE_CORRUPT', `pod cache chain of ${n} slots broken at hop ${k}`);
    }
    out[k] = slot;
    next = v.i32[v.slotBase(slot) / 4 + S.NEXT / 4] ?? 0;
  }
  return n;
}

/**
 * With the head's LOCK held (SEQ odd): write `payload` as the head's entry at `ts`, its tail in
 * the first `n` slots of `chain` (n = overflowSlotsFor(payload.length), in order). Segments
 * first, the head last; NEXT with Atomics.store so a recovery rebuild reading it sees the old
 * or the new chain. Allocates nothing.
 */
export function writeChain(v: PodCacheView, headBase: number, payload: Buffer, chain: ArrayLike<number>, n: number, ts: number): void {
  const head = Math.min(payload.length, v.layout.bytesPerSlot);
  let off = head;
  for (let k = 0; k < n; k++) {
    const base = v.slotBase(chain[k] ?? -1);
    const seg = Math.min(payload.length - off, v.layout.overflowBytes);
    payload.copy(v.bytes, base + OVERFLOW_DATA, off, off + seg);
    v.i32[base / 4 + S.PAYLOAD_LEN / 4] = seg;
    Atomics.store(v.i32, base / 4 + S.NEXT / 4, k + 1 < n ? (chain[k + 1] ?? -1) + 1 : 0);
    off += seg;
  }
  const w = headBase / 4;
  v.f64[(headBase + S.TIMESTAMP) / 8] = ts;
  payload.copy(v.bytes, headBase + S.PAYLOAD, 0, head);
  v.i32[w + S.PAYLOAD_LEN / 4] = payload.length;
  v.i32[w + S.CHAIN / 4] = n;
  Atomics.store(v.i32, w + S.NEXT / 4, n > 0 ? (chain[0] ?? -1) + 1 : 0);
}

/** After the head that reaches them was published: clear this thread's reservation markers. */
export function releaseReserved(v: PodCacheView, slots: readonly number[]): void {
  for (const slot of slots) Atomics.compareExchange(v.i32, v.slotBase(slot) / 4 + RESERVED / 4, v.owner, 0);
}

/** Push unreachable overflow slots reserved by this thread on FREE (takes ALLOC_LOCK). */
export function freeOverflow(v: PodCacheView, slots: ArrayLike<number>): void {
  if (slots.length === 0) return;
  lockAlloc(v);
  try {
    freeOverflowLocked(v, slots, v.owner);
  } finally {
    unlockAlloc(v.i32);
  }
}

/**
 * Under ALLOC_LOCK: push overflow slots on FREE. `reservedBy`: only slots still carrying that
 * reservation (a recovery may already have freed a dead writer's); 0: unconditionally (delete,
 * whose chain it just unlinked while holding ALLOC_LOCK and the head's LOCK).
 */
export function freeOverflowLocked(v: PodCacheView, slots: ArrayLike<number>, reservedBy: number): void {
  const free = v.layout.freeByte / 4;
  let freed = 0;
  for (let k = 0; k < slots.length; k++) {
    const slot = slots[k] ?? -1;
    const w = v.slotBase(slot) / 4;
    if (v.i32[w + S.UID_LEN / 4] !== OVERFLOW_MARK) continue;
    if (reservedBy !== 0 && Atomics.load(v.i32, w + RESERVED / 4) !== reservedBy) continue;
    v.i32[w + S.PAYLOAD_LEN / 4] = 0;
    v.i32[w + S.NEXT / 4] = 0;
    Atomics.store(v.i32, w + S.UID_LEN / 4, 0);
    Atomics.store(v.i32, w + RESERVED / 4, 0);
    const top = v.i32[H.FREE_TOP] ?? 0;
    v.i32[free + top] = slot;
    Atomics.store(v.i32, H.FREE_TOP, top + 1);
    freed++;
  }
  Atomics.sub(v.i32, H.OVERFLOW_USED, freed);
}

/**
 * Inside a seqRead of the head at `headBase` (lock-free): copy its `len` payload bytes into
 * `into` (at least `len` long). Returns false when the chain is not well formed — a writer
 * replaced it meanwhile (the caller's SEQ check then retries), or it is corrupt (SEQ stable).
 * Writes no shared memory.
 */
export function copyEntry(v: PodCacheView, headBase: number, len: number, into: Buffer): boolean {
  const head = Math.min(len, v.layout.bytesPerSlot);
  v.bytes.copy(into, 0, headBase + S.PAYLOAD, headBase + S.PAYLOAD + head);
  let off = head;
  let next = Atomics.load(v.i32, headBase / 4 + S.NEXT / 4);
  const hops = overflowSlotsFor(v, len);
  for (let k = 0; off < len; k++) {
    const slot = next - 1;
    if (k >= hops || slot < 0 || (slot >= v.cap && slot >= v.refresh())) return false;
    const base = v.layout.slotsByte + slot * v.layout.slotStride;
    const w = base / 4;
    const seg = v.i32[w + S.PAYLOAD_LEN / 4] ?? 0;
    if (v.i32[w + S.UID_LEN / 4] !== OVERFLOW_MARK || seg <= 0 || seg > v.layout.overflowBytes || off + seg > len) return false;
    v.bytes.copy(into, off, base + OVERFLOW_DATA, base + OVERFLOW_DATA + seg);
    off += seg;
    next = v.i32[w + S.NEXT / 4] ?? 0;
  }
  return true;
}
