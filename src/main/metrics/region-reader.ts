/**
 * The main-thread side of one arena slot: takes a consistent snapshot of its series at scrape
 * time. Structure (descriptors, keys, cell allocation) is read between two equal even values of
 * the slot's seqlock; cell values are copied inside the same window (see metrics-arena.ts).
 * Decoded label values are cached per descriptor stamp, so a steady-state scrape decodes nothing.
 */
import {
  DESC_INTS, H_CELLS_USED, H_DROPPED, H_GENERATION, H_SERIES, H_STRUCT_SEQ, H_THREAD, type SlotView,
} from '../../shared/metrics/metrics-arena.js';
import { cellsPerSeries, METRIC_CATALOG } from '../../shared/metrics/metric-catalog.js';
import { seriesKey } from '../../shared/metrics/region-writer.js';

export interface SeriesSnapshot {
  readonly defIndex: number;
  readonly labelValues: readonly string[];
  /** seriesKey(defIndex, labelValues), computed once per series and cached. */
  readonly key: string;
  /** Owned copy; layout per cellsPerSeries (histogram: buckets non-cumulative, +Inf, sum). */
  readonly values: Float64Array;
}

export interface SlotSnapshot {
  readonly threadId: number;
  readonly generation: number;
  readonly series: readonly SeriesSnapshot[];
  /** Series the owner could not record (slot full). */
  readonly dropped: number;
}

/** How often a snapshot retries while the owner is mid-change before giving up for this scrape. */
const MAX_ATTEMPTS = 10_000;

const decoder = new TextDecoder();

interface CachedLabels { stamp: number; labelValues: readonly string[]; key: string }

export class RegionReader {
  private generation = -1;
  /** descriptor index → { stamp, labelValues } of the current generation. */
  private labelCache: Array<CachedLabels | undefined> = [];

  constructor(readonly slot: SlotView) {}

  /**
   * A consistent snapshot, or undefined if the owner kept changing the structure for
   * MAX_ATTEMPTS tries (the caller keeps its previous snapshot for this scrape).
   */
  snapshot(): SlotSnapshot | undefined {
    return this.read(false);
  }

  /**
   * A snapshot of a slot whose owner has exited, ignoring the seqlock: an owner that died in the
   * middle of a structural change leaves the sequence odd forever. A series whose key was being
   * written is skipped; every other series is whole, because nothing writes any more.
   */
  finalSnapshot(): SlotSnapshot {
    const s = this.read(true);
    if (s === undefined) throw new Error('unreachable: forced snapshot always succeeds');
    return s;
  }

  private read(force: boolean): SlotSnapshot | undefined {
    const { header } = this.slot;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const seq1 = Atomics.load(header, H_STRUCT_SEQ);
      if (!force && (seq1 & 1) !== 0) continue;
      const generation = Atomics.load(header, H_GENERATION);
      const n = Atomics.load(header, H_SERIES);
      const descs = this.slot.descs.slice(0, n * DESC_INTS);
      const cells = this.slot.cells.slice(0, Atomics.load(header, H_CELLS_USED));
      const decoded = this.decodeLabels(generation, descs, n, force);
      if (!force && (Atomics.load(header, H_STRUCT_SEQ) !== seq1 || decoded === undefined)) continue;
      if (decoded === undefined) return undefined;
      // Only a snapshot that passed the seqlock check may fill the cache.
      for (const [d, entry] of decoded.fresh) this.labelCache[d] = entry;
      const labels = decoded.labels;
      const series: SeriesSnapshot[] = [];
      for (let d = 0; d < n; d++) {
        const b = d * DESC_INTS;
        const defIndex = descs[b] as number;
        const def = METRIC_CATALOG[defIndex];
        if (defIndex < 0 || def === undefined || labels[d] === undefined) continue;
        const cellOffset = descs[b + 3] as number;
        const l = labels[d] as CachedLabels;
        series.push({
          defIndex,
          labelValues: l.labelValues,
          key: l.key,
          values: cells.subarray(cellOffset, cellOffset + cellsPerSeries(def)),
        });
      }
      return {
        threadId: Atomics.load(header, H_THREAD),
        generation,
        series,
        dropped: Atomics.load(header, H_DROPPED),
      };
    }
    return undefined;
  }

  /** Label values per descriptor, from the cache or decoded; undefined if a key is torn. */
  private decodeLabels(generation: number, descs: Int32Array, n: number, lenient: boolean): {
    labels: Array<CachedLabels | undefined>;
    fresh: Array<[number, CachedLabels]>;
  } | undefined {
    if (generation !== this.generation) {
      this.generation = generation;
      this.labelCache = [];
    }
    const out: Array<CachedLabels | undefined> = new Array(n);
    const fresh: Array<[number, CachedLabels]> = [];
    for (let d = 0; d < n; d++) {
      const b = d * DESC_INTS;
      if ((descs[b] as number) < 0) continue;
      const stamp = descs[b + 4] as number;
      const cached = this.labelCache[d];
      if (cached !== undefined && cached.stamp === stamp) {
        out[d] = cached;
        continue;
      }
      const off = descs[b + 1] as number;
      const len = descs[b + 2] as number;
      let parsed: unknown;
      try {
        parsed = JSON.parse(decoder.decode(this.slot.keys.slice(off, off + len)));
      } catch {
        parsed = undefined; // read mid-change
      }
      if (!Array.isArray(parsed) || !parsed.every((v): v is string => typeof v === 'string')) {
        if (lenient) continue; // leave out[d] undefined: the series is skipped
        return undefined; // the seqlock check will make us retry
      }
      const entry: CachedLabels = { stamp, labelValues: parsed, key: seriesKey(descs[b] as number, parsed) };
      fresh.push([d, entry]);
      out[d] = entry;
    }
    return { labels: out, fresh };
  }
}
