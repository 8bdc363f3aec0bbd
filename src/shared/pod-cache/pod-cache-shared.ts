/**
 * The pod cache over one SharedArrayBuffer: lock-free reads (per-slot seqlock), writes from any
 * thread (CAS on the slot's sequence word; ALLOC_LOCK only to give or take a slot). The layout,
 * ownership and publication protocol are documented in pod-cache-layout.ts; read that first.
 *
 * One SharedPodCache object per thread (it owns private scratch buffers); all of them view the
 * same memory. Waiting (getNewerThan) lives in pod-cache-waiter.ts.
 */
import { threadId } from 'node:worker_threads';
import type { WireError } from '../cri/cri-errors.js';
import { CacheError } from './pod-cache-errors.js';
import {
  GLOBAL_TS_I64, GLOBAL_TS_UNSET, H, HEADER_BYTES, LOCK_STUCK_WAITS, MAX_UID_BYTES, S, bytesForCapacity,
  type PodCacheLayout,
} from './pod-cache-layout.js';
import { fnv1a32Bytes } from '../hash/fnv1a.js';
import type { CacheEntry, PodCacheStats, SetOutcome } from './pod-cache.js';
import { StatusEncoder, decodeEntry } from './pod-status-codec.js';
import { trimToFit } from './pod-status-trim.js';
import { emptyPodStatus, type RuntimePodStatus } from './runtime-pod-status.js';

/** What a seqlocked read of one slot found: another pod, this pod without an entry, this pod's entry. */
const Probe = Object.freeze({ Mismatch: 0, NoEntry: 1, Entry: 2 } as const);
type Probe = (typeof Probe)[keyof typeof Probe];

export class SharedPodCache {
  /** Fixed geometry; `capacity` there is the creation-time value (the live one: #cap / CAPACITY). */
  readonly layout: PodCacheLayout;
  readonly #buffer: SharedArrayBuffer;
  /** Length-tracking views (they follow a growable buffer's growth on every thread). */
  readonly #i32: Int32Array;
  readonly #i64: BigInt64Array;
  readonly #f64: Float64Array;
  /** A byte view of fixed length: rebuilt by #refresh when CAPACITY has grown past #cap. */
  #bytes: Buffer;
  /** CAPACITY as last loaded by this thread; #bytes covers at least this many slots. */
  #cap: number;
  readonly #encoder = new StatusEncoder();
  readonly #uidScratch = Buffer.alloc(MAX_UID_BYTES * 4);
  #copy: Buffer;
  /** Set by #readSlot: the entry timestamp and payload length of the last matching read. */
  #lastTs = 0;
  #lastLen = 0;
  /** This thread's owner id in LOCK / ALLOC_LOCK words: threadId + 1 (0 means free). */
  readonly #owner = threadId + 1;

  constructor(buffer: SharedArrayBuffer, layout: PodCacheLayout) {
    this.layout = layout;
    this.#buffer = buffer;
    this.#i32 = new Int32Array(buffer);
    this.#i64 = new BigInt64Array(buffer, 0, HEADER_BYTES / 8);
    this.#f64 = new Float64Array(buffer);
    this.#cap = Atomics.load(this.#i32, H.CAPACITY);
    this.#bytes = Buffer.from(buffer);
    this.#copy = Buffer.allocUnsafe(layout.bytesPerSlot);
  }

  /** Follow CAPACITY (grown by any thread): returns it, with #bytes covering that many slots. */
  #refresh(): number {
    const cap = Atomics.load(this.#i32, H.CAPACITY);
    if (cap !== this.#cap) {
      // The grower grew the buffer before storing CAPACITY, so byteLength covers `cap` here.
      this.#bytes = Buffer.from(this.#buffer);
      this.#cap = cap;
    }
    return cap;
  }

  /** Byte offset of a slot, following growth when the slot is beyond what this thread has seen. */
  #slotBase(slot: number): number {
    if (slot >= this.#cap && slot >= this.#refresh()) {
      throw new CacheError('ERR_CACHE_CORRUPT', `pod cache slot ${slot} is beyond its capacity ${this.#cap}`);
    }
    return this.layout.slotsByte + slot * this.layout.slotStride;
  }

  /** Pods the last relist could not store (> 0: a pod without an entry is unknown, not absent). */
  unstored(): number {
    return Atomics.load(this.#i32, H.UNSTORED);
  }

  /** The notification word's index, for Atomics.wait/waitAsync. */
  get int32(): Int32Array {
    return this.#i32;
  }

  notifyGeneration(): number {
    return Atomics.load(this.#i32, H.NOTIFY);
  }

  globalTimestampMs(): number | undefined {
    const v = Atomics.load(this.#i64, GLOBAL_TS_I64);
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
    const out: string[] = [];
    const cap = this.#refresh();
    for (let slot = 0; slot < cap; slot++) {
      const base = this.#slotBase(slot);
      const seqIdx = base / 4;
      const uid = this.#seqRead(seqIdx, () => {
        const ulen = this.#i32[seqIdx + 1] ?? 0;
        const len = this.#i32[seqIdx + 2] ?? 0;
        return ulen > 0 && ulen <= MAX_UID_BYTES && len > 0 ? this.#bytes.toString('utf8', base + S.UID, base + S.UID + ulen) : undefined;
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
    const ulen = this.#uidBytes(uid);
    const mask = this.layout.indexSize - 1;
    const index = this.layout.indexByte / 4;
    for (let waits = 0; ; ) {
      const gen = Atomics.load(this.#i32, H.INDEX_SEQ);
      if ((gen & 1) === 1) {
        waits = this.#backoff(H.INDEX_SEQ, gen, waits);
        continue;
      }
      let b = fnv1a32Bytes(this.#uidScratch, ulen) & mask;
      for (let n = 0; n <= mask; n++, b = (b + 1) & mask) {
        const v = Atomics.load(this.#i32, index + b);
        if (v === 0) break;
        if (v < 0) continue;
        const r = this.#readSlot(v - 1, ulen, copy);
        if (r === Probe.Entry) return v - 1;
        if (r === Probe.NoEntry) return -1;
      }
      // Not found: valid unless the index was rebuilt under us.
      if (Atomics.load(this.#i32, H.INDEX_SEQ) === gen) return -1;
    }
  }

  #readSlot(slot: number, ulen: number, copy: boolean): Probe {
    const base = this.#slotBase(slot);
    const seqIdx = base / 4;
    return this.#seqRead(seqIdx, () => {
      let result: Probe = Probe.Mismatch;
      if (this.#i32[seqIdx + 1] === ulen && this.#bytes.compare(this.#uidScratch, 0, ulen, base + S.UID, base + S.UID + ulen) === 0) {
        const len = this.#i32[seqIdx + 2] ?? 0;
        if (len > 0 && len <= this.layout.bytesPerSlot) {
          this.#lastTs = this.#f64[(base + S.TIMESTAMP) / 8] ?? 0;
          this.#lastLen = len;
          if (copy) this.#bytes.copy(this.#copy, 0, base + S.PAYLOAD, base + S.PAYLOAD + len);
          result = Probe.Entry;
        } else {
          result = Probe.NoEntry;
        }
      }
      return result;
    });
  }

  /**
   * One consistent read of a slot under its seqlock: waits while a writer holds it (odd), runs
   * `read`, and runs it again if a write was published meanwhile. `read` must not write shared
   * memory (it may run several times; only its last run's result counts).
   */
  #seqRead<T>(seqIdx: number, read: () => T): T {
    for (let waits = 0; ; ) {
      const s0 = Atomics.load(this.#i32, seqIdx);
      if ((s0 & 1) === 1) {
        waits = this.#backoff(seqIdx, s0, waits);
        continue;
      }
      const result = read();
      if (Atomics.load(this.#i32, seqIdx) === s0) return result;
    }
  }

  // ---- writes --------------------------------------------------------------------------

  set(uid: string, status: RuntimePodStatus, error: WireError | null, timestampMs: number): SetOutcome {
    checkTimestamp(timestampMs);
    const ulen = this.#uidBytes(uid);
    let outcome: SetOutcome = 'stored';
    let payload = this.#encoder.encode(status, error);
    if (payload.length > this.layout.bytesPerSlot) {
      const size = payload.length;
      const trimmed = trimToFit(status, (st) => this.#encoder.encode(st, error), this.layout.bytesPerSlot);
      if (trimmed) {
        outcome = 'trimmed';
        Atomics.add(this.#i32, H.TRIMMED_TOTAL, 1);
        payload = trimmed.encoded;
      } else {
        outcome = 'oversize';
        Atomics.add(this.#i32, H.OVERSIZE_TOTAL, 1);
        payload = this.#encoder.encode(emptyPodStatus(uid, status.name, status.namespace), {
          code: 'ERR_CACHE_ENTRY_TOO_LARGE',
          message: `pod status of ${size} bytes exceeds the cache's ${this.layout.bytesPerSlot} bytes per slot, even without old exited instances`,
        });
      }
    }
    for (;;) {
      let slot = this.#find(uid, false);
      if (slot < 0) slot = this.#slotFor(ulen);
      const base = this.#slotBase(slot);
      const seqIdx = base / 4;
      const s = this.#acquire(seqIdx);
      const uidStill = this.#i32[seqIdx + 1] === ulen && this.#bytes.compare(this.#uidScratch, 0, ulen, base + S.UID, base + S.UID + ulen) === 0;
      if (!uidStill) {
        // Deleted (and maybe reused) between lookup and lock: nothing written, look again.
        this.#release(seqIdx, s, false);
        continue;
      }
      const oldLen = this.#i32[seqIdx + 2] ?? 0;
      const tsIdx = (base + S.TIMESTAMP) / 8;
      if (oldLen > 0 && (this.#f64[tsIdx] ?? 0) > timestampMs) {
        this.#release(seqIdx, s, false);
        return 'stale';
      }
      this.#f64[tsIdx] = timestampMs;
      payload.copy(this.#bytes, base + S.PAYLOAD);
      this.#i32[seqIdx + 2] = payload.length;
      this.#release(seqIdx, s, true);
      Atomics.add(this.#i32, H.BYTES_USED, payload.length - oldLen);
      this.#publish();
      return outcome;
    }
  }

  delete(uid: string): void {
    const ulen = this.#uidBytes(uid);
    this.#lockAlloc();
    try {
      const found = this.#findBucketLocked(ulen);
      if (found.bucket < 0) return;
      const base = this.#slotBase(found.slot);
      const seqIdx = base / 4;
      const s = this.#acquire(seqIdx);
      const oldLen = this.#i32[seqIdx + 2] ?? 0;
      this.#i32[seqIdx + 1] = 0;
      this.#i32[seqIdx + 2] = 0;
      this.#release(seqIdx, s, true);
      Atomics.add(this.#i32, H.BYTES_USED, -oldLen);
      Atomics.store(this.#i32, this.layout.indexByte / 4 + found.bucket, -1);
      const top = this.#i32[H.FREE_TOP] ?? 0;
      this.#i32[this.layout.freeByte / 4 + top] = found.slot;
      Atomics.store(this.#i32, H.FREE_TOP, top + 1);
      Atomics.sub(this.#i32, H.SLOTS_USED, 1);
      if (Atomics.add(this.#i32, H.TOMBSTONES, 1) + 1 > this.layout.indexSize / 4) this.#rebuildIndexLocked();
    } finally {
      this.#unlockAlloc();
    }
  }

  updateTime(timestampMs: number, unstored = 0): void {
    checkTimestamp(timestampMs);
    if (!Number.isSafeInteger(unstored) || unstored < 0) {
      throw new CacheError('ERR_CACHE_INVALID_OPTION', `unstored must be a non-negative integer, got ${unstored}`);
    }
    // Before GLOBAL_TS: a reader that sees the new timestamp sees this count (or a later one).
    Atomics.store(this.#i32, H.UNSTORED, Math.min(unstored, 0x7fffffff));
    const next = BigInt(timestampMs);
    for (;;) {
      const cur = Atomics.load(this.#i64, GLOBAL_TS_I64);
      if (cur >= next) return;
      if (Atomics.compareExchange(this.#i64, GLOBAL_TS_I64, cur, next) === cur) break;
    }
    this.#publish();
  }

  stats(): PodCacheStats {
    const i32 = this.#i32;
    const capacity = Atomics.load(i32, H.CAPACITY);
    return {
      slotsUsed: Atomics.load(i32, H.SLOTS_USED),
      capacity,
      maxCapacity: this.layout.maxCapacity,
      bytesUsed: Atomics.load(i32, H.BYTES_USED),
      bytesCapacity: capacity * this.layout.bytesPerSlot,
      fullTotal: Atomics.load(i32, H.FULL_TOTAL),
      oversizeTotal: Atomics.load(i32, H.OVERSIZE_TOTAL),
      trimmedTotal: Atomics.load(i32, H.TRIMMED_TOTAL),
      growTotal: Atomics.load(i32, H.GROW_TOTAL),
      unstored: Atomics.load(i32, H.UNSTORED),
    };
  }

  // ---- recovery of a dead thread's locks ------------------------------------------------

  /**
   * Release and repair every lock held by a thread that has EXITED (its 'exit' event was seen;
   * calling this for a live thread corrupts the cache). See "A writer that dies" in
   * pod-cache-layout.ts. Returns the number of lock words taken over (0: it held none).
   */
  recoverThread(deadThreadId: number): number {
    const dead = deadThreadId + 1;
    if (dead === this.#owner) throw new CacheError('ERR_CACHE_INVALID_OPTION', 'recoverThread: a thread cannot recover itself');
    const i32 = this.#i32;
    let recovered = 0;
    const allocTaken = Atomics.compareExchange(i32, H.ALLOC_LOCK, dead, this.#owner) === dead;
    if (allocTaken) recovered++;
    const cap = this.#refresh();
    for (let slot = 0; slot < cap; slot++) {
      const base = this.#slotBase(slot);
      const seqIdx = base / 4;
      const lockIdx = seqIdx + S.LOCK / 4;
      if (Atomics.compareExchange(i32, lockIdx, dead, this.#owner) !== dead) continue;
      recovered++;
      const s = Atomics.load(i32, seqIdx);
      if ((s & 1) === 1) {
        const ulen = i32[seqIdx + 1] ?? 0;
        const len = i32[seqIdx + 2] ?? 0;
        if (ulen > 0 && ulen <= MAX_UID_BYTES && len > 0) {
          // The payload may be torn: replace it by an error entry at the stored timestamp.
          const uid = this.#bytes.toString('utf8', base + S.UID, base + S.UID + ulen);
          const payload = this.#encoder.encode(emptyPodStatus(uid), { code: 'ERR_CACHE_WRITER_DIED', message: `thread ${deadThreadId} died while writing this entry` });
          if (payload.length <= this.layout.bytesPerSlot) {
            payload.copy(this.#bytes, base + S.PAYLOAD);
            i32[seqIdx + 2] = payload.length;
          } else {
            i32[seqIdx + 2] = 0;
          }
        } else if (ulen < 0 || ulen > MAX_UID_BYTES) {
          i32[seqIdx + 1] = 0;
          i32[seqIdx + 2] = 0;
        }
        Atomics.store(i32, seqIdx, s + 1);
      }
      Atomics.store(i32, lockIdx, 0);
      Atomics.notify(i32, seqIdx);
      Atomics.notify(i32, lockIdx);
    }
    if (allocTaken) {
      try {
        this.#rebuildAllocLocked();
      } finally {
        this.#unlockAlloc();
      }
    }
    if (recovered > 0) {
      Atomics.add(i32, H.RECOVERED, 1);
      this.#publish();
    }
    return recovered;
  }

  /** How many recoveries happened (the PLEG reinspects every pod when this moves). */
  recoveries(): number {
    return Atomics.load(this.#i32, H.RECOVERED);
  }

  /** Under ALLOC_LOCK: rebuild INDEX, FREE and the counters from the slots (owned iff UID_LEN > 0). */
  #rebuildAllocLocked(): void {
    const i32 = this.#i32;
    const free = this.layout.freeByte / 4;
    // INDEX_SEQ odd (a dead rebuild) stays odd through ours; even becomes odd.
    if ((Atomics.load(i32, H.INDEX_SEQ) & 1) === 0) Atomics.add(i32, H.INDEX_SEQ, 1);
    let used = 0;
    let bytes = 0;
    let top = 0;
    // A grower that died between grow() and storing CAPACITY left zeroed slots beyond it: unused.
    for (let slot = this.#refresh() - 1; slot >= 0; slot--) {
      const base = this.#slotBase(slot);
      const ulen = i32[base / 4 + 1] ?? 0;
      if (ulen > 0) {
        used++;
        bytes += i32[base / 4 + 2] ?? 0;
      } else {
        i32[free + top++] = slot;
      }
    }
    Atomics.store(i32, H.FREE_TOP, top);
    Atomics.store(i32, H.SLOTS_USED, used);
    Atomics.store(i32, H.BYTES_USED, bytes);
    this.#fillIndexLocked();
    Atomics.add(i32, H.INDEX_SEQ, 1);
    Atomics.notify(i32, H.INDEX_SEQ);
  }

  // ---- slot allocation (ALLOC_LOCK) ---------------------------------------------------

  /** A slot naming the uid (in #uidScratch): the existing one, or a fresh one from FREE. */
  #slotFor(ulen: number): number {
    this.#lockAlloc();
    try {
      const found = this.#findBucketLocked(ulen);
      if (found.slot >= 0) return found.slot;
      let top = this.#i32[H.FREE_TOP] ?? 0;
      if (top === 0) top = this.#growLocked();
      if (top === 0) {
        Atomics.add(this.#i32, H.FULL_TOTAL, 1);
        throw new CacheError('ERR_CACHE_FULL', `pod cache full: all ${this.#cap} slots hold pods (at most ${this.layout.maxCapacity})`);
      }
      const slot = this.#i32[this.layout.freeByte / 4 + top - 1] ?? -1;
      Atomics.store(this.#i32, H.FREE_TOP, top - 1);
      const base = this.#slotBase(slot);
      const seqIdx = base / 4;
      const s = this.#acquire(seqIdx);
      this.#uidScratch.copy(this.#bytes, base + S.UID, 0, ulen);
      this.#i32[seqIdx + 1] = ulen;
      this.#i32[seqIdx + 2] = 0;
      this.#release(seqIdx, s, true);
      if (found.firstFree < 0) throw new CacheError('ERR_CACHE_CORRUPT', 'pod cache index has no free bucket');
      const index = this.layout.indexByte / 4;
      if ((this.#i32[index + found.firstFree] ?? 0) < 0) Atomics.sub(this.#i32, H.TOMBSTONES, 1);
      Atomics.store(this.#i32, index + found.firstFree, slot + 1);
      Atomics.add(this.#i32, H.SLOTS_USED, 1);
      return slot;
    } finally {
      this.#unlockAlloc();
    }
  }

  /**
   * Under ALLOC_LOCK with FREE empty: grow CAPACITY (doubling, by at least 16) up to MAX_CAPACITY
   * ("Growth" in pod-cache-layout.ts). Returns the new FREE_TOP: 0 when it cannot grow (at the
   * maximum, or the OS refused the pages).
   */
  #growLocked(): number {
    const cap = this.#refresh();
    const max = this.layout.maxCapacity;
    if (cap >= max) return 0;
    const next = Math.min(max, Math.max(cap * 2, cap + 16));
    const need = bytesForCapacity(this.layout, next);
    if (this.#buffer.byteLength < need) {
      try {
        (this.#buffer as unknown as { grow(n: number): void }).grow(need);
      } catch {
        return 0;
      }
    }
    const free = this.layout.freeByte / 4;
    // Pop order cap, cap+1, …: slot next-1 at the bottom (the new memory is zero: free slots).
    const added = next - cap;
    for (let k = 0; k < added; k++) this.#i32[free + k] = next - 1 - k;
    Atomics.store(this.#i32, H.CAPACITY, next);
    Atomics.store(this.#i32, H.FREE_TOP, added);
    Atomics.add(this.#i32, H.GROW_TOTAL, 1);
    this.#refresh();
    return added;
  }

  /** Under ALLOC_LOCK (slots cannot change owner): the uid's bucket and slot, and the first reusable bucket. */
  #findBucketLocked(ulen: number): { bucket: number; slot: number; firstFree: number } {
    const mask = this.layout.indexSize - 1;
    const index = this.layout.indexByte / 4;
    let firstFree = -1;
    let b = fnv1a32Bytes(this.#uidScratch, ulen) & mask;
    for (let n = 0; n <= mask; n++, b = (b + 1) & mask) {
      const v = this.#i32[index + b] ?? 0;
      if (v === 0) return { bucket: -1, slot: -1, firstFree: firstFree < 0 ? b : firstFree };
      if (v < 0) {
        if (firstFree < 0) firstFree = b;
        continue;
      }
      const base = this.#slotBase(v - 1);
      if (this.#i32[base / 4 + 1] === ulen && this.#bytes.compare(this.#uidScratch, 0, ulen, base + S.UID, base + S.UID + ulen) === 0) {
        return { bucket: b, slot: v - 1, firstFree };
      }
    }
    return { bucket: -1, slot: -1, firstFree };
  }

  /** Drop tombstones: re-insert every owned slot. Readers retry while INDEX_SEQ is odd. */
  #rebuildIndexLocked(): void {
    const i32 = this.#i32;
    Atomics.add(i32, H.INDEX_SEQ, 1);
    this.#fillIndexLocked();
    Atomics.add(i32, H.INDEX_SEQ, 1);
    Atomics.notify(i32, H.INDEX_SEQ);
  }

  /** Under ALLOC_LOCK with INDEX_SEQ odd: every bucket from the owned slots, no tombstones. */
  #fillIndexLocked(): void {
    const i32 = this.#i32;
    const index = this.layout.indexByte / 4;
    const mask = this.layout.indexSize - 1;
    for (let b = 0; b <= mask; b++) Atomics.store(i32, index + b, 0);
    const cap = this.#refresh();
    for (let slot = 0; slot < cap; slot++) {
      const base = this.#slotBase(slot);
      const ulen = i32[base / 4 + 1] ?? 0;
      if (ulen === 0) continue;
      let b = fnv1a32Bytes(this.#bytes.subarray(base + S.UID, base + S.UID + ulen), ulen) & mask;
      while ((i32[index + b] ?? 0) !== 0) b = (b + 1) & mask;
      Atomics.store(i32, index + b, slot + 1);
    }
    Atomics.store(i32, H.TOMBSTONES, 0);
  }

  // ---- locks ---------------------------------------------------------------------------

  /** Take the slot's LOCK (owner id), then make SEQ odd. Returns the even SEQ before. */
  #acquire(seqIdx: number): number {
    const lockIdx = seqIdx + S.LOCK / 4;
    for (let waits = 0; ; ) {
      const held = Atomics.compareExchange(this.#i32, lockIdx, 0, this.#owner);
      if (held === 0) break;
      waits = this.#backoff(lockIdx, held, waits);
    }
    // Only LOCK holders move SEQ, so it is even here (recoverThread leaves it even too).
    return Atomics.add(this.#i32, seqIdx, 1);
  }

  /** Publish (s+2) after a write; restore s when nothing was written (readers need not retry). */
  #release(seqIdx: number, s: number, wrote: boolean): void {
    Atomics.store(this.#i32, seqIdx, wrote ? s + 2 : s);
    Atomics.store(this.#i32, seqIdx + S.LOCK / 4, 0);
    Atomics.notify(this.#i32, seqIdx);
    Atomics.notify(this.#i32, seqIdx + S.LOCK / 4, 1);
  }

  #lockAlloc(): void {
    for (let waits = 0; ; ) {
      const held = Atomics.compareExchange(this.#i32, H.ALLOC_LOCK, 0, this.#owner);
      if (held === 0) return;
      waits = this.#backoff(H.ALLOC_LOCK, held, waits);
    }
  }

  #unlockAlloc(): void {
    Atomics.store(this.#i32, H.ALLOC_LOCK, 0);
    Atomics.notify(this.#i32, H.ALLOC_LOCK, 1);
  }

  /**
   * Wait for a word to leave `value`: a short spin first (critical sections are µs), then 1 ms
   * Atomics.wait rounds, then ERR_CACHE_LOCK_STUCK. Returns the updated wait count.
   */
  #backoff(idx: number, value: number, waits: number): number {
    if (waits < 64) return waits + 1;
    if (waits - 64 >= LOCK_STUCK_WAITS) {
      throw new CacheError('ERR_CACHE_LOCK_STUCK', `pod cache word ${idx} stayed locked for ${LOCK_STUCK_WAITS} ms`);
    }
    Atomics.wait(this.#i32, idx, value, 1);
    return waits + 1;
  }

  #publish(): void {
    Atomics.add(this.#i32, H.NOTIFY, 1);
    Atomics.notify(this.#i32, H.NOTIFY);
  }

  /** UTF-8 of uid into #uidScratch; returns its length. */
  #uidBytes(uid: string): number {
    const len = this.#uidScratch.write(uid, 0, 'utf8');
    if (len > MAX_UID_BYTES || Buffer.byteLength(uid, 'utf8') !== len || len === 0) {
      throw new CacheError('ERR_CACHE_INVALID_UID', `pod uid must be 1..${MAX_UID_BYTES} UTF-8 bytes, got ${JSON.stringify(uid.slice(0, 80))}`);
    }
    return len;
  }
}

function checkTimestamp(ts: number): void {
  if (!Number.isSafeInteger(ts)) {
    throw new CacheError('ERR_CACHE_INVALID_TIMESTAMP', `cache timestamps are integer ms, got ${ts}`);
  }
}
