/**
 * SPDY/3 name/value header blocks (§2.6.10): the uncompressed layout
 *   u32 pair count, then per pair: u32 name length, name, u32 value length, value
 * (a value holding several values separates them with NUL), compressed per direction as ONE
 * zlib stream over the whole session against the SPDY/3 dictionary, each block ending on a
 * sync flush. Hence one encoder and one decoder per session, fed every header block in order.
 *
 * Encoder: emits the zlib stream header (dictionary id included) once, then each block as
 * stored (uncompressed) deflate blocks followed by an empty stored block — byte for byte what
 * zlib's Z_SYNC_FLUSH ends with. The empty block matters: Go's flate (spdystream's reader) hands
 * out a stored block's bytes only when it reads the next block header, so without it the
 * reader would wait past the frame's end and fail (pinned by a test against Go's behaviour). Decoder: pako's streaming Inflate (synchronous push with
 * Z_SYNC_FLUSH), its output capped per block so a zlib bomb ends the session, not the process.
 */
import zlib from 'node:zlib';
import pako, { type Inflate } from 'pako';
import { SPDY3_DICTIONARY } from './spdy-dictionary.js';
import { SpdyProtocolError } from './spdy-frames.js';

/** Header names and values as received: lower-case name → values in order. */
export type SpdyHeaders = ReadonlyMap<string, readonly string[]>;

const Z_SYNC_FLUSH = 2;
/** An empty non-final stored block: what Z_SYNC_FLUSH writes. */
const SYNC_FLUSH_MARKER = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]);
/** Largest stored deflate block. */
const MAX_STORED = 0xffff;

/** 0x78 0x.. + the dictionary's adler32, as zlib itself writes them. */
const ZLIB_PREAMBLE: Buffer = zlib.deflateSync(Buffer.alloc(0), { dictionary: SPDY3_DICTIONARY }).subarray(0, 6);

/** The uncompressed block for `pairs` (names lower-cased, as SPDY/3 requires). */
export function serializeHeaderPairs(pairs: ReadonlyArray<readonly [string, string | readonly string[]]>): Buffer {
  const parts: Buffer[] = [u32(pairs.length)];
  for (const [name, value] of pairs) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(typeof value === 'string' ? value : value.join('\0'), 'utf8');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

/** Parses an uncompressed block; throws SpdyProtocolError on a malformed one. */
export function parseHeaderPairs(block: Buffer, maxPairs: number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let o = 0;
  const need = (n: number): void => {
    if (o + n > block.length) throw new SpdyProtocolError('truncated header block');
  };
  need(4);
  const count = block.readUInt32BE(o);
  o += 4;
  if (count > maxPairs) throw new SpdyProtocolError(`header block with ${count} pairs exceeds the limit of ${maxPairs}`);
  for (let i = 0; i < count; i++) {
    need(4);
    const nl = block.readUInt32BE(o);
    o += 4;
    if (nl === 0) throw new SpdyProtocolError('empty header name');
    need(nl);
    const name = block.toString('utf8', o, o + nl);
    o += nl;
    if (name !== name.toLowerCase()) throw new SpdyProtocolError(`header name ${JSON.stringify(name)} is not lower-case`);
    need(4);
    const vl = block.readUInt32BE(o);
    o += 4;
    need(vl);
    const values = block.toString('utf8', o, o + vl).split('\0');
    o += vl;
    if (out.has(name)) throw new SpdyProtocolError(`duplicate header name ${JSON.stringify(name)}`);
    out.set(name, values);
  }
  if (o !== block.length) throw new SpdyProtocolError('trailing bytes after the header block');
  return out;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** One direction's header compressor (stored blocks; see the module comment). */
export class HeaderBlockEncoder {
  #started = false;

  encode(pairs: ReadonlyArray<readonly [string, string | readonly string[]]>): Buffer {
    const raw = serializeHeaderPairs(pairs);
    const parts: Buffer[] = [];
    if (!this.#started) {
      parts.push(ZLIB_PREAMBLE);
      this.#started = true;
    }
    for (let o = 0; o < raw.length; o += MAX_STORED) {
      const piece = raw.subarray(o, Math.min(raw.length, o + MAX_STORED));
      const h = Buffer.alloc(5);
      h[0] = 0x00; // BFINAL=0, BTYPE=00 (stored); we are byte-aligned, so the rest is padding
      h.writeUInt16LE(piece.length, 1);
      h.writeUInt16LE(~piece.length & 0xffff, 3);
      parts.push(h, piece);
    }
    parts.push(SYNC_FLUSH_MARKER);
    return Buffer.concat(parts);
  }
}

/** One direction's header decompressor. After a throw the session must end (state is lost). */
export class HeaderBlockDecoder {
  readonly #inflate: Inflate;
  readonly #maxBlockBytes: number;
  readonly #maxPairs: number;
  #out: Uint8Array[] = [];
  #outBytes = 0;
  #broken = false;

  constructor(opts: { maxBlockBytes: number; maxPairs: number }) {
    this.#maxBlockBytes = opts.maxBlockBytes;
    this.#maxPairs = opts.maxPairs;
    this.#inflate = new pako.Inflate({ dictionary: SPDY3_DICTIONARY });
    this.#inflate.onData = (chunk: Uint8Array) => {
      this.#outBytes += chunk.length;
      // Throwing out of pako's loop stops a zlib bomb at the cap.
      if (this.#outBytes > this.#maxBlockBytes) throw new SpdyProtocolError(`header block inflates past ${this.#maxBlockBytes} bytes`);
      this.#out.push(chunk);
    };
    this.#inflate.onEnd = () => {};
  }

  decode(compressed: Buffer): Map<string, string[]> {
    if (this.#broken) throw new SpdyProtocolError('header decompressor is broken by an earlier error');
    this.#out = [];
    this.#outBytes = 0;
    try {
      const ok = this.#inflate.push(compressed, Z_SYNC_FLUSH);
      if (!ok || this.#inflate.err !== 0) throw new SpdyProtocolError(`header block does not inflate: ${this.#inflate.msg || 'stream ended'}`);
    } catch (err) {
      this.#broken = true;
      if (err instanceof SpdyProtocolError) throw err;
      throw new SpdyProtocolError(`header block does not inflate: ${err instanceof Error ? err.message : String(err)}`);
    }
    return parseHeaderPairs(Buffer.concat(this.#out), this.#maxPairs);
  }
}
