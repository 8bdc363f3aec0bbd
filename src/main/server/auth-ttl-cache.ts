/**
 * A bounded cache of authentication/authorization answers with a per-entry TTL on the injected
 * clock (monotonic). At most `maxEntries`: inserting past it evicts the oldest insertion, so a
 * flood of distinct tokens cannot grow memory. Expired entries are dropped when read.
 */
import type { Clock } from '../../shared/clock/clock.js';

export class TtlCache<V> {
  readonly #clock: Clock;
  readonly #max: number;
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(opts: { clock: Clock; maxEntries: number }) {
    if (!Number.isSafeInteger(opts.maxEntries) || opts.maxEntries < 1) throw new RangeError(`TtlCache: maxEntries must be a positive integer, got ${opts.maxEntries}`);
    this.#clock = opts.clock;
    this.#max = opts.maxEntries;
  }

  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (e === undefined) return undefined;
    if (this.#clock.monotonic() >= e.expiresAt) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (!(ttlMs > 0)) return;
    this.#entries.delete(key);
    if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, expiresAt: this.#clock.monotonic() + ttlMs });
  }

  get size(): number {
    return this.#entries.size;
  }
}
