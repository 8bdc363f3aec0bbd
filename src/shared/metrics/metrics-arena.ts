/**
 * The metrics arena: one SharedArrayBuffer, allocated by the main thread and handed to every
 * thread (Piscina `workerData`, a PLEG Worker's `workerData`, or used directly on main). It is
 * cut into fixed-size *slots*; each recording thread claims one slot and is its only writer.
 * The main thread is the only reader, at scrape time, and the only one that frees a slot
 * (after the owning thread exited). No messages cross threads for metrics at all.
 *
 * Arena header (Int32 words at byte 0, written once by the main thread before sharing):
 *   [0] MAGIC  [1] VERSION  [2] slot count  [3] slotBytes  [4] maxSeries  [5] keyBytes
 *   [6] retire counter (main, Atomics.add on every retire; orders RETIRED slots for recycling)
 *
 * Slot layout (byte offsets from the slot base; slot i base = ARENA_HEADER_BYTES + i*slotBytes):
 *   header   64 B   Int32 words, see H_* below
 *   descs    maxSeries * DESC_INTS Int32   one descriptor per series:
 *                   [defIndex (-1 = deleted), keyOffset, keyLength, cellOffset, stamp]
 *   keys     keyBytes                       UTF-8 JSON array of the label values
 *   cells    the rest, Float64              series values (see metric-catalog cellsPerSeries)
 *
 * Slot header words (writer / readers):
 *   H_STATE      FREE → CLAIMING (claimer CAS) → CLAIMED (claimer store) → RETIRED (main, on
 *                retire) → CLAIMING (a later claimer, only when no slot is FREE; oldest first)
 *   H_THREAD     threadId of the owner (claimer, before CLAIMED is published)
 *   H_GENERATION bumped by every claim, so the reader drops caches of a previous owner
 *   H_STRUCT_SEQ seqlock over descs/keys/cell allocation: the owner makes it odd before a
 *                structural change (new, deleted or reused series, key compaction) and even after;
 *                the reader copies descs+cells between two equal even reads of it
 *   H_SERIES     descriptors in use (including deleted ones awaiting reuse); owner, Atomics.store
 *   H_KEY_USED   key bytes in use (owner)
 *   H_CELLS_USED cells in use (owner)
 *   H_DROPPED    series the owner could not record because the slot was full (owner)
 *   H_STAMP      last stamp handed to a descriptor (owner); stamps let the reader cache decoded keys
 *   H_RETIRED_AT the arena retire counter when main retired the slot (main)
 *
 * Why RETIRED is not FREE: Piscina reports a destroyed worker ('workerDestroy') while
 * worker.terminate() may still be stopping it, so its thread can write a last few values after
 * main folded the slot. Those late writes land in a slot nobody reads (lost, never double
 * counted); the slot is reused only when no FREE slot is left, oldest retirement first, by which
 * time the old thread is long gone. The claimer zeroes what the old owner used before publishing.
 *
 * Cell values are written with plain Float64 stores by their single writer, outside the seqlock:
 * a reader may see a value one observation old, never a value from another series. Counters only
 * grow, so a stale read is never a decrease. Aligned 8-byte stores do not tear on the 64-bit
 * platforms Node supports (the JS spec does not promise it for Float64Array; we rely on V8).
 */
import { MetricsError } from './metrics-errors.js';

export const ARENA_MAGIC = 0x5348_4d54; // "SHMT"
export const ARENA_VERSION = 1;
export const ARENA_HEADER_BYTES = 64;
export const SLOT_HEADER_BYTES = 64;
export const DESC_INTS = 5;

export const H_STATE = 0;
export const H_THREAD = 1;
export const H_GENERATION = 2;
export const H_STRUCT_SEQ = 3;
export const H_SERIES = 4;
export const H_KEY_USED = 5;
export const H_CELLS_USED = 6;
export const H_DROPPED = 7;
export const H_STAMP = 8;
export const H_RETIRED_AT = 9;
const A_RETIRE_COUNTER = 6;

export const SLOT_FREE = 0;
export const SLOT_CLAIMED = 1;
export const SLOT_CLAIMING = 2;
export const SLOT_RETIRED = 3;

export interface ArenaOptions {
  /** Slots: pool threads + replacements awaiting retire + PLEG thread + main. Default 32. */
  slots?: number;
  /** Bytes per slot, a multiple of 8. Default 1 MiB (virtual: untouched pages cost no RSS). */
  slotBytes?: number;
  /** Series per slot. Default 8192. */
  maxSeries?: number;
  /** Key bytes per slot. Default 256 KiB. */
  keyBytes?: number;
}

export const ARENA_DEFAULTS: Readonly<Required<ArenaOptions>> = Object.freeze({
  slots: 32,
  slotBytes: 1 << 20,
  maxSeries: 8192,
  keyBytes: 256 << 10,
});

/** The typed views of one slot. */
export interface SlotView {
  readonly index: number;
  readonly header: Int32Array;
  readonly descs: Int32Array;
  readonly keys: Uint8Array;
  readonly cells: Float64Array;
  readonly maxSeries: number;
}

export interface MetricsArena {
  readonly buffer: SharedArrayBuffer;
  readonly slotCount: number;
  slot(index: number): SlotView;
  /** Arena header words (Int32), for the retire counter. */
  readonly header: Int32Array;
}

/** Allocates a zeroed arena (main thread). Validates the options once, naming the bad one. */
export function createMetricsArena(opts: ArenaOptions = {}): MetricsArena {
  const o = { ...ARENA_DEFAULTS, ...opts };
  const int = (name: keyof ArenaOptions, v: number, min: number): void => {
    if (!Number.isInteger(v) || v < min) throw new MetricsError('ERR_METRICS_BAD_OPTION', `metrics arena: ${name} must be an integer >= ${min}, got ${v}`);
  };
  int('slots', o.slots, 1);
  int('slotBytes', o.slotBytes, 4096);
  int('maxSeries', o.maxSeries, 1);
  int('keyBytes', o.keyBytes, 64);
  if (o.slotBytes % 8 !== 0) throw new MetricsError('ERR_METRICS_BAD_OPTION', 'metrics arena: slotBytes must be a multiple of 8');
  if (cellsStart(o.maxSeries, o.keyBytes) + 8 * 64 > o.slotBytes) {
    throw new MetricsError('ERR_METRICS_BAD_OPTION', 'metrics arena: slotBytes too small for maxSeries and keyBytes');
  }
  const buffer = new SharedArrayBuffer(ARENA_HEADER_BYTES + o.slots * o.slotBytes);
  const h = new Int32Array(buffer, 0, 7);
  h.set([ARENA_MAGIC, ARENA_VERSION, o.slots, o.slotBytes, o.maxSeries, o.keyBytes, 0]);
  return openMetricsArena(buffer);
}

function cellsStart(maxSeries: number, keyBytes: number): number {
  const end = SLOT_HEADER_BYTES + maxSeries * DESC_INTS * 4 + keyBytes;
  return Math.ceil(end / 8) * 8;
}

/** Views over an arena received from another thread; throws ERR_METRICS_BAD_ARENA if it is not one. */
export function openMetricsArena(buffer: SharedArrayBuffer): MetricsArena {
  if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength < ARENA_HEADER_BYTES) {
    throw new MetricsError('ERR_METRICS_BAD_ARENA', 'metrics arena: not a SharedArrayBuffer arena');
  }
  const h = new Int32Array(buffer, 0, 6);
  const [magic, version, slots, slotBytes, maxSeries, keyBytes] = [h[0], h[1], h[2], h[3], h[4], h[5]] as number[];
  if (magic !== ARENA_MAGIC || version !== ARENA_VERSION || buffer.byteLength !== ARENA_HEADER_BYTES + slots! * slotBytes!) {
    throw new MetricsError('ERR_METRICS_BAD_ARENA', 'metrics arena: bad magic, version or size');
  }
  const views: SlotView[] = [];
  const cStart = cellsStart(maxSeries!, keyBytes!);
  for (let i = 0; i < slots!; i++) {
    const base = ARENA_HEADER_BYTES + i * slotBytes!;
    views.push(Object.freeze({
      index: i,
      header: new Int32Array(buffer, base, SLOT_HEADER_BYTES / 4),
      descs: new Int32Array(buffer, base + SLOT_HEADER_BYTES, maxSeries! * DESC_INTS),
      keys: new Uint8Array(buffer, base + SLOT_HEADER_BYTES + maxSeries! * DESC_INTS * 4, keyBytes!),
      cells: new Float64Array(buffer, base + cStart, (slotBytes! - cStart) / 8),
      maxSeries: maxSeries!,
    }));
  }
  return Object.freeze({
    buffer,
    header: new Int32Array(buffer, 0, 7),
    slotCount: slots!,
    slot(index: number): SlotView {
      const v = views[index];
      if (v === undefined) throw new RangeError(`metrics arena: no slot ${index}`);
      return v;
    },
  });
}

/**
 * Claims a slot for `threadId` (any thread): a FREE one, else the longest-RETIRED one. Returns
 * undefined when every slot is CLAIMED. The claimer zeroes what a previous owner used and resets
 * the owner-written header words before publishing CLAIMED.
 */
export function claimSlot(arena: MetricsArena, threadId: number): SlotView | undefined {
  for (let i = 0; i < arena.slotCount; i++) {
    const s = arena.slot(i);
    if (Atomics.compareExchange(s.header, H_STATE, SLOT_FREE, SLOT_CLAIMING) === SLOT_FREE) return publishClaim(s, threadId);
  }
  for (;;) {
    let oldest: SlotView | undefined;
    for (let i = 0; i < arena.slotCount; i++) {
      const s = arena.slot(i);
      if (Atomics.load(s.header, H_STATE) !== SLOT_RETIRED) continue;
      if (oldest === undefined || Atomics.load(s.header, H_RETIRED_AT) < Atomics.load(oldest.header, H_RETIRED_AT)) oldest = s;
    }
    if (oldest === undefined) return undefined;
    // Another claimer may win the race for the same slot: then look again.
    if (Atomics.compareExchange(oldest.header, H_STATE, SLOT_RETIRED, SLOT_CLAIMING) === SLOT_RETIRED) return publishClaim(oldest, threadId);
  }
}

function publishClaim(s: SlotView, threadId: number): SlotView {
  // Zero only what was used: untouched pages stay untouched (no RSS).
  s.descs.fill(0, 0, Atomics.load(s.header, H_SERIES) * DESC_INTS);
  s.keys.fill(0, 0, Atomics.load(s.header, H_KEY_USED));
  s.cells.fill(0, 0, Atomics.load(s.header, H_CELLS_USED));
  for (const w of [H_STRUCT_SEQ, H_SERIES, H_KEY_USED, H_CELLS_USED, H_DROPPED, H_STAMP, H_RETIRED_AT]) Atomics.store(s.header, w, 0);
  Atomics.store(s.header, H_THREAD, threadId);
  Atomics.add(s.header, H_GENERATION, 1);
  Atomics.store(s.header, H_STATE, SLOT_CLAIMED);
  return s;
}

/**
 * Marks a slot RETIRED (main thread only, after folding its values): readers skip it, and it
 * is recycled only when no FREE slot is left (see the module comment).
 */
export function retireSlot(arena: MetricsArena, slot: SlotView): void {
  Atomics.store(slot.header, H_RETIRED_AT, Atomics.add(arena.header, A_RETIRE_COUNTER, 1) + 1);
  Atomics.store(slot.header, H_STATE, SLOT_RETIRED);
}
