/**
 * HPACK header-block decoder (RFC 7541) for the CRI client's HTTP/2 transport
 * (src/shared/cri/h2/): static table, dynamic table with eviction and size updates, Huffman
 * strings (hpack-huffman.ts), integers with their prefix.
 *
 * Invariants:
 *   - one decoder per connection, fed every header block of that connection in the order the
 *     peer sent them (even blocks of streams the client has forgotten), or its dynamic table
 *     drifts from the peer's;
 *   - a malformed block returns an {@link HpackError} and leaves the decoder unusable: the
 *     caller must treat it as a connection error (COMPRESSION_ERROR, RFC 7540 §4.3);
 *   - nothing is allocated from a length the peer sends before that length is checked against
 *     the bytes actually present and the decoded-list limit (`maxHeaderListBytes`);
 *   - the dynamic table holds decoded strings, so a header the peer sends indexed (grpc-go's
 *     encoder indexes everything it can) costs no string allocation.
 */
import { huffmanDecode } from './hpack-huffman.js';
import { HPACK_ENTRY_OVERHEAD, HPACK_STATIC_TABLE } from './hpack-primitives.js';

const STATIC_COUNT = HPACK_STATIC_TABLE.length;
const STATIC_ENTRIES: readonly Entry[] = HPACK_STATIC_TABLE.map(([name, value]) => ({ name, value, size: name.length + value.length + HPACK_ENTRY_OVERHEAD }));


/** Octets as a latin1 string (one char per octet, so `.length` is the octet count RFC 7541 sizes use). */
function latin1(buf: Uint8Array, start: number, end: number): string {
  return Buffer.isBuffer(buf) ? buf.toString('latin1', start, end) : Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('latin1');
}

export class HpackError extends Error {
  override readonly name = 'HpackError';
}

/** A decoded header list, in order: names (lower case, as sent) and values. */
export interface HeaderList {
  readonly names: string[];
  readonly values: string[];
}

export interface HpackDecoderOptions {
  /**
   * SETTINGS_HEADER_TABLE_SIZE this side advertised (default 4,096, RFC 7540 §6.5.2): the
   * ceiling for the peer's dynamic table size updates.
   */
  maxTableSize?: number;
  /** Decoded size (RFC 7541 §4.1 sizes) one header list may reach; past it the block is an error. */
  maxHeaderListBytes?: number;
}

export const HPACK_DECODER_DEFAULTS = Object.freeze({ maxTableSize: 4096, maxHeaderListBytes: 256 * 1024 });

interface Entry {
  readonly name: string;
  readonly value: string;
  readonly size: number;
}

export class HpackDecoder {
  readonly #maxTableSize: number;
  readonly #maxListBytes: number;
  /** The dynamic table, newest first (index 62 is `#table[0]`). */
  #table: Entry[] = [];
  #tableBytes = 0;
  /** The table size the peer last set (≤ #maxTableSize). */
  #tableLimit: number;
  #broken = false;
  // Read cursor over the block being decoded.
  #buf: Uint8Array = new Uint8Array(0);
  #pos = 0;
  #end = 0;

  constructor(opts: HpackDecoderOptions = {}) {
    this.#maxTableSize = opts.maxTableSize ?? HPACK_DECODER_DEFAULTS.maxTableSize;
    this.#maxListBytes = opts.maxHeaderListBytes ?? HPACK_DECODER_DEFAULTS.maxHeaderListBytes;
    this.#tableLimit = this.#maxTableSize;
  }

  /** Current dynamic table size in RFC 7541 octets (for tests). */
  get tableBytes(): number {
    return this.#tableBytes;
  }

  /** Current number of dynamic table entries (for tests). */
  get tableLength(): number {
    return this.#table.length;
  }

  /**
   * Decodes one complete header block `block[start, end)`. Returns the header list, or an
   * HpackError (never throws for bad input).
   */
  decode(block: Uint8Array, start = 0, end = block.length): HeaderList | HpackError {
    if (this.#broken) return new HpackError('decoder unusable after an earlier error');
    this.#buf = block;
    this.#pos = start;
    this.#end = end;
    const names: string[] = [];
    const values: string[] = [];
    let listBytes = 0;
    let headerSeen = false;
    try {
      while (this.#pos < this.#end) {
        const b = this.#buf[this.#pos] ?? 0;
        let name: string;
        let value: string;
        if (b & 0x80) {
          // §6.1 indexed header field.
          const idx = this.#int(7);
          const e = this.#entry(idx);
          name = e.name;
          value = e.value;
        } else if (b & 0x40) {
          // §6.2.1 literal with incremental indexing.
          [name, value] = this.#literal(6);
          this.#add(name, value);
        } else if (b & 0x20) {
          // §6.3 dynamic table size update: only at the start of a block.
          if (headerSeen) throw new HpackError('dynamic table size update after a header field');
          const size = this.#int(5);
          if (size > this.#maxTableSize) throw new HpackError(`table size update ${size} above the advertised ${this.#maxTableSize}`);
          this.#tableLimit = size;
          this.#evict(0);
          continue;
        } else {
          // §6.2.2 without indexing / §6.2.3 never indexed: both 4-bit prefixes.
          [name, value] = this.#literal(4);
        }
        headerSeen = true;
        listBytes += name.length + value.length + HPACK_ENTRY_OVERHEAD;
        if (listBytes > this.#maxListBytes) throw new HpackError(`header list above ${this.#maxListBytes} bytes`);
        names.push(name);
        values.push(value);
      }
    } catch (err) {
      this.#broken = true;
      this.#buf = new Uint8Array(0);
      return err instanceof HpackError ? err : new HpackError(String(err));
    }
    this.#buf = new Uint8Array(0);
    return { names, values };
  }

  /** §5.1 integer with an N-bit prefix, starting at the current octet. */
  #int(prefixBits: number): number {
    if (this.#pos >= this.#end) throw new HpackError('truncated integer');
    const max = (1 << prefixBits) - 1;
    let v = (this.#buf[this.#pos++] ?? 0) & max;
    if (v < max) return v;
    let shift = 0;
    for (;;) {
      if (this.#pos >= this.#end) throw new HpackError('truncated integer');
      const b = this.#buf[this.#pos++] ?? 0;
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
      // Anything past 2^31 is no length or index this decoder accepts.
      if (v > 0x7fffffff || shift > 35) throw new HpackError('integer overflow');
      if ((b & 0x80) === 0) return v;
    }
  }

  /** §5.2 string literal; its length is checked against the bytes present before decoding. */
  #string(): string {
    if (this.#pos >= this.#end) throw new HpackError('truncated string');
    const huffman = ((this.#buf[this.#pos] ?? 0) & 0x80) !== 0;
    const len = this.#int(7);
    if (len > this.#end - this.#pos) throw new HpackError('string length past the end of the block');
    const start = this.#pos;
    this.#pos += len;
    if (len > this.#maxListBytes) throw new HpackError(`string of ${len} bytes above the header list limit`);
    if (!huffman) return latin1(this.#buf, start, start + len);
    const decoded = huffmanDecode(this.#buf, start, start + len);
    if (decoded === undefined) throw new HpackError('invalid Huffman string');
    return decoded.toString('latin1');
  }

  /** A literal field whose name is an index (non-zero) or a string (zero) in an N-bit prefix. */
  #literal(prefixBits: number): [string, string] {
    const idx = this.#int(prefixBits);
    const name = idx === 0 ? this.#string() : this.#entry(idx).name;
    return [name, this.#string()];
  }

  #entry(idx: number): Entry {
    if (idx === 0) throw new HpackError('index 0');
    const e = idx <= STATIC_COUNT ? STATIC_ENTRIES[idx - 1] : this.#table[idx - STATIC_COUNT - 1];
    if (e === undefined) throw new HpackError(`index ${idx} past the dynamic table (${this.#table.length} entries)`);
    return e;
  }

  /** §4.4: evicts until the new entry fits; an entry larger than the table empties it and is not added. */
  #add(name: string, value: string): void {
    const size = name.length + value.length + HPACK_ENTRY_OVERHEAD;
    this.#evict(size);
    if (size > this.#tableLimit) return;
    this.#table.unshift({ name, value, size });
    this.#tableBytes += size;
  }

  /** Evicts oldest entries until `room` more octets fit under the current limit. */
  #evict(room: number): void {
    while (this.#table.length > 0 && this.#tableBytes + room > this.#tableLimit) {
      const e = this.#table.pop() as Entry;
      this.#tableBytes -= e.size;
    }
  }
}
