/**
 * A memoizing response decoder for the CRI list calls that return the same objects again and
 * again: ListPodSandbox and ListContainers. The PLEG lists every sandbox and container each
 * second; at 1,000 pods nearly all of them are byte-for-byte what the previous relist got, yet
 * protobuf decoding plus proto-loader's object conversion (defaults, enum and int64 strings)
 * of every item was ~40% of a steady relist and most of its garbage.
 *
 * How: the response's wire bytes are walked (no decode) into its repeated items. Each item is
 * keyed by its `id` (field 1 of both PodSandbox and Container). An item whose bytes equal the
 * bytes it had last time yields the object decoded then; the others are decoded together, by
 * the method's own proto-loader deserializer, from a response rebuilt from just those items.
 * So the result is exactly what the plain deserializer returns, item for item.
 *
 * Invariants:
 *  - A memoized object is shared by every later response that carries the same bytes, so it
 *    is deep-frozen when decoded: a consumer that mutates a listed object throws (strict mode)
 *    instead of corrupting the next relist's answer.
 *  - Anything this walker does not expect (another top-level field, a group, a truncated
 *    varint, an item without an id) falls back to the plain deserializer for the whole
 *    response: correctness never depends on the memo.
 *  - Memory is bounded: an entry not seen in the last {@link MEMO_KEEP_RESPONSES} responses is
 *    dropped, so the memo holds at most the items of that many responses (each bounded by the
 *    channel's maximum message size), and a copy of each item's bytes (never a view that would
 *    keep a whole response buffer alive), plus a copy of the last response's bytes: a response
 *    equal to it byte for byte (the steady state) returns its items again without a walk.
 *
 * One memo per method per CriClient (per channel): callers with different filters (the PLEG's
 * full list, a worker's per-pod list) only cost each other re-decodes, never wrong answers.
 */
import { deepFreeze } from '../immutable/deep-freeze.js';
import { readVarint32, writeVarint32 } from './protobuf-varint.js';

/** Entries not seen in this many walked (not byte-identical to the last) responses are dropped. */
export const MEMO_KEEP_RESPONSES = 4;

interface MemoEntry {
  bytes: Buffer;
  value: unknown;
  seen: number;
}

/** Field 1, length-delimited: the tag of both the repeated item field and the item's `id`. */
const TAG_FIELD1_LEN = 0x0a;

/** Position after the field at `pos` whose tag was `tag`, or null (groups, truncation). */
function skipField(buf: Buffer, pos: number, tag: number): number | null {
  switch (tag & 7) {
    case 0:
      return readVarint64End(buf, pos);
    case 1:
      return pos + 8 <= buf.length ? pos + 8 : null;
    case 2: {
      const len = readVarint32(buf, pos);
      if (!len || len[1] + len[0] > buf.length) return null;
      return len[1] + len[0];
    }
    case 5:
      return pos + 4 <= buf.length ? pos + 4 : null;
    default:
      return null;
  }
}

/** End of a varint of up to 64 bits (a value is not needed, only where it ends). */
function readVarint64End(buf: Buffer, pos: number): number | null {
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) return null;
    if ((buf[pos++] as number) < 0x80) return pos;
  }
  return null;
}

/** The item's `id` (field 1, a string), or null when it has none or is malformed. */
function itemId(item: Buffer): string | null {
  let pos = 0;
  while (pos < item.length) {
    const t = readVarint32(item, pos);
    if (!t) return null;
    const [tag, next] = t;
    if (tag === TAG_FIELD1_LEN) {
      const len = readVarint32(item, next);
      if (!len || len[1] + len[0] > item.length) return null;
      return item.toString('utf8', len[1], len[1] + len[0]);
    }
    const after = skipField(item, next, tag);
    if (after === null) return null;
    pos = after;
  }
  return null;
}

/** The repeated field-1 items of a response, as views into `buf`; null if it has anything else. */
function splitItems(buf: Buffer): Buffer[] | null {
  const items: Buffer[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const t = readVarint32(buf, pos);
    if (!t || t[0] !== TAG_FIELD1_LEN) return null;
    const len = readVarint32(buf, t[1]);
    if (!len || len[1] + len[0] > buf.length) return null;
    items.push(buf.subarray(len[1], len[1] + len[0]));
    pos = len[1] + len[0];
  }
  return items;
}

/**
 * Wraps `deserialize` (a proto-loader response deserializer for a message whose only field is
 * `repeated Item <listField> = 1`) with the memo.
 */
export class CriListMemo {
  readonly #deserialize: (buf: Buffer) => unknown;
  readonly #listField: string;
  readonly #entries = new Map<string, MemoEntry>();
  /**
   * The last response decoded through the memo, byte for byte (a copy), and its items: an
   * identical next response (an idle node's relist) costs one comparison instead of a walk.
   */
  #last: { bytes: Buffer; items: unknown[] } | undefined;
  #responses = 0;
  /** Items decoded vs reused since creation (tests, diagnostics). */
  readonly stats = { decoded: 0, reused: 0, fallbacks: 0 };

  constructor(opts: { deserialize: (buf: Buffer) => unknown; listField: string }) {
    if (typeof opts?.deserialize !== 'function') throw new TypeError('CriListMemo: deserialize is required');
    if (!opts.listField) throw new TypeError('CriListMemo: listField is required');
    this.#deserialize = opts.deserialize;
    this.#listField = opts.listField;
  }

  /** Entries held now (tests: the bound). */
  get size(): number {
    return this.#entries.size;
  }

  readonly deserialize = (buf: Buffer): unknown => {
    const last = this.#last;
    if (last !== undefined && last.bytes.equals(buf)) {
      this.stats.reused += last.items.length;
      return { [this.#listField]: last.items.slice() }; // a fresh array: callers may reorder theirs
    }
    this.#last = undefined;
    const items = splitItems(buf);
    const ids = items?.map(itemId);
    if (!items || !ids || ids.some((id) => id === null)) {
      this.stats.fallbacks++;
      return this.#deserialize(buf);
    }
    const gen = ++this.#responses;
    const out: unknown[] = new Array(items.length);
    const missing: number[] = [];
    for (let i = 0; i < items.length; i++) {
      const e = this.#entries.get(ids[i] as string);
      if (e && e.bytes.equals(items[i] as Buffer)) {
        e.seen = gen;
        out[i] = e.value;
      } else {
        missing.push(i);
      }
    }
    if (missing.length > 0) {
      const decoded = this.#decodeItems(missing.map((i) => items[i] as Buffer));
      if (!decoded || decoded.length !== missing.length) {
        this.stats.fallbacks++;
        return this.#deserialize(buf);
      }
      missing.forEach((i, k) => {
        const value = decoded[k];
        deepFreeze(value);
        out[i] = value;
        this.#entries.set(ids[i] as string, { bytes: Buffer.from(items[i] as Buffer), value, seen: gen });
      });
    }
    this.stats.decoded += missing.length;
    this.stats.reused += items.length - missing.length;
    for (const [id, e] of this.#entries) if (gen - e.seen >= MEMO_KEEP_RESPONSES) this.#entries.delete(id);
    this.#last = { bytes: Buffer.from(buf), items: out };
    return { [this.#listField]: out.slice() };
  };

  /** Decodes `items` in one call of the plain deserializer (a response holding only them). */
  #decodeItems(items: Buffer[]): unknown[] | null {
    const parts: Buffer[] = [];
    for (const it of items) {
      const head: number[] = [TAG_FIELD1_LEN];
      writeVarint32(head, it.length);
      parts.push(Buffer.from(head), it);
    }
    const res = this.#deserialize(Buffer.concat(parts)) as Record<string, unknown> | null;
    const list = res?.[this.#listField];
    return Array.isArray(list) ? list : null;
  }
}
