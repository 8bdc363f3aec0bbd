/**
 * The pod cache over one SharedArrayBuffer: lock-free reads (per-slot seqlock), writes from any
 * thread (CAS on the slot's lock word; ALLOC_LOCK only to give or take a slot). The layout,
 * ownership and publication protocol are documented in pod-cache-layout.ts; read that first.
 * This module holds the reads and writes of entries; the rest of the work on the buffer lives
 * beside it:
 *   pod-cache-view.ts      this thread's views of the buffer, growth-following, uid scratch
 *   pod-cache-locks.ts     slot lock + seqlock, ALLOC_LOCK, the bounded wait
 *   pod-cache-slots.ts     slot ownership and the uid index (under ALLOC_LOCK)
 *   pod-cache-growth.ts    growing CAPACITY and the buffer
 *   pod-cache-recovery.ts  taking over a dead thread's locks
 *
 * One SharedPodCache object per thread (it owns private scratch buffers); all of them view the
 * same memory. Waiting (getNewerThan) lives in pod-cache-reader.ts.
 */
import type { WireError } from '../cri/cri-errors.js';
import { fnv1a32Bytes } from '../hash/fnv1a.js';
import { CacheError } from './pod-cache-errors.js';
import { FLAG_OVERSIZE, GLOBAL_TS_I64, GLOBAL_TS_UNSET, H, RESERVED, MAX_UID_BYTES, S, type PodCacheLayout } from './pod-cache-layout.js';
import { acquireSlot, backoff, releaseSlot, seqRead } from './pod-cache-locks.js';
import { chainSlots, copyEntry, freeOverflow, overflowSlotsFor, releaseReserved, reserveOverflow, writeChain } from './pod-cache-chain.js';
import { recoverThread } from './pod-cache-recovery.js';
import { freeSlot, slotFor } from './pod-cache-slots.js';
import { PodCacheView } from './pod-cache-view.js';
import type { CacheEntry, PodCacheStats, SetOutcome } from './pod-cache.js';
import { StatusEncoder, decodeEntry } from './pod-status-codec.js';
import { trimToFit } from './pod-status-trim.js';
import { emptyPodStatus, type RuntimePodStatus } from './runtime-pod-status.js';

/**
 * What a seqlocked read of one slot found: another pod, this pod without an entry, this pod's
 * entry, or this pod with a chain that failed its bounds checks under a stable SEQ (corrupt).
 */
const Probe = Object.freeze({ Mismatch: 0, NoEntry: 1, Entry: 2, Corrupt: 3 } as const);
type Probe = (typeof Probe)[keyof typeof Probe];

export class SharedPodCache {
  readonly #v: PodCacheView;
  readonly #encoder = new StatusEncoder();
  #copy: Buffer;
  /** Set by #readSlot: the entry timestamp and payload length of the last matching read. */
  #lastTs = 0;
  #lastLen = 0;

  constructor(buffer: SharedArrayBuffer, layout: PodCacheLayout) {
    this.#v = new PodCacheView(buffer, layout);
    this.#copy = Buffer.allocUnsafe(layout.bytesPerSlot);
  }

  /** Fixed geometry; `capacity` there is the creation-time value (the live one: stats().capacity). */
  get layout(): PodCacheLayout {
    return this.#v.layout;
  }

  /** Pods the last relist could not store (> 0: a pod without an entry is unknown, not absent). */
  unstored(): number {
    return Atomics.load(this.#v.i32, H.UNSTORED);
  }

  /** The notification word's index, for Atomics.wait/waitAsync. */
  get int32(): Int32Array {
    return this.#v.i32;
  }

  notifyGeneration(): number {
    return Atomics.load(this.#v.i32, H.NOTIFY);
  }

  globalTimestampMs(): number | undefined {
    const v = Atomics.load(this.#v.i64, GLOBAL_TS_I64);
    return v === GLOBAL_TS_UNSET ? undefined : Number(v);
  }

  // ---- reads ---------------------------------------------------------------------------

  get(uid: string): CacheEntry | undefined {
    const slot = this.#find(uid, true);
    if (slot < 0) return undefined;
    let decoded;
    try {
      decoded = decodeEntry(this.#copy, this.#lastLen);
    } catch (err) {
      if (err instanceof CacheError) throw new CacheError('ERR_CACHE_CORRUPT', `${err.message} (pod ${uid})`);
      throw err;
    }
    return { status: decoded.status, error: decoded.error, timestampMs: this.#lastTs };
  }

  /** UIDs of every pod with an entry (one consistent seqlock read per slot; O(capacity)). */
  uids(): string[] {
    const v = this.#v;
    const out: string[] = [];
    const cap = v.refresh();
    for (let slot = 0; slot < cap; slot++) {
      const base = v.slotBase(slot);
      const seqIdx = base / 4;
      const uid = seqRead(v.i32, seqIdx, () => {
        const ulen = v.i32[seqIdx + S.UID_LEN / 4] ?? 0;
        const len = v.i32[seqIdx + S.PAYLOAD_LEN / 4] ?? 0;
        return ulen > 0 && ulen <= MAX_UID_BYTES && len > 0 ? v.bytes.toString('utf8', base + S.UID, base + S.UID + ulen) : undefined;
      });
      if (uid !== undefined) out.push(uid);
    }
    return out;
  }

  /** The pod's entry timestamp without decoding, or undefined when it has no entry. */
  entryTimestamp(uid: string): number | undefined {
    return this.#find(uid, false) < 0 ? undefined : this.#lastTs;
  }

  /**
   * Probe the index for `uid`; on a hit leaves the timestamp (and, with `copy`, the payload in
   * #copy) from one consistent seqlock read. Returns the slot or -1.
   */
  #find(uid: string, copy: boolean): number {
    const v = this.#v;
    const ulen = v.uidBytes(uid);
    const mask = v.layout.indexSize - 1;
    const index = v.layout.indexByte / 4;
    for (let waits = 0; ; ) {
      const gen = Atomics.load(v.i32, H.INDEX_SEQ);
      if ((gen & 1) === 1) {
        waits = backoff(v.i32, H.INDEX_SEQ, gen, waits);
        continue;
      }
      let b = fnv1a32Bytes(v.uidScratch, ulen) & mask;
      for (let n = 0; n <= mask; n++, b = (b + 1) & mask) {
        const w = Atomics.load(v.i32, index + b);
        if (w === 0) break;
        if (w < 0) continue;
        const r = this.#readSlot(w - 1, ulen, copy);
        if (r === Probe.Entry) return w - 1;
        if (r === Probe.Corrupt) throw new CacheError('ERR_CACHE_CORRUPT', `pod ${uid}: its overflow chain is broken under a stable sequence word`);
        if (r === Probe.NoEntry) return -1;
      }
      // Not found: valid unless the index was rebuilt under us.
      if (Atomics.load(v.i32, H.INDEX_SEQ) === gen) return -1;
    }
  }

  #readSlot(slot: number, ulen: number, copy: boolean): Probe {
    const v = this.#v;
    const base = v.slotBase(slot);
    const seqIdx = base / 4;
    return seqRead(v.i32, seqIdx, () => {
      let result: Probe = Probe.Mismatch;
      if (v.slotNames(base, ulen)) {
        const len = v.i32[seqIdx + S.PAYLOAD_LEN / 4] ?? 0;
        if (len > 0 && len <= v.layout.maxEntryBytes) {
          this.#lastTs = v.f64[(base + S.TIMESTAMP) / 8] ?? 0;
          this.#lastLen = len;
          result = Probe.Entry;
          if (copy) {
            // Private memory only: a torn read's copy is discarded by seqRead's retry.
            if (this.#copy.length < len) this.#copy = Buffer.allocUnsafe(Math.max(len, this.#copy.length * 2));
            if (!copyEntry(v, base, len, this.#copy)) result = Probe.Corrupt;
          }
        } else {
          result = len === 0 ? Probe.NoEntry : Probe.Corrupt;
        }
      }
      return result;
    });
  }

  // ---- writes --------------------------------------------------------------------------

  set(uid: string, status: RuntimePodStatus, error: WireError | null, timestampMs: number): SetOutcome {
    const v = this.#v;
    checkTimestamp(timestampMs);
    const ulen = v.uidBytes(uid);
    let outcome: SetOutcome = 'stored';
    let payload = this.#encoder.encode(status, error);
    const max = v.layout.maxEntryBytes;
    if (payload.length > max) {
      const size = payload.length;
      const trimmed = trimToFit(status, (st) => this.#encoder.encode(st, error), max);
      if (trimmed) {
        outcome = 'trimmed';
        Atomics.add(v.i32, H.TRIMMED_TOTAL, 1);
        payload = trimmed.encoded;
      } else {
        outcome = 'oversize';
        payload = this.#oversizeEntry(uid, status, `pod status of ${size} bytes exceeds the cache's ${max} bytes per entry, even without old exited instances`);
      }
    }
    for (;;) {
      let slot = this.#find(uid, false);
      if (slot < 0) slot = slotFor(v, ulen);
      const base = v.slotBase(slot);
      const seqIdx = base / 4;
      const need = overflowSlotsFor(v, payload.length);
      // Step 1 (pod-cache-layout.ts): fresh overflow slots unless the chain is already `need` long.
      let reserved: number[] = [];
      if (need > 0 && this.#chainLength(seqIdx) !== need) {
        try {
          reserved = reserveOverflow(v, need);
        } catch (err) {
          if (!(err instanceof CacheError) || err.code !== 'ERR_CACHE_FULL' || outcome === 'oversize') throw err;
          // No room for the whole status: an error entry (it fits the head), never a cut one.
          outcome = 'oversize';
          payload = this.#oversizeEntry(uid, status, `pod status of ${payload.length} bytes needs ${need} overflow slots; ${err.message}`);
          continue;
        }
      }
      const s = acquireSlot(v, seqIdx);
      if (!v.slotNames(base, ulen)) {
        // Deleted (and maybe reused) between lookup and lock: nothing written, look again.
        releaseSlot(v.i32, seqIdx, s, false);
        freeOverflow(v, reserved);
        continue;
      }
      const oldLen = v.i32[seqIdx + S.PAYLOAD_LEN / 4] ?? 0;
      if (oldLen > 0 && (v.f64[(base + S.TIMESTAMP) / 8] ?? 0) > timestampMs) {
        releaseSlot(v.i32, seqIdx, s, false);
        freeOverflow(v, reserved);
        return 'stale';
      }
      // Nothing below allocates until the head is released (chainSlots fills v.chainScratch).
      const oldLength = chainSlots(v, base);
      let chain: ArrayLike<number>;
      let unlinked = 0;
      if (reserved.length > 0 || need === 0) {
        chain = reserved;
        unlinked = oldLength;
        for (let k = 0; k < oldLength; k++) Atomics.store(v.i32, v.slotBase(v.chainScratch[k] ?? -1) / 4 + RESERVED / 4, v.owner);
      } else if (oldLength === need) {
        chain = v.chainScratch; // rewritten in place under the head's odd SEQ (its first `need`)
      } else {
        // The chain changed length since it was peeked: reserve afresh.
        releaseSlot(v.i32, seqIdx, s, false);
        continue;
      }
      writeChain(v, base, payload, chain, need, timestampMs);
      const flagsIdx = seqIdx + S.FLAGS / 4;
      const wasOversize = ((v.i32[flagsIdx] ?? 0) & FLAG_OVERSIZE) !== 0;
      const isOversize = outcome === 'oversize';
      v.i32[flagsIdx] = isOversize ? FLAG_OVERSIZE : 0;
      if (wasOversize !== isOversize) Atomics.add(v.i32, H.OVERSIZE_NOW, isOversize ? 1 : -1);
      releaseSlot(v.i32, seqIdx, s, true);
      releaseReserved(v, reserved);
      if (unlinked > 0) freeOverflow(v, v.chainScratch.subarray(0, unlinked));
      Atomics.add(v.i32, H.BYTES_USED, payload.length - oldLen);
      if (outcome === 'oversize') Atomics.add(v.i32, H.OVERSIZE_TOTAL, 1);
      v.countEntryWrite();
      v.publish();
      return outcome;
    }
  }

  /** The head's CHAIN word from one consistent read (a hint: checked again under the LOCK). */
  #chainLength(seqIdx: number): number {
    const v = this.#v;
    return seqRead(v.i32, seqIdx, () => v.i32[seqIdx + S.CHAIN / 4] ?? 0);
  }

  /** An entry with an empty status and ERR_CACHE_ENTRY_TOO_LARGE (fits any head). */
  #oversizeEntry(uid: string, status: RuntimePodStatus, message: string): Buffer {
    return this.#encoder.encode(emptyPodStatus(uid, status.name, status.namespace), { code: 'ERR_CACHE_ENTRY_TOO_LARGE', message });
  }

  delete(uid: string): void {
    freeSlot(this.#v, this.#v.uidBytes(uid));
    // Counted even when there was nothing to free: at worst a reader rechecks once more.
    this.#v.countEntryWrite();
  }

  /** Entry changes by other threads (pod-cache-layout.ts ENTRY_WRITES); compare readings for equality. */
  foreignWrites(): number {
    return this.#v.foreignEntryWrites();
  }

  updateTime(timestampMs: number, unstored = 0): void {
    const v = this.#v;
    checkTimestamp(timestampMs);
    if (!Number.isSafeInteger(unstored) || unstored < 0) {
      throw new CacheError('ERR_CACHE_INVALID_OPTION', `unstored must be a non-negative integer, got ${unstored}`);
    }
    // Before GLOBAL_TS: a reader that sees the new timestamp sees this count (or a later one).
    Atomics.store(v.i32, H.UNSTORED, Math.min(unstored, 0x7fffffff));
    const next = BigInt(timestampMs);
    for (;;) {
      const cur = Atomics.load(v.i64, GLOBAL_TS_I64);
      if (cur >= next) return;
      if (Atomics.compareExchange(v.i64, GLOBAL_TS_I64, cur, next) === cur) break;
    }
    v.publish();
  }

  stats(): PodCacheStats {
    const i32 = this.#v.i32;
    const layout = this.#v.layout;
    const capacity = Atomics.load(i32, H.CAPACITY);
    return {
      slotsUsed: Atomics.load(i32, H.SLOTS_USED),
      capacity,
      maxCapacity: layout.maxCapacity,
      bytesUsed: Atomics.load(i32, H.BYTES_USED),
      bytesCapacity: capacity * layout.bytesPerSlot,
      fullTotal: Atomics.load(i32, H.FULL_TOTAL),
      oversizeTotal: Atomics.load(i32, H.OVERSIZE_TOTAL),
      trimmedTotal: Atomics.load(i32, H.TRIMMED_TOTAL),
      overflowSlots: Atomics.load(i32, H.OVERFLOW_USED),
      oversizeEntries: Atomics.load(i32, H.OVERSIZE_NOW),
      growTotal: Atomics.load(i32, H.GROW_TOTAL),
      unstored: Atomics.load(i32, H.UNSTORED),
    };
  }

  /**
   * Release and repair every lock held by a thread that has EXITED (pod-cache-recovery.ts;
   * calling this for a live thread corrupts the cache). Returns the number of lock words taken over.
   */
  recoverThread(deadThreadId: number): number {
    return recoverThread(this.#v, this.#encoder, deadThreadId);
  }

  /** How many recoveries happened (the PLEG reinspects every pod when this moves). */
  recoveries(): number {
    return Atomics.load(this.#v.i32, H.RECOVERED);
  }
}

function checkTimestamp(ts: number): void {
  if (!Number.isSafeInteger(ts)) {
    throw new CacheError('ERR_CACHE_INVALID_TIMESTAMP', `cache timestamps are integer ms, got ${ts}`);
  }
}
