/**
 * SharedArrayBuffer layout of the pod cache. Every offset below is in BYTES from the start of
 * the buffer; Int32 words are accessed through one Int32Array over the whole buffer (index =
 * byte offset / 4), the global timestamp through a BigInt64Array, slot timestamps through a
 * Float64Array (the Int32 and Float64 views track a growable buffer's length), bytes through a Buffer (rebuilt
 * by each thread when the buffer grew). All regions are 8-byte aligned.
 *
 * ┌──────────── HEADER (128 bytes) ───────────────────────────────────────────────────────────┐
 * │ off  field          type   writer                         readers / meaning               │
 * │   0  MAGIC          i32    creator (once)                 attach: 0x53484331 ("SHC1")     │
 * │   4  VERSION        i32    creator (once)                 attach: LAYOUT_VERSION (4)      │
 * │   8  CAPACITY       i32    creator; grower (ALLOC_LOCK)   all (Atomics.load): slots now   │
 * │                            Atomics.store after the grow   (see "Growth" below)            │
 * │  12  BYTES_PER_SLOT i32    creator (once)                 all: payload bytes per slot     │
 * │  16  INDEX_SIZE     i32    creator (once)                 all: buckets, power of two      │
 * │  20  NOTIFY         i32    every writer: Atomics.add      waiters: Atomics.wait(Async)    │
 * │                            after each publish, then Atomics.notify (a generation counter) │
 * │  24  ALLOC_LOCK     i32    writers, CAS 0→owner / store 0  guards INDEX, FREE, slot owners │
 * │                            (owner = the holder's threadId + 1, so a dead holder is known) │
 * │  28  INDEX_SEQ      i32    holder of ALLOC_LOCK           readers: seqlock of the index   │
 * │                            (odd while the index is being rebuilt to drop tombstones)      │
 * │  32  SLOTS_USED     i32    holder of ALLOC_LOCK           stats                           │
 * │  36  TOMBSTONES     i32    holder of ALLOC_LOCK           rebuild trigger                 │
 * │  40  FREE_TOP       i32    holder of ALLOC_LOCK           number of entries in FREE       │
 * │  44  BYTES_USED     i32    slot writers, Atomics.add      stats                           │
 * │  48  FULL_TOTAL     i32    writers, Atomics.add           stats (ERR_CACHE_FULL count)    │
 * │  52  OVERSIZE_TOTAL i32    writers, Atomics.add           stats                           │
 * │  56  RECOVERED      i32    recoverThread: Atomics.add     PLEG: reinspect every pod when  │
 * │                                                           it moves (count of recoveries)  │
 * │  60  MAX_CAPACITY   i32    creator (once)                 all: CAPACITY never exceeds it  │
 * │  64  GLOBAL_TS      i64    updateTime: CAS loop, max only readers: Atomics.load; UNSET =   │
 * │                                                           -2^63 (kubelet's nil timestamp) │
 * │  72  UNSTORED       i32    updateTime (the PLEG), stored  readers: pods the last relist    │
 * │                            BEFORE GLOBAL_TS moves         listed but could not store; > 0 │
 * │                                                           makes "no entry" mean unknown   │
 * │  76  GROW_TOTAL     i32    grower, Atomics.add            stats: times CAPACITY grew      │
 * │  80  TRIMMED_TOTAL  i32    writers, Atomics.add           stats: entries trimmed to fit   │
 * │  84  ENTRY_WRITES   i32    every entry change: Atomics.add PLEG: foreignWrites() — a count │
 * │                            after a set that wrote (not    of entry changes (wraps; compare │
 * │                            'stale'), each delete, each    for equality only) minus the    │
 * │                            recovery (after its repairs)   reader's own thread's: when it  │
 * │                                                           has not moved, no other thread  │
 * │                                                           changed any entry since         │
 * │  88  MAX_ENTRY      i32    creator (once)                 all: most bytes one entry may    │
 * │                                                           span (head + overflow slots)    │
 * │  92  OVERFLOW_USED  i32    holder of ALLOC_LOCK           stats: slots held as overflow   │
 * │  96  OVERSIZE_NOW   i32    head LOCK holders, Atomics.add stats/health: entries holding   │
 * │                            when FLAGS.OVERSIZE changes    ERR_CACHE_ENTRY_TOO_LARGE now   │
 * │                            (set, delete, recovery)        (pods with no usable status)    │
 * │ 100  (reserved to 128)                                                                    │
 * ├──────────── INDEX (INDEX_SIZE × i32) at 128, sized for MAX_CAPACITY ───────────────────────┤
 * │ Open addressing, linear probing on FNV-1a(uid bytes). Bucket value: 0 = empty (ends a     │
 * │ probe), -1 = tombstone (deleted; probing continues), k ≥ 1 = slot k-1. Written only under │
 * │ ALLOC_LOCK with Atomics.store; read lock-free with Atomics.load. INDEX_SIZE ≥ 2×MAX_CAPACITY│
 * │ and the index is rebuilt (INDEX_SEQ odd→even) when tombstones exceed INDEX_SIZE/4, so a   │
 * │ probe always meets an empty bucket.                                                       │
 * ├──────────── FREE (MAX_CAPACITY × i32) ────────────────────────────────────────────────────┤
 * │ Stack of free slot numbers, FREE[0 .. FREE_TOP). Only under ALLOC_LOCK.                   │
 * ├──────────── SLOTS (CAPACITY × SLOT_STRIDE; the buffer's end, grows) ──────────────────────┤
 * │ A slot is free (UID_LEN 0), a HEAD (UID_LEN > 0: one pod's entry) or an OVERFLOW slot    │
 * │ (UID_LEN = -1: a continuation of one head's payload). Head slot:                          │
 * │ +0   SEQ          i32  seqlock: even = stable, odd = a writer is inside                    │
 * │ +4   UID_LEN      i32  0 = slot free; -1 = overflow; else byte length of UID              │
 * │ +8   PAYLOAD_LEN  i32  0 = no entry yet (slot reserved); else bytes of the WHOLE payload  │
 * │                        (head part + every overflow segment), at most MAX_ENTRY            │
 * │ +12  LOCK         i32  writer's owner id (threadId + 1) while it holds the slot, else 0    │
 * │ +16  NEXT         i32  0 = no overflow; k ≥ 1 = first overflow slot is k-1                │
 * │ +20  CHAIN        i32  number of overflow slots in the chain from NEXT                   │
 * │ +24  TIMESTAMP    f64  entry timestamp, ms                                                │
 * │ +32  UID          64 bytes, UTF-8                                                         │
 * │ +96  FLAGS        i32  bit 0 OVERSIZE: the entry is an ERR_CACHE_ENTRY_TOO_LARGE          │
 * │                        placeholder (counted in OVERSIZE_NOW while it stands)              │
 * │ +104 PAYLOAD      BYTES_PER_SLOT bytes: the first bytes of the pod-status-codec encoding  │
 * │ Everything after LOCK is written only by the thread whose owner id is in LOCK.            │
 * │ Overflow slot (owned by the head whose chain reaches it; SEQ is never used):              │
 * │ +4   UID_LEN      i32  -1                                                                 │
 * │ +8   PAYLOAD_LEN  i32  bytes of this segment, 1 .. SLOT_STRIDE-24                         │
 * │ +12  LOCK         i32  unused by the chain's writers (always released to 0): a writer   │
 * │                        that looked the slot up as a head before it was freed may still  │
 * │                        CAS it (0 → owner), find UID_LEN no longer naming its pod and     │
 * │                        release it; so LOCK keeps its one protocol for every slot         │
 * │ +20  RESERVED     i32  the owner id of a writer that took the slot from FREE and has     │
 * │                        not published it in a head yet, or that unlinked it and has not   │
 * │                        pushed it on FREE yet; 0 otherwise                                 │
 * │ +16  NEXT         i32  0 = last segment; k ≥ 1 = next overflow slot k-1                   │
 * │ +24  DATA         SLOT_STRIDE-24 bytes of payload                                         │
 * │ An overflow slot's words are written only by the holder of its head's LOCK (or, before   │
 * │ it is linked / after it is unlinked, by the reserving thread), so the HEAD's SEQ guards   │
 * │ the whole chain: a reader that follows it under one stable head SEQ copied one entry.     │
 * └───────────────────────────────────────────────────────────────────────────────────────────┘
 *
 * Variable-size entries (a pod with 14 or 200 containers; no container-count limit): an entry
 * whose encoding exceeds BYTES_PER_SLOT continues in a chain of overflow slots taken from the
 * same FREE stack (so growth, recovery and the capacity limit cover them). A writer needing n
 * overflow slots whose head's chain is not already n long RESERVES n fresh slots under
 * ALLOC_LOCK before it takes the head's LOCK (lock order is always ALLOC_LOCK → slot LOCK; a
 * head LOCK holder never waits for ALLOC_LOCK), so it rewrites in place only a chain of the
 * right length, and otherwise publishes a wholly new chain and frees the old one after.
 *
 * Publication protocol (any writer thread):
 *   1. encode the entry into a private buffer (outside any lock; size checked here); when it
 *      needs n > 0 overflow slots and the head's chain (CHAIN, read under its seqlock) is not n
 *      long: pop n slots from FREE under ALLOC_LOCK (growing as needed), each marked UID_LEN -1
 *      and RESERVED = owner, OVERFLOW_USED += n;
 *   2. acquire the head: CAS LOCK 0 → owner (two writers never interleave), then SEQ s → s+1
 *      (odd: readers wait);
 *   3. check UID still names the pod (it may have been deleted and the slot reused: retry) and
 *      that the stored TIMESTAMP is not newer (newer wins: release unchanged, 'stale', free the
 *      reservation); without a reservation, check CHAIN is still n (else release unchanged and
 *      go back to 1);
 *   4. when a new chain replaces an old one: Atomics.store RESERVED = owner on every old
 *      overflow slot (reserved again BEFORE it becomes unreachable); write the overflow segments (DATA,
 *      PAYLOAD_LEN, NEXT), then the head's TIMESTAMP, PAYLOAD, PAYLOAD_LEN, NEXT, CHAIN with
 *      plain stores (NEXT with Atomics.store);
 *   5. Atomics.store(SEQ, s+2) — publishes (s when nothing was written); Atomics.store(LOCK, 0);
 *      then CAS RESERVED owner → 0 on the new chain's slots (AFTER they are reachable), under
 *      ALLOC_LOCK push the old chain's slots on FREE (UID_LEN 0), and Atomics.add(NOTIFY, 1) and
 *      Atomics.notify.
 * So at every instant an overflow slot is reachable from its head's published NEXT or carries
 * a reservation in RESERVED: rebuilding FREE (recovery) never frees a slot a live writer uses.
 * Readers (any thread): s0 = Atomics.load(SEQ); if odd, back off and retry; copy UID,
 * TIMESTAMP and PAYLOAD out, following NEXT through PAYLOAD_LEN bytes of overflow segments
 * (every slot number, marker and length bounds-checked: a chain read while a writer replaces
 * it may point anywhere, and the check below discards it); s1 = Atomics.load(SEQ); if
 * s1 !== s0 the read was torn: retry. A chain that fails a bounds check under a stable SEQ is
 * ERR_CACHE_CORRUPT. Payloads are decoded only from the private copy after the check, so a
 * reader never decodes a half-written entry. (Atomics operations are sequentially consistent
 * and V8 does not move plain buffer accesses across them, which is what makes a seqlock sound
 * in JS.) A freed overflow slot may be reused by another pod while a reader still follows the
 * old chain; it was unlinked under the head's odd SEQ first, so that reader's s1 differs.
 *
 * Slot ownership: a pod gets a slot on its first `set` (ALLOC_LOCK held: pop FREE, write UID
 * under the slot's seqlock, then publish the index bucket) and loses it on `delete` (ALLOC_LOCK
 * held: clear UID and the chain under the seqlock, bucket → tombstone, push the head and its
 * overflow slots on FREE).
 *
 * Growth (the capacity follows the runtime, not --max-pods: orphans and finished pods keep
 * their entry until the PLEG sees them gone, and nothing bounds how many the runtime holds):
 * the buffer is a growable SharedArrayBuffer (maxByteLength = the layout at MAX_CAPACITY; only
 * address space is reserved, pages are committed as it grows). A writer that needs a slot when
 * FREE is empty, holding ALLOC_LOCK: buffer.grow() to the new CAPACITY's size (new memory is
 * zero: free slots), pushes the new slot numbers on FREE, then Atomics.store(CAPACITY) and
 * FREE_TOP. Readers of other threads learn of a new slot only through an index bucket published
 * after that store, so a slot number they load is always < the CAPACITY they load next; each
 * thread's Int32/Float64 views track the buffer's length, and its byte view is rebuilt when it
 * meets a slot beyond the CAPACITY it last saw.
 *
 * Running out:
 *   - slots: only at MAX_CAPACITY (or when the OS refuses the pages): `set` of a pod without a
 *     slot throws CacheError ERR_CACHE_FULL and increments FULL_TOTAL; existing entries are
 *     untouched. The PLEG then passes the number of pods it could not store to updateTime
 *     (UNSTORED): while it is non-zero a pod without an entry reads as unknown (an empty status
 *     with error ERR_CACHE_FULL, which pod workers never sync on), not as a pod with no runtime
 *     objects, which would make a worker create a second sandbox.
 *   - bytes: an entry of any size up to MAX_ENTRY (default 16 MiB: a pod of 10,000 containers
 *     with one dead instance each) is stored whole, spanning overflow slots. Beyond MAX_ENTRY it
 *     is first trimmed the way the kubelet reads a status anyway (pod-status-trim.ts: the oldest
 *     exited container instances beyond the newest per name, then old exited sandboxes;
 *     TRIMMED_TOTAL += 1, `set` returns 'trimmed'). Only a status whose trimmed form still
 *     exceeds MAX_ENTRY, or whose overflow slots cannot be had (the cache is at MAX_CAPACITY),
 *     is replaced by an entry with an empty status and error ERR_CACHE_ENTRY_TOO_LARGE
 *     (OVERSIZE_TOTAL += 1; `set` returns 'oversize'; the PLEG counts the pod in UNSTORED, so
 *     health fails while it lasts). Never a truncated or older status.
 *
 * A writer that dies inside a critical section (worker.terminate(), a crash) leaves its owner id
 * in LOCK / ALLOC_LOCK and maybe SEQ odd. Locks are recoverable: the main thread, told by the
 * thread's 'exit' event, calls recoverThread(threadId), which takes over every lock word holding
 * that owner id and repairs what it guarded:
 *   - a slot with SEQ odd may hold a torn payload: when it had an entry (PAYLOAD_LEN > 0) the
 *     entry becomes an empty status with error ERR_CACHE_WRITER_DIED at the stored TIMESTAMP
 *     (pod workers never sync on an entry's error; the PLEG rewrites it) with no chain, SEQ
 *     moves to even;
 *   - an overflow slot reserved by the dead thread: its RESERVED returns to 0;
 *   - when it held ALLOC_LOCK, or any chain or reservation was touched: INDEX, FREE and the
 *     counters are rebuilt under ALLOC_LOCK (below), an overflow slot counting as owned iff a
 *     head's chain reaches it or a live thread reserved it (RESERVED ≠ 0);
 *   - ALLOC_LOCK: INDEX, FREE, SLOTS_USED, TOMBSTONES and BYTES_USED are rebuilt from the slots
 *     (a slot is owned iff UID_LEN > 0), INDEX_SEQ ends even;
 *   - RECOVERED += 1 and NOTIFY moves, so the PLEG reinspects every pod at its next relist.
 * Until then, readers and writers waiting on such a lock give up after LOCK_STUCK_WAITS × 1 ms
 * with ERR_CACHE_LOCK_STUCK (callers treat it per pod and retry), never forever.
 *
 * Where each part is implemented: reads, writes and updateTime in pod-cache-shared.ts; the lock
 * and seqlock words in pod-cache-locks.ts; slot ownership, INDEX and FREE in pod-cache-slots.ts;
 * overflow chains (reserve, write, read, free) in pod-cache-chain.ts; growth in
 * pod-cache-growth.ts; recoverThread in pod-cache-recovery.ts.
 */
import { CacheError } from './pod-cache-errors.js';

export const MAGIC = 0x53484331;
export const LAYOUT_VERSION = 4;

/** Int32 word indexes of the header fields. */
export const H = Object.freeze({
  MAGIC: 0,
  VERSION: 1,
  CAPACITY: 2,
  BYTES_PER_SLOT: 3,
  INDEX_SIZE: 4,
  NOTIFY: 5,
  ALLOC_LOCK: 6,
  INDEX_SEQ: 7,
  SLOTS_USED: 8,
  TOMBSTONES: 9,
  FREE_TOP: 10,
  BYTES_USED: 11,
  FULL_TOTAL: 12,
  OVERSIZE_TOTAL: 13,
  RECOVERED: 14,
  MAX_CAPACITY: 15,
  UNSTORED: 18,
  GROW_TOTAL: 19,
  TRIMMED_TOTAL: 20,
  ENTRY_WRITES: 21,
  MAX_ENTRY: 22,
  OVERFLOW_USED: 23,
  OVERSIZE_NOW: 24,
});
/** BigInt64 index of GLOBAL_TS (byte 64). */
export const GLOBAL_TS_I64 = 8;
export const GLOBAL_TS_UNSET = -(2n ** 63n);

export const HEADER_BYTES = 128;
export const MAX_UID_BYTES = 64;
/** Slot field byte offsets, relative to the slot start. */
export const S = Object.freeze({ SEQ: 0, UID_LEN: 4, PAYLOAD_LEN: 8, LOCK: 12, NEXT: 16, CHAIN: 20, TIMESTAMP: 24, UID: 32, FLAGS: 96, PAYLOAD: 104 });
/** An overflow slot's reservation word (the CHAIN word of a head; see the layout above). */
export const RESERVED = S.CHAIN;
/** FLAGS bits of a head slot. */
export const FLAG_OVERSIZE = 1;
export const SLOT_HEADER_BYTES = S.PAYLOAD;
/** UID_LEN of an overflow slot. */
export const OVERFLOW_MARK = -1;
/** Byte offset of an overflow slot's DATA (its payload segment runs to the end of the stride). */
export const OVERFLOW_DATA = 24;
/**
 * 1 ms waits before a lock is declared stuck (≈ 1 s). Critical sections last microseconds; a
 * lock held longer belongs to a dead thread, which recoverThread releases once its exit is seen.
 */
export const LOCK_STUCK_WAITS = 1000;

export const POD_CACHE_DEFAULTS = Object.freeze({
  /** A typical 2-container pod encodes to ~760 bytes (64-hex ids); 4 KiB fits ~12 container instances. */
  bytesPerSlot: 4096,
  /** Most bytes one entry spans (head + overflow): ~10,000 containers with a dead instance each. */
  maxEntryBytes: 16 << 20,
});
/** Upper bound of the maxEntryBytes option (PAYLOAD_LEN is an i32; a larger entry is not a pod). */
const MAX_ENTRY_LIMIT = 64 << 20;
/** 1 GiB: BYTES_USED is an i32 counter. */
const MAX_TOTAL_BYTES = 1 << 30;

export interface PodCacheLayout {
  /** Slots at creation (CAPACITY starts here; read the live value from the header). */
  capacity: number;
  /** CAPACITY never exceeds this; INDEX and FREE are sized for it. */
  maxCapacity: number;
  bytesPerSlot: number;
  indexSize: number;
  indexByte: number;
  freeByte: number;
  slotsByte: number;
  slotStride: number;
  /** Buffer bytes at `capacity`. */
  totalBytes: number;
  /** Buffer bytes at `maxCapacity` (the growable buffer's maxByteLength). */
  maxBytes: number;
  /** Most payload bytes one entry may span (MAX_ENTRY). */
  maxEntryBytes: number;
  /** Payload bytes one overflow slot holds (slotStride - OVERFLOW_DATA). */
  overflowBytes: number;
}

const align8 = (n: number): number => (n + 7) & ~7;
const MAX_SLOTS = 1 << 20;

function checkSlots(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > MAX_SLOTS) {
    throw new CacheError('ERR_CACHE_INVALID_OPTION', `${name} must be an integer in [1, ${MAX_SLOTS}], got ${n}`);
  }
}

export function computeLayout(capacity: number, bytesPerSlot: number, maxCapacity = capacity, maxEntryBytes: number = POD_CACHE_DEFAULTS.maxEntryBytes): PodCacheLayout {
  checkSlots('capacity', capacity);
  checkSlots('maxCapacity', maxCapacity);
  if (maxCapacity < capacity) {
    throw new CacheError('ERR_CACHE_INVALID_OPTION', `maxCapacity (${maxCapacity}) must be at least capacity (${capacity})`);
  }
  if (!Number.isInteger(bytesPerSlot) || bytesPerSlot < 256 || bytesPerSlot > 1 << 20) {
    throw new CacheError('ERR_CACHE_INVALID_OPTION', `bytesPerSlot must be an integer in [256, 1048576], got ${bytesPerSlot}`);
  }
  if (maxCapacity * bytesPerSlot > MAX_TOTAL_BYTES) {
    throw new CacheError('ERR_CACHE_INVALID_OPTION', `maxCapacity × bytesPerSlot must be at most 1 GiB, got ${maxCapacity * bytesPerSlot}`);
  }
  if (!Number.isInteger(maxEntryBytes) || maxEntryBytes < bytesPerSlot || maxEntryBytes > MAX_ENTRY_LIMIT) {
    throw new CacheError('ERR_CACHE_INVALID_OPTION', `maxEntryBytes must be an integer in [bytesPerSlot (${bytesPerSlot}), ${MAX_ENTRY_LIMIT}], got ${maxEntryBytes}`);
  }
  let indexSize = 16;
  while (indexSize < maxCapacity * 2) indexSize *= 2;
  const indexByte = HEADER_BYTES;
  const freeByte = align8(indexByte + indexSize * 4);
  const slotsByte = align8(freeByte + maxCapacity * 4);
  const slotStride = align8(SLOT_HEADER_BYTES + bytesPerSlot);
  return {
    capacity, maxCapacity, bytesPerSlot, indexSize, indexByte, freeByte, slotsByte, slotStride,
    totalBytes: slotsByte + capacity * slotStride,
    maxBytes: slotsByte + maxCapacity * slotStride,
    maxEntryBytes,
    overflowBytes: slotStride - OVERFLOW_DATA,
  };
}

/** Buffer bytes holding `capacity` slots of this layout. */
export function bytesForCapacity(l: PodCacheLayout, capacity: number): number {
  return l.slotsByte + capacity * l.slotStride;
}

/** A zeroed buffer for the layout: growable up to maxBytes when maxCapacity > capacity. */
export function allocateBuffer(l: PodCacheLayout): SharedArrayBuffer {
  if (l.maxCapacity === l.capacity) return new SharedArrayBuffer(l.totalBytes);
  // Growable SharedArrayBuffer (ES2024; Node >= 20): lib ES2023 lacks the options argument.
  const Growable = SharedArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => SharedArrayBuffer;
  return new Growable(l.totalBytes, { maxByteLength: l.maxBytes });
}

/** Write the header and the free stack of a fresh (zeroed) buffer. */
export function initBuffer(buf: SharedArrayBuffer, l: PodCacheLayout): void {
  const i32 = new Int32Array(buf);
  const i64 = new BigInt64Array(buf, 0, HEADER_BYTES / 8);
  i32[H.CAPACITY] = l.capacity;
  i32[H.MAX_CAPACITY] = l.maxCapacity;
  i32[H.BYTES_PER_SLOT] = l.bytesPerSlot;
  i32[H.INDEX_SIZE] = l.indexSize;
  i32[H.MAX_ENTRY] = l.maxEntryBytes;
  i64[GLOBAL_TS_I64] = GLOBAL_TS_UNSET;
  const free = l.freeByte / 4;
  // Pop order 0, 1, 2, …: slot capacity-1 at the bottom.
  for (let k = 0; k < l.capacity; k++) i32[free + k] = l.capacity - 1 - k;
  i32[H.FREE_TOP] = l.capacity;
  i32[H.VERSION] = LAYOUT_VERSION;
  Atomics.store(i32, H.MAGIC, MAGIC);
}

/**
 * Read and validate the layout of a buffer made by createPodCache (possibly in another thread).
 * `capacity` is the CAPACITY seen now (it may grow later; SharedPodCache follows it).
 */
export function readLayout(buf: SharedArrayBuffer): PodCacheLayout {
  if (!(buf instanceof SharedArrayBuffer) || buf.byteLength < HEADER_BYTES) {
    throw new CacheError('ERR_CACHE_BAD_BUFFER', 'not a pod cache SharedArrayBuffer');
  }
  const i32 = new Int32Array(buf, 0, HEADER_BYTES / 4);
  if (Atomics.load(i32, H.MAGIC) !== MAGIC || i32[H.VERSION] !== LAYOUT_VERSION) {
    throw new CacheError('ERR_CACHE_BAD_BUFFER', `pod cache magic/version mismatch (want version ${LAYOUT_VERSION})`);
  }
  let l: PodCacheLayout;
  try {
    l = computeLayout(Atomics.load(i32, H.CAPACITY), i32[H.BYTES_PER_SLOT] ?? 0, i32[H.MAX_CAPACITY] ?? 0, i32[H.MAX_ENTRY] ?? 0);
  } catch (err) {
    if (err instanceof CacheError) throw new CacheError('ERR_CACHE_BAD_BUFFER', `pod cache header: ${err.message}`);
    throw err;
  }
  const maxByteLength = (buf as unknown as { maxByteLength?: number }).maxByteLength ?? buf.byteLength;
  if (buf.byteLength < l.totalBytes || maxByteLength < l.maxBytes || l.indexSize !== i32[H.INDEX_SIZE]) {
    throw new CacheError('ERR_CACHE_BAD_BUFFER', 'pod cache buffer size does not match its header');
  }
  return l;
}
