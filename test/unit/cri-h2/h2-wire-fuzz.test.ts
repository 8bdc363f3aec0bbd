/**
 * Issue 27 item 3: the hand-written HTTP/2 wire code over hostile byte streams (fast-check).
 * - FrameReader: any bytes, cut anywhere, give the same frames as the bytes at once; no frame
 *   is longer than MAX_FRAME_SIZE; an oversized one is an error after which nothing comes; it
 *   never throws.
 * - HpackDecoder: any block decodes or returns an HpackError (never throws, never a list above
 *   its limit); a broken decoder stays broken; header lists written by a reference encoder
 *   (literals, indexing, Huffman, table size updates) decode to exactly what was written.
 * - Huffman: the RFC 7541 Appendix B table (with EOS) is complete (Kraft sum exactly 1) and
 *   prefix-free; every symbol decodes from its own code; any bytes decode or are refused, with
 *   output bounded by 8/5 of the input.
 * The RFC 7541 Appendix C vectors stay in hpack-decoder.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_MAX_FRAME_SIZE, FrameReader, H2Error } from '../../../src/shared/cri/h2/h2-frames.js';
import { HpackDecoder, HpackError } from '../../../src/shared/hpack/hpack-decoder.js';
import { HUFFMAN_CODES, HUFFMAN_LENGTHS, huffmanDecode } from '../../../src/shared/hpack/hpack-huffman.js';
import { hpackInt } from '../simruntime/h2-raw-frames.js';

const RUNS = { numRuns: 300 };

interface Read { frames: string[]; errors: number[] }

function readAll(chunks: Buffer[], maxFrame = DEFAULT_MAX_FRAME_SIZE): Read {
  const out: Read = { frames: [], errors: [] };
  const reader = new FrameReader({
    onFrame: (type, flags, id, payload) => {
      assert.ok(payload.length <= maxFrame, `a frame of ${payload.length} octets`);
      assert.equal(out.errors.length, 0, 'no frame after an error');
      out.frames.push(`${type}/${flags}/${id}/${payload.toString('hex')}`);
    },
    onFrameError: (code) => out.errors.push(code),
  }, maxFrame);
  for (const c of chunks) reader.push(c);
  return out;
}

/** Splits `bytes` at the given cut points. */
function cut(bytes: Uint8Array, cuts: number[]): Buffer[] {
  const b = Buffer.from(bytes);
  const points = [...new Set(cuts.map((c) => c % (b.length + 1)))].sort((x, y) => x - y);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(b.subarray(prev, p));
    prev = p;
  }
  out.push(b.subarray(prev));
  return out;
}

/** A frame with a plausible header: mostly valid lengths, sometimes oversized ones. */
const frameArb = fc.record({
  type: fc.integer({ min: 0, max: 255 }),
  flags: fc.integer({ min: 0, max: 255 }),
  id: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
  payload: fc.uint8Array({ maxLength: 300 }),
  claim: fc.option(fc.integer({ min: 0, max: 0xffffff }), { freq: 8 }),
}).map(({ type, flags, id, payload, claim }) => {
  const b = Buffer.alloc(9 + payload.length);
  const len = claim ?? payload.length;
  b[0] = (len >>> 16) & 0xff;
  b[1] = (len >>> 8) & 0xff;
  b[2] = len & 0xff;
  b[3] = type;
  b[4] = flags;
  b.writeUInt32BE(id, 5);
  b.set(payload, 9);
  return b;
});

test('fuzz FrameReader: random bytes, any chunking: same frames as at once, bounded, never throws', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 2048 }), fc.array(fc.nat(), { maxLength: 40 }), fc.integer({ min: 16, max: 1024 }), (bytes, cuts, maxFrame) => {
    const whole = readAll([Buffer.from(bytes)], maxFrame);
    const chunked = readAll(cut(bytes, cuts), maxFrame);
    assert.deepEqual(chunked, whole);
    assert.ok(whole.errors.every((c) => c === H2Error.FRAME_SIZE_ERROR));
    assert.ok(whole.errors.length <= 1);
    assert.ok(whole.frames.length <= Math.floor(bytes.length / 9));
  }), RUNS);
});

test('fuzz FrameReader: streams of plausible frames (some oversized), any chunking', () => {
  fc.assert(fc.property(fc.array(frameArb, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 60 }), (frames, cuts) => {
    const bytes = Buffer.concat(frames);
    const whole = readAll([bytes], 256);
    assert.deepEqual(readAll(cut(bytes, cuts), 256), whole);
    assert.deepEqual(readAll([...bytes].map((x) => Buffer.of(x)), 256), whole);
  }), RUNS);
});

test('fuzz HpackDecoder: any bytes decode or are an HpackError; lists within the limit; broken stays broken', () => {
  fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 600 }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 64, max: 4096 }), (blocks, maxList) => {
    const d = new HpackDecoder({ maxHeaderListBytes: maxList });
    let broken = false;
    for (const b of blocks) {
      const r = d.decode(b);
      if (broken) assert.ok(r instanceof HpackError, 'a broken decoder refuses every later block');
      if (r instanceof HpackError) {
        broken = true;
        continue;
      }
      const size = r.names.reduce((n, name, i) => n + name.length + (r.values[i] ?? '').length + 32, 0);
      assert.ok(size <= maxList, `a list of ${size} bytes above ${maxList}`);
      assert.equal(r.names.length, r.values.length);
      assert.ok(d.tableBytes <= 4096);
    }
  }), RUNS);
});

// ---- a reference HPACK encoder (test only) ---------------------------------------------------

function huffmanEncode(s: Buffer): Buffer {
  const out: number[] = [];
  let acc = 0n;
  let bits = 0;
  for (const octet of s) {
    acc = (acc << BigInt(HUFFMAN_LENGTHS[octet] ?? 0)) | BigInt(HUFFMAN_CODES[octet] ?? 0);
    bits += HUFFMAN_LENGTHS[octet] ?? 0;
    while (bits >= 8) {
      out.push(Number((acc >> BigInt(bits - 8)) & 0xffn));
      bits -= 8;
    }
    acc &= (1n << BigInt(bits)) - 1n;
  }
  if (bits > 0) out.push(Number(((acc << BigInt(8 - bits)) | ((1n << BigInt(8 - bits)) - 1n)) & 0xffn));
  return Buffer.from(out);
}

function encString(s: string, huffman: boolean): number[] {
  const raw = Buffer.from(s, 'latin1');
  const body = huffman ? huffmanEncode(raw) : raw;
  return [...hpackInt(body.length, 7, huffman ? 0x80 : 0), ...body];
}

type Field = { name: string; value: string; mode: 'incremental' | 'without' | 'never'; huffman: boolean };

/** Encodes fields as literals (new names), tracking nothing: the decoder's table must follow. */
function encodeBlock(fields: Field[], sizeUpdate: number | undefined): Buffer {
  const out: number[] = [];
  if (sizeUpdate !== undefined) out.push(...hpackInt(sizeUpdate, 5, 0x20));
  for (const f of fields) {
    const first = f.mode === 'incremental' ? 0x40 : f.mode === 'never' ? 0x10 : 0x00;
    out.push(...hpackInt(0, f.mode === 'incremental' ? 6 : 4, first), ...encString(f.name, f.huffman), ...encString(f.value, f.huffman));
  }
  return Buffer.from(out);
}

const latin1String = (max: number): fc.Arbitrary<string> => fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: max }).map((a) => Buffer.from(a).toString('latin1'));
const fieldArb: fc.Arbitrary<Field> = fc.record({
  name: latin1String(40),
  value: latin1String(200),
  mode: fc.constantFrom('incremental' as const, 'without' as const, 'never' as const),
  huffman: fc.boolean(),
});

test('fuzz HpackDecoder: reference-encoded header lists (literals, indexing, Huffman, size updates) decode exactly', () => {
  fc.assert(fc.property(fc.array(fc.record({ fields: fc.array(fieldArb, { maxLength: 8 }), sizeUpdate: fc.option(fc.integer({ min: 0, max: 4096 }), { nil: undefined }) }), { minLength: 1, maxLength: 5 }), (blocks) => {
    const d = new HpackDecoder({ maxHeaderListBytes: 1 << 20 });
    let limit = 4096;
    for (const b of blocks) {
      const r = d.decode(encodeBlock(b.fields, b.sizeUpdate));
      assert.ok(!(r instanceof HpackError), r instanceof HpackError ? r.message : '');
      assert.deepEqual(r.names, b.fields.map((f) => f.name));
      assert.deepEqual(r.values, b.fields.map((f) => f.value));
      if (b.sizeUpdate !== undefined) limit = b.sizeUpdate;
      assert.ok(d.tableBytes <= limit, `table of ${d.tableBytes} above its limit ${limit}`);
      // §6.1: index 62 is the newest entry, the last incremental field that fitted the table.
      const newest = b.fields.filter((f) => f.mode === 'incremental' && f.name.length + f.value.length + 32 <= limit).at(-1);
      const lastIncremental = b.fields.filter((f) => f.mode === 'incremental').at(-1);
      if (newest !== undefined && newest === lastIncremental) {
        const again = d.decode(hpackInt(62, 7, 0x80));
        assert.ok(!(again instanceof HpackError), again instanceof HpackError ? again.message : '');
        assert.deepEqual([again.names[0], again.values[0]], [newest.name, newest.value]);
      }
    }
  }), RUNS);
});

// ---- Huffman table ---------------------------------------------------------------------------

const EOS = { code: 0x3fffffff, bits: 30 };

test('Huffman table: 256 symbols plus EOS, complete (Kraft sum exactly 1) and prefix-free', () => {
  assert.equal(HUFFMAN_CODES.length, 256);
  assert.equal(HUFFMAN_LENGTHS.length, 256);
  const codes = [...HUFFMAN_CODES.map((code, i) => ({ code, bits: HUFFMAN_LENGTHS[i] ?? 0 })), EOS];
  // Kraft: Σ 2^(30 - bits) == 2^30 (all lengths are 5..30).
  let kraft = 0;
  for (const c of codes) {
    assert.ok(c.bits >= 5 && c.bits <= 30, `length ${c.bits}`);
    assert.ok(c.code < 2 ** c.bits, 'the code fits its length');
    kraft += 2 ** (30 - c.bits);
  }
  assert.equal(kraft, 2 ** 30, 'complete: no unused code space, no overlap');
  // Prefix-free: no code is a prefix of another (sorted as 30-bit left-aligned strings, a
  // prefix would sort right before a code it is a prefix of).
  const aligned = codes.map((c) => ({ ...c, left: c.code * 2 ** (30 - c.bits) })).sort((a, b) => a.left - b.left || a.bits - b.bits);
  for (let i = 1; i < aligned.length; i++) {
    const a = aligned[i - 1]!;
    const b = aligned[i]!;
    assert.ok(b.left >= a.left + 2 ** (30 - a.bits), `code ${a.code.toString(2).padStart(a.bits, '0')} is a prefix of or overlaps ${b.code.toString(2).padStart(b.bits, '0')}`);
  }
});

test('Huffman: every symbol decodes from its own code; random strings round-trip', () => {
  for (let sym = 0; sym < 256; sym++) {
    const d = huffmanDecode(huffmanEncode(Buffer.of(sym)), 0, huffmanEncode(Buffer.of(sym)).length);
    assert.deepEqual(d && [...d], [sym], `symbol ${sym}`);
  }
  fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (s) => {
    const enc = huffmanEncode(Buffer.from(s));
    assert.deepEqual(huffmanDecode(enc, 0, enc.length), Buffer.from(s));
  }), RUNS);
});

test('fuzz Huffman: any bytes decode or are refused, output bounded by 8/5 of the input', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
    const r = huffmanDecode(bytes, 0, bytes.length);
    if (r !== undefined) assert.ok(r.length <= Math.ceil((bytes.length * 8) / 5));
  }), RUNS);
});
