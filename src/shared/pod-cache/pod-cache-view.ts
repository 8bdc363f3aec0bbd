/**
 * One thread's view of the pod cache's SharedArrayBuffer (layout, fields and protocol:
 * pod-cache-layout.ts, the one description): the typed views, the byte view that follows growth,
 * this thread's lock owner id, and the uid scratch every lookup hashes. Shared by the modules
 * that work on the buffer (pod-cache-shared.ts reads/writes, pod-cache-slots.ts allocation,
 * pod-cache-growth.ts, pod-cache-recovery.ts); one instance per SharedPodCache, never shared
 * between threads.
 */
import { threadId } from 'node:worker_threads';
import { CacheError } from './pod-cache-errors.js';
import { H, HEADER_BYTES, MAX_UID_BYTES, S, type PodCacheLayout } from './pod-cache-layout.js';

export class PodCacheView {
  /** Fixed geometry; `capacity` there is the creation-time value (the live one: cap / CAPACITY). */
  readonly layout: PodCacheLayout;
  readonly buffer: SharedArrayBuffer;
  /** Length-tracking views (they follow a growable buffer's growth on every thread). */
  readonly i32: Int32Array;
  readonly i64: BigInt64Array;
  readonly f64: Float64Array;
  /** A byte view of fixed length: rebuilt by refresh() when CAPACITY has grown past `cap`. */
  bytes: Buffer;
  /** CAPACITY as last loaded by this thread; `bytes` covers at least this many slots. */
  cap: number;
  /** This thread's owner id in LOCK / ALLOC_LOCK words: threadId + 1 (0 means free). */
  readonly owner = threadId + 1;
  /** The uid being looked up, as UTF-8 (uidBytes()). */
  readonly uidScratch = Buffer.alloc(MAX_UID_BYTES * 4);
  /**
   * A head's chain as read under its LOCK (pod-cache-chain.ts chainSlots): preallocated for the
   * longest chain, so no critical section allocates (an allocation may start a GC pause while
   * the lock is held, and other threads then wait for it).
   */
  readonly chainScratch: Int32Array;

  constructor(buffer: SharedArrayBuffer, layout: PodCacheLayout) {
    this.layout = layout;
    this.buffer = buffer;
    this.i32 = new Int32Array(buffer);
    this.i64 = new BigInt64Array(buffer, 0, HEADER_BYTES / 8);
    this.f64 = new Float64Array(buffer);
    this.cap = Atomics.load(this.i32, H.CAPACITY);
    this.bytes = Buffer.from(buffer);
    this.chainScratch = new Int32Array(Math.ceil(layout.maxEntryBytes / layout.overflowBytes) + 1);
  }

  /** Follow CAPACITY (grown by any thread): returns it, with `bytes` covering that many slots. */
  refresh(): number {
    const cap = Atomics.load(this.i32, H.CAPACITY);
    if (cap !== this.cap) {
      // The grower grew the buffer before storing CAPACITY, so byteLength covers `cap` here.
      this.bytes = Buffer.from(this.buffer);
      this.cap = cap;
    }
    return cap;
  }

  /** Byte offset of a slot, following growth when the slot is beyond what this thread has seen. */
  slotBase(slot: number): number {
    if (slot >= this.cap && slot >= this.refresh()) {
      throw new CacheError('ERR_CACHE_CORRUPT', `pod cache slot ${slot} is beyond its capacity ${this.cap}`);
    }
    return this.layout.slotsByte + slot * this.layout.slotStride;
  }

  /** Whether the slot at byte `base` names the uid in uidScratch (`ulen` bytes). */
  slotNames(base: number, ulen: number): boolean {
    return this.i32[base / 4 + 1] === ulen && this.bytes.compare(this.uidScratch, 0, ulen, base + S.UID, base + S.UID + ulen) === 0;
  }

  /**
   * Entry changes made through this view (ENTRY_WRITES increments): foreignWrites() subtracts
   * them, so a thread learns whether any OTHER thread changed an entry.
   */
  ownEntryWrites = 0;

  /** After an entry changed (set that wrote, delete, recovery): count it in ENTRY_WRITES. */
  countEntryWrite(): void {
    Atomics.add(this.i32, H.ENTRY_WRITES, 1);
    this.ownEntryWrites++;
  }

  /**
   * ENTRY_WRITES minus this view's own: moves exactly when another thread changed an entry (an
   * Int32 that wraps; only equality of two readings means anything).
   */
  foreignEntryWrites(): number {
    return (Atomics.load(this.i32, H.ENTRY_WRITES) - this.ownEntryWrites) | 0;
  }

  /** After a write: move the NOTIFY generation and wake its waiters. */
  publish(): void {
    Atomics.add(this.i32, H.NOTIFY, 1);
    Atomics.notify(this.i32, H.NOTIFY);
  }

  /** UTF-8 of uid into uidScratch; returns its length. */
  uidBytes(uid: string): number {
    const len = this.uidScratch.write(uid, 0, 'utf8');
    if (len > MAX_UID_BYTES || Buffer.byteLength(uid, 'utf8') !== len || len === 0) {
      throw new CacheError('ERR_CACHE_INVALID_UID', `pod uid must be 1..${MAX_UID_BYTES} UTF-8 bytes, got ${JSON.stringify(uid.slice(0, 80))}`);
    }
    return len;
  }
}
