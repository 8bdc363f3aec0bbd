/**
 * Slot ownership and the uid index ("Slot ownership" and INDEX/FREE in pod-cache-layout.ts):
 * a pod gets a slot on its first set and loses it on delete, both under ALLOC_LOCK; the index is
 * rebuilt (INDEX_SEQ odd → even) when tombstones pile up, and rebuilt with FREE and the counters
 * from the slots when a dead thread held ALLOC_LOCK. Every function here that ends in "Locked"
 * must be called with ALLOC_LOCK held; the others take it.
 */
import { fnv1a32Bytes } from '../hash/fnv1a.js';
import { chainSlots } from './pod-cache-chain.js';
import { CacheError } from './pod-cache-errors.js';
import { growLocked } from './pod-cache-growth.js';
import { freeOverflowLocked } from './pod-cache-chain.js';
import { FLAG_OVERSIZE, H, MAX_UID_BYTES, OVERFLOW_MARK, RESERVED, S } from './pod-cache-layout.js';
import { acquireSlot, lockAlloc, releaseSlot, unlockAlloc } from './pod-cache-locks.js';
import type { PodCacheView } from './pod-cache-view.js';

/** The uid's index bucket and slot (-1 when absent), and the first bucket a new uid may take. */
export interface BucketSearch {
  bucket: number;
  slot: number;
  firstFree: number;
}

/** Under ALLOC_LOCK (slots cannot change owner): find the uid in uidScratch (`ulen` bytes). */
export function findBucketLocked(v: PodCacheView, ulen: number): BucketSearch {
  const mask = v.layout.indexSize - 1;
  const index = v.layout.indexByte / 4;
  let firstFree = -1;
  let b = fnv1a32Bytes(v.uidScratch, ulen) & mask;
  for (let n = 0; n <= mask; n++, b = (b + 1) & mask) {
    const w = v.i32[index + b] ?? 0;
    if (w === 0) return { bucket: -1, slot: -1, firstFree: firstFree < 0 ? b : firstFree };
    if (w < 0) {
      if (firstFree < 0) firstFree = b;
      continue;
    }
    if (v.slotNames(v.slotBase(w - 1), ulen)) return { bucket: b, slot: w - 1, firstFree };
  }
  return { bucket: -1, slot: -1, firstFree };
}

/**
 * A slot naming the uid in uidScratch: the existing one, or a fresh one from FREE (growing the
 * cache when FREE is empty). Throws ERR_CACHE_FULL (FULL_TOTAL += 1) when it cannot grow.
 */
export function slotFor(v: PodCacheView, ulen: number): number {
  lockAlloc(v);
  try {
    const found = findBucketLocked(v, ulen);
    if (found.slot >= 0) return found.slot;
    let top = v.i32[H.FREE_TOP] ?? 0;
    if (top === 0) top = growLocked(v);
    if (top === 0) {
      Atomics.add(v.i32, H.FULL_TOTAL, 1);
      throw new CacheError('ERR_CACHE_FULL', `pod cache full: all ${v.cap} slots hold pods (at most ${v.layout.maxCapacity})`);
    }
    const slot = v.i32[v.layout.freeByte / 4 + top - 1] ?? -1;
    Atomics.store(v.i32, H.FREE_TOP, top - 1);
    const base = v.slotBase(slot);
    const seqIdx = base / 4;
    const s = acquireSlot(v, seqIdx);
    v.uidScratch.copy(v.bytes, base + S.UID, 0, ulen);
    v.i32[seqIdx + S.UID_LEN / 4] = ulen;
    v.i32[seqIdx + S.PAYLOAD_LEN / 4] = 0;
    v.i32[seqIdx + S.CHAIN / 4] = 0;
    v.i32[seqIdx + S.FLAGS / 4] = 0;
    Atomics.store(v.i32, seqIdx + S.NEXT / 4, 0);
    releaseSlot(v.i32, seqIdx, s, true);
    if (found.firstFree < 0) throw new CacheError('ERR_CACHE_CORRUPT', 'pod cache index has no free bucket');
    const index = v.layout.indexByte / 4;
    if ((v.i32[index + found.firstFree] ?? 0) < 0) Atomics.sub(v.i32, H.TOMBSTONES, 1);
    Atomics.store(v.i32, index + found.firstFree, slot + 1);
    Atomics.add(v.i32, H.SLOTS_USED, 1);
    return slot;
  } finally {
    unlockAlloc(v.i32);
  }
}

/**
 * The uid in uidScratch loses its slot (entry and chain cleared under the seqlock, bucket →
 * tombstone, the slot and its overflow slots → FREE).
 */
export function freeSlot(v: PodCacheView, ulen: number): void {
  lockAlloc(v);
  try {
    const found = findBucketLocked(v, ulen);
    if (found.bucket < 0) return;
    const base = v.slotBase(found.slot);
    const seqIdx = base / 4;
    const s = acquireSlot(v, seqIdx);
    const oldLen = v.i32[seqIdx + S.PAYLOAD_LEN / 4] ?? 0;
    let chain = 0;
    try {
      chain = chainSlots(v, base);
    } catch (err) {
      // A corrupt chain is left to a rebuild; the head is freed regardless.
      if (!(err instanceof CacheError)) throw err;
    }
    v.i32[seqIdx + S.UID_LEN / 4] = 0;
    v.i32[seqIdx + S.PAYLOAD_LEN / 4] = 0;
    v.i32[seqIdx + S.CHAIN / 4] = 0;
    Atomics.store(v.i32, seqIdx + S.NEXT / 4, 0);
    if (((v.i32[seqIdx + S.FLAGS / 4] ?? 0) & FLAG_OVERSIZE) !== 0) Atomics.sub(v.i32, H.OVERSIZE_NOW, 1);
    v.i32[seqIdx + S.FLAGS / 4] = 0;
    releaseSlot(v.i32, seqIdx, s, true);
    freeOverflowLocked(v, v.chainScratch.subarray(0, chain), 0);
    Atomics.add(v.i32, H.BYTES_USED, -oldLen);
    Atomics.store(v.i32, v.layout.indexByte / 4 + found.bucket, -1);
    const top = v.i32[H.FREE_TOP] ?? 0;
    v.i32[v.layout.freeByte / 4 + top] = found.slot;
    Atomics.store(v.i32, H.FREE_TOP, top + 1);
    Atomics.sub(v.i32, H.SLOTS_USED, 1);
    if (Atomics.add(v.i32, H.TOMBSTONES, 1) + 1 > v.layout.indexSize / 4) rebuildIndexLocked(v);
  } finally {
    unlockAlloc(v.i32);
  }
}

/** Drop tombstones: re-insert every owned slot. Readers retry while INDEX_SEQ is odd. */
function rebuildIndexLocked(v: PodCacheView): void {
  Atomics.add(v.i32, H.INDEX_SEQ, 1);
  fillIndexLocked(v);
  Atomics.add(v.i32, H.INDEX_SEQ, 1);
  Atomics.notify(v.i32, H.INDEX_SEQ);
}

/** Under ALLOC_LOCK with INDEX_SEQ odd: every bucket from the owned slots, no tombstones. */
function fillIndexLocked(v: PodCacheView): void {
  const i32 = v.i32;
  const index = v.layout.indexByte / 4;
  const mask = v.layout.indexSize - 1;
  for (let b = 0; b <= mask; b++) Atomics.store(i32, index + b, 0);
  const cap = v.refresh();
  for (let slot = 0; slot < cap; slot++) {
    const base = v.slotBase(slot);
    const ulen = i32[base / 4 + S.UID_LEN / 4] ?? 0;
    if (ulen <= 0 || ulen > MAX_UID_BYTES) continue;
    let b = fnv1a32Bytes(v.bytes.subarray(base + S.UID, base + S.UID + ulen), ulen) & mask;
    while ((i32[index + b] ?? 0) !== 0) b = (b + 1) & mask;
    Atomics.store(i32, index + b, slot + 1);
  }
  Atomics.store(i32, H.TOMBSTONES, 0);
}

/**
 * Under ALLOC_LOCK: rebuild INDEX, FREE and the counters from the slots. A head (UID_LEN > 0) is
 * owned; an overflow slot (UID_LEN -1) is owned iff a head's chain reaches it or a live writer
 * holds its reservation (RESERVED ≠ 0: pod-cache-layout.ts, "at every instant an overflow slot is
 * reachable or reserved"); anything else is free. The caller released dead threads' markers.
 */
export function rebuildAllocLocked(v: PodCacheView): void {
  const i32 = v.i32;
  const free = v.layout.freeByte / 4;
  // INDEX_SEQ odd (a dead rebuild) stays odd through ours; even becomes odd.
  if ((Atomics.load(i32, H.INDEX_SEQ) & 1) === 0) Atomics.add(i32, H.INDEX_SEQ, 1);
  const cap = v.refresh();
  const reached = reachableOverflow(v, cap);
  let used = 0;
  let oversize = 0;
  let overflow = 0;
  let bytes = 0;
  let top = 0;
  // A grower that died between grow() and storing CAPACITY left zeroed slots beyond it: unused.
  for (let slot = cap - 1; slot >= 0; slot--) {
    const w = v.slotBase(slot) / 4;
    const ulen = i32[w + S.UID_LEN / 4] ?? 0;
    if (ulen > 0 && ulen <= MAX_UID_BYTES) {
      used++;
      bytes += i32[w + S.PAYLOAD_LEN / 4] ?? 0;
      if (((i32[w + S.FLAGS / 4] ?? 0) & FLAG_OVERSIZE) !== 0) oversize++;
    } else if (ulen === OVERFLOW_MARK && (reached[slot] === 1 || Atomics.load(i32, w + RESERVED / 4) !== 0)) {
      overflow++;
    } else {
      if (ulen !== 0) {
        i32[w + RESERVED / 4] = 0;
        i32[w + S.PAYLOAD_LEN / 4] = 0;
        Atomics.store(i32, w + S.NEXT / 4, 0);
        Atomics.store(i32, w + S.UID_LEN / 4, 0);
      }
      i32[free + top++] = slot;
    }
  }
  Atomics.store(i32, H.FREE_TOP, top);
  Atomics.store(i32, H.SLOTS_USED, used);
  Atomics.store(i32, H.OVERFLOW_USED, overflow);
  Atomics.store(i32, H.OVERSIZE_NOW, oversize);
  Atomics.store(i32, H.BYTES_USED, bytes);
  fillIndexLocked(v);
  Atomics.add(i32, H.INDEX_SEQ, 1);
  Atomics.notify(i32, H.INDEX_SEQ);
}

/** 1 for every overflow slot some head's chain reaches (hops bounded by CHAIN and the capacity). */
function reachableOverflow(v: PodCacheView, cap: number): Uint8Array {
  const i32 = v.i32;
  const reached = new Uint8Array(cap);
  for (let slot = 0; slot < cap; slot++) {
    const w = v.slotBase(slot) / 4;
    const ulen = i32[w + S.UID_LEN / 4] ?? 0;
    if (ulen <= 0 || ulen > MAX_UID_BYTES) continue;
    const n = Math.min(i32[w + S.CHAIN / 4] ?? 0, cap);
    let next = Atomics.load(i32, w + S.NEXT / 4);
    for (let k = 0; k < n && next > 0 && next <= cap; k++) {
      const o = next - 1;
      const ow = v.slotBase(o) / 4;
      if (i32[ow + S.UID_LEN / 4] !== OVERFLOW_MARK || reached[o] === 1) break;
      reached[o] = 1;
      next = Atomics.load(i32, ow + S.NEXT / 4);
    }
  }
  return reached;
}
