/**
 * The owner side of one arena slot: allocates series and writes their values. Exactly one
 * thread holds a RegionWriter for a slot (the one that claimed it); see metrics-arena.ts for
 * the layout and the publication protocol.
 *
 * Hot path: {@link add}/{@link set}/{@link observe} on a cell offset are plain Float64 writes.
 * Series lookup/allocation ({@link series}) costs a Map lookup; callers cache bound handles.
 */
import {
  DESC_INTS, H_CELLS_USED, H_DROPPED, H_KEY_USED, H_SERIES, H_STAMP, H_STRUCT_SEQ, type SlotView,
} from './metrics-arena.js';
import { cellsPerSeries, METRIC_CATALOG } from './metric-catalog.js';

/** Returned by {@link RegionWriter.series} when the slot is full: observations are dropped. */
export const DROPPED = -1;

const encoder = new TextEncoder();

export class RegionWriter {
  /** seriesKey → cell offset (or DROPPED). */
  private readonly offsets = new Map<string, number>();
  /** seriesKey → descriptor index, for deletion. */
  private readonly descIndex = new Map<string, number>();
  /** defIndex → descriptors of deleted series whose cells can be reused by that metric. */
  private readonly freeByDef = new Map<number, number[]>();

  constructor(readonly slot: SlotView) {}

  /** Cell offset of the series (defIndex, label values), allocating it on first use. */
  series(defIndex: number, labelValues: readonly string[]): number {
    const json = JSON.stringify(labelValues);
    const key = `${defIndex}:${json}`;
    const known = this.offsets.get(key);
    if (known !== undefined) return known;
    const off = this.allocate(defIndex, json, key);
    this.offsets.set(key, off);
    return off;
  }

  add(cell: number, v: number): void {
    if (cell >= 0) this.slot.cells[cell] = (this.slot.cells[cell] as number) + v;
  }

  set(cell: number, v: number): void {
    if (cell >= 0) this.slot.cells[cell] = v;
  }

  /** Histogram observation: one bucket cell (non-cumulative, +Inf last) and the sum cell. */
  observe(cell: number, buckets: readonly number[], v: number): void {
    if (cell < 0) return;
    const cells = this.slot.cells;
    let i = 0;
    while (i < buckets.length && v > (buckets[i] as number)) i++;
    cells[cell + i] = (cells[cell + i] as number) + 1;
    const sum = cell + buckets.length + 1;
    cells[sum] = (cells[sum] as number) + v;
  }

  /** Deletes a series (the kubelet's `Vec.Delete`): it leaves the exposition; its cells are reused. */
  delete(defIndex: number, labelValues: readonly string[]): boolean {
    const key = seriesKey(defIndex, labelValues);
    const d = this.descIndex.get(key);
    this.offsets.delete(key);
    if (d === undefined) return false;
    this.descIndex.delete(key);
    this.structural(() => {
      this.slot.descs[d * DESC_INTS] = -1;
    });
    const free = this.freeByDef.get(defIndex) ?? [];
    free.push(d);
    this.freeByDef.set(defIndex, free);
    return true;
  }

  private allocate(defIndex: number, labelJson: string, key: string): number {
    const def = METRIC_CATALOG[defIndex];
    if (def === undefined) throw new RangeError(`no metric with catalogue index ${defIndex}`);
    const { header, descs, cells } = this.slot;
    const bytes = encoder.encode(labelJson);
    const ncells = cellsPerSeries(def);
    const reuse = this.freeByDef.get(defIndex)?.pop();
    let d: number;
    let cellOffset: number;
    if (reuse !== undefined) {
      d = reuse;
      cellOffset = descs[d * DESC_INTS + 3] as number;
    } else {
      d = Atomics.load(header, H_SERIES);
      cellOffset = Atomics.load(header, H_CELLS_USED);
      if (d >= this.slot.maxSeries || cellOffset + ncells > cells.length) return this.drop();
    }
    if (Atomics.load(header, H_KEY_USED) + bytes.length > this.slot.keys.length) this.compactKeys();
    const keyOffset = Atomics.load(header, H_KEY_USED);
    if (keyOffset + bytes.length > this.slot.keys.length) {
      if (reuse !== undefined) this.freeByDef.get(defIndex)?.push(reuse);
      return this.drop();
    }
    this.structural(() => {
      this.slot.keys.set(bytes, keyOffset);
      Atomics.store(header, H_KEY_USED, keyOffset + bytes.length);
      cells.fill(0, cellOffset, cellOffset + ncells);
      const stamp = Atomics.add(header, H_STAMP, 1) + 1;
      descs.set([defIndex, keyOffset, bytes.length, cellOffset, stamp], d * DESC_INTS);
      if (reuse === undefined) {
        Atomics.store(header, H_CELLS_USED, cellOffset + ncells);
        Atomics.store(header, H_SERIES, d + 1);
      }
    });
    this.descIndex.set(key, d);
    return cellOffset;
  }

  /** Rewrites the key area with only live series' keys, closing the holes deletions left. */
  private compactKeys(): void {
    const { header, descs, keys } = this.slot;
    const n = Atomics.load(header, H_SERIES);
    const live: Array<{ d: number; bytes: Uint8Array }> = [];
    for (let d = 0; d < n; d++) {
      const b = d * DESC_INTS;
      if ((descs[b] as number) < 0) continue;
      const off = descs[b + 1] as number;
      live.push({ d, bytes: keys.slice(off, off + (descs[b + 2] as number)) });
    }
    this.structural(() => {
      let at = 0;
      for (const { d, bytes } of live) {
        keys.set(bytes, at);
        descs[d * DESC_INTS + 1] = at;
        descs[d * DESC_INTS + 4] = Atomics.add(header, H_STAMP, 1) + 1;
        at += bytes.length;
      }
      Atomics.store(header, H_KEY_USED, at);
    });
  }

  private drop(): number {
    Atomics.add(this.slot.header, H_DROPPED, 1);
    return DROPPED;
  }

  /** Runs a structural change inside the seqlock (odd while changing). */
  private structural(fn: () => void): void {
    Atomics.add(this.slot.header, H_STRUCT_SEQ, 1);
    try {
      fn();
    } finally {
      Atomics.add(this.slot.header, H_STRUCT_SEQ, 1);
    }
  }
}

/** The identity of a series: catalogue index + label values (also the aggregator's merge key). */
export function seriesKey(defIndex: number, labelValues: readonly string[]): string {
  return `${defIndex}:${JSON.stringify(labelValues)}`;
}
