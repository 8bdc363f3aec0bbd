/**
 * Rewrites an invalid `:authority` inside HPACK header blocks (RFC 7541) so that Node's HTTP/2
 * server accepts the request, while keeping the server's HPACK decoder state identical in
 * shape to the client's encoder state.
 *
 * Why: grpc-go clients of the cri-tools v1.26 / kubelet ≤ 1.25 generation dial a unix socket
 * with the socket PATH as target and send it as `:authority` (e.g. `/run/x/sim.sock`).
 * nghttp2 (inside Node's http2) validates a server request's `:authority` against RFC 3986
 * authority characters and resets the stream with PROTOCOL_ERROR; containerd (Go's HTTP/2)
 * accepts it. Node exposes no switch for that check, so the simulated runtime rewrites the
 * value before nghttp2 sees it (h2-authority-shim.ts finds the header blocks).
 *
 * How the decoder stays consistent: the client's encoder and the server's decoder both hold a
 * dynamic table whose evictions depend only on entry SIZES (name length + value length + 32,
 * RFC 7541 §4.1). An invalid value is replaced by a value of the SAME length (each octet
 * outside the allowed set becomes `_`), so every insertion, eviction and index means the same
 * on both sides; an entry inserted with a rewritten value is later referenced by index and
 * then yields the rewritten value, as it should. Representations are copied byte for byte
 * except a rewritten value, which is emitted as a raw string (H = 0).
 *
 * Invariants:
 * - `rewrite` is called with every header block of the connection, in order (the mirror of the
 *   dynamic table must see every insertion and size update).
 * - A block that cannot be decoded (bad integer, truncated string, bad Huffman code, index out
 *   of range) is returned unchanged and the rewriter turns inert (`broken`): nghttp2 will answer
 *   it with a COMPRESSION_ERROR that ends the connection, and the mirror is no longer trusted.
 * - An empty `:authority` (also rejected by nghttp2) is replaced by `localhost` only where the
 *   representation does not insert into the table (without / never indexed). With incremental
 *   indexing no same-size replacement exists, so it is left as is (the stream is reset, as
 *   before). No known gRPC client sends an empty authority.
 */
import { huffmanDecode } from '../shared/hpack/hpack-huffman.js';
import { HPACK_ENTRY_OVERHEAD, HPACK_STATIC_TABLE, writeHpackInteger } from '../shared/hpack/hpack-primitives.js';

/** RFC 7541 Appendix A: the static table's names, index 1–61. */
const STATIC_NAMES: readonly string[] = HPACK_STATIC_TABLE.map(([name]) => name);
const STATIC_COUNT = STATIC_NAMES.length;
const AUTHORITY = ':authority';
const AUTHORITY_BYTES = Buffer.from(AUTHORITY, 'latin1');
/** SETTINGS_HEADER_TABLE_SIZE's initial value; the server never advertises another. */
export const INITIAL_TABLE_SIZE = 4096;
/** Integers larger than this (string lengths, indices, table sizes) are treated as undecodable. */
const MAX_INTEGER = 1 << 24;
const REPLACEMENT_OCTET = 0x5f; // '_'
const EMPTY_REPLACEMENT = Buffer.from('localhost', 'latin1');

/**
 * Octets nghttp2 accepts in `:authority` (its VALID_AUTHORITY_CHARS): RFC 3986 unreserved,
 * sub-delims, `:`, `@`, `[`, `]` and `%`.
 */
const AUTHORITY_OCTET_OK: Uint8Array = (() => {
  const ok = new Uint8Array(256);
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789' + "-._~!$&'()*+,;=:@[]%";
  for (let i = 0; i < chars.length; i++) ok[chars.charCodeAt(i)] = 1;
  return ok;
})();

/** True when nghttp2 accepts `v` as a request's `:authority`. */
export function isValidAuthority(v: Uint8Array): boolean {
  if (v.length === 0) return false;
  for (let i = 0; i < v.length; i++) if (AUTHORITY_OCTET_OK[v[i] ?? 0] !== 1) return false;
  return true;
}

/** The same-length replacement of an invalid, non-empty authority. */
export function sanitizeAuthority(v: Uint8Array): Buffer {
  const out = Buffer.from(v);
  for (let i = 0; i < out.length; i++) if (AUTHORITY_OCTET_OK[out[i] ?? 0] !== 1) out[i] = REPLACEMENT_OCTET;
  return out;
}

/** Thrown inside `rewrite` only; turns the rewriter inert (see the invariants above). */
class Undecodable extends Error {}

/** Representation kinds of RFC 7541 §6 that carry a literal value. */
type LiteralKind = 'incremental' | 'without' | 'never';

/** One HPACK decoder's dynamic table, reduced to what the rewriter needs: sizes and names. */
class DynamicTableMirror {
  /** Entry sizes, name lengths and `:authority` flags, oldest first from `#first`. */
  readonly #sizes: number[] = [];
  readonly #nameLengths: number[] = [];
  readonly #isAuthority: boolean[] = [];
  #first = 0;
  #size = 0;
  #maxSize = INITIAL_TABLE_SIZE;

  get length(): number {
    return this.#sizes.length - this.#first;
  }

  /** `index` counts from 1 = newest (RFC 7541 §2.3.3, minus the static table's 61). */
  #position(index: number): number {
    const pos = this.#sizes.length - index;
    if (index < 1 || pos < this.#first) throw new Undecodable(`dynamic index ${index} out of range`);
    return pos;
  }

  isAuthorityAt(index: number): boolean {
    return this.#isAuthority[this.#position(index)] === true;
  }

  nameLengthAt(index: number): number {
    return this.#nameLengths[this.#position(index)] ?? 0;
  }

  insert(nameLength: number, valueLength: number, isAuthority: boolean): void {
    const size = nameLength + valueLength + HPACK_ENTRY_OVERHEAD;
    this.#sizes.push(size);
    this.#nameLengths.push(nameLength);
    this.#isAuthority.push(isAuthority);
    this.#size += size;
    this.#evict();
  }

  setMaxSize(max: number): void {
    this.#maxSize = max;
    this.#evict();
  }

  /** RFC 7541 §4.4: an entry larger than the table empties it and is not kept. */
  #evict(): void {
    while (this.#size > this.#maxSize && this.length > 0) {
      this.#size -= this.#sizes[this.#first] ?? 0;
      this.#first++;
    }
    if (this.#first > 256) {
      this.#sizes.splice(0, this.#first);
      this.#nameLengths.splice(0, this.#first);
      this.#isAuthority.splice(0, this.#first);
      this.#first = 0;
    }
  }
}

/** A decoded HPACK string: its octets (Huffman decoded when needed) and where it ended. */
interface DecodedString {
  readonly value: Buffer;
  readonly end: number;
}

export class HpackAuthorityRewriter {
  readonly #table = new DynamicTableMirror();
  #broken = false;
  #rewrites = 0;

  /** False once a block could not be decoded: every later block passes unchanged. */
  get active(): boolean {
    return !this.#broken;
  }

  /** Values rewritten so far on this connection. */
  get rewrites(): number {
    return this.#rewrites;
  }

  /**
   * Returns the block with invalid `:authority` values replaced, or undefined when nothing
   * needs to change (the caller forwards the original frames untouched).
   */
  rewrite(block: Buffer): Buffer | undefined {
    if (this.#broken) return undefined;
    try {
      return this.#rewrite(block);
    } catch (err) {
      if (!(err instanceof Undecodable)) throw err;
      this.#broken = true;
      return undefined;
    }
  }

  #rewrite(b: Buffer): Buffer | undefined {
    let parts: Buffer[] | undefined;
    let copiedTo = 0;
    let p = 0;
    while (p < b.length) {
      const first = b[p] ?? 0;
      if (first & 0x80) {
        // §6.1 indexed field: no table change.
        const [index, next] = readInteger(b, p, 7);
        this.#checkIndex(index);
        p = next;
        continue;
      }
      if ((first & 0xe0) === 0x20) {
        // §6.3 dynamic table size update.
        const [max, next] = readInteger(b, p, 5);
        if (max > INITIAL_TABLE_SIZE) throw new Undecodable(`table size ${max} above the advertised ${INITIAL_TABLE_SIZE}`);
        this.#table.setMaxSize(max);
        p = next;
        continue;
      }
      const kind: LiteralKind = (first & 0xc0) === 0x40 ? 'incremental' : (first & 0xf0) === 0x10 ? 'never' : 'without';
      const [nameIndex, afterName] = readInteger(b, p, kind === 'incremental' ? 6 : 4);
      let nameLength: number;
      let isAuthority: boolean;
      let valueStart: number;
      if (nameIndex === 0) {
        const name = readString(b, afterName);
        nameLength = name.value.length;
        isAuthority = name.value.equals(AUTHORITY_BYTES);
        valueStart = name.end;
      } else {
        this.#checkIndex(nameIndex);
        if (nameIndex <= STATIC_COUNT) {
          const name = STATIC_NAMES[nameIndex - 1] ?? '';
          nameLength = name.length;
          isAuthority = nameIndex === 1;
        } else {
          isAuthority = this.#table.isAuthorityAt(nameIndex - STATIC_COUNT);
          nameLength = this.#table.nameLengthAt(nameIndex - STATIC_COUNT);
        }
        valueStart = afterName;
      }
      if (kind !== 'incremental' && !isAuthority) {
        // Not inserted and not an authority: only its extent matters.
        p = skipString(b, valueStart);
        continue;
      }
      const value = readString(b, valueStart);
      p = value.end;
      // The inserted size uses the ORIGINAL value's length, which a replacement keeps.
      if (kind === 'incremental') this.#table.insert(nameLength, value.value.length, isAuthority);
      if (!isAuthority || isValidAuthority(value.value)) continue;
      let replacement: Buffer;
      if (value.value.length > 0) replacement = sanitizeAuthority(value.value);
      else if (kind !== 'incremental') replacement = EMPTY_REPLACEMENT;
      else continue; // see the invariants: no same-size replacement for an empty value
      parts ??= [];
      parts.push(b.subarray(copiedTo, valueStart), encodeRawString(replacement));
      copiedTo = value.end;
      this.#rewrites++;
    }
    if (parts === undefined) return undefined;
    parts.push(b.subarray(copiedTo));
    return Buffer.concat(parts);
  }

  #checkIndex(index: number): void {
    if (index === 0) throw new Undecodable('index 0');
    if (index > STATIC_COUNT) this.#table.isAuthorityAt(index - STATIC_COUNT);
  }
}

/** RFC 7541 §5.1 integer with an N-bit prefix at `b[p]`; returns [value, next offset]. */
function readInteger(b: Buffer, p: number, prefixBits: number): [number, number] {
  const mask = (1 << prefixBits) - 1;
  if (p >= b.length) throw new Undecodable('truncated integer');
  let value = (b[p] ?? 0) & mask;
  p++;
  if (value < mask) return [value, p];
  let shift = 0;
  for (;;) {
    if (p >= b.length) throw new Undecodable('truncated integer');
    const octet = b[p++] ?? 0;
    value += (octet & 0x7f) * 2 ** shift;
    if (value > MAX_INTEGER) throw new Undecodable('integer too large');
    if ((octet & 0x80) === 0) return [value, p];
    shift += 7;
  }
}

/** RFC 7541 §5.2 string literal at `b[p]`, decoded. */
function readString(b: Buffer, p: number): DecodedString {
  const huffman = ((b[p] ?? 0) & 0x80) !== 0;
  const [length, start] = readInteger(b, p, 7);
  const end = start + length;
  if (end > b.length) throw new Undecodable('truncated string');
  if (!huffman) return { value: b.subarray(start, end), end };
  const value = huffmanDecode(b, start, end);
  if (value === undefined) throw new Undecodable('invalid Huffman code');
  return { value, end };
}

function skipString(b: Buffer, p: number): number {
  const [length, start] = readInteger(b, p, 7);
  const end = start + length;
  if (end > b.length) throw new Undecodable('truncated string');
  return end;
}

/** A raw (H = 0) RFC 7541 §5.2 string literal. */
function encodeRawString(v: Buffer): Buffer {
  const head: number[] = [];
  writeHpackInteger(head, 0, 7, v.length);
  return Buffer.concat([Buffer.from(head), v]);
}
