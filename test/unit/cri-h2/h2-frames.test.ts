/**
 * The HTTP/2 frame codec (src/shared/cri/h2/h2-frames.ts), header-block framing
 * (h2-header-block.ts) and the request header block (h2-request-headers.ts): frames cut from a byte stream however it is chunked, oversized
 * frames refused before buffering, the writers' wire format, grpc-timeout encoding, and the
 * request block decoding to exactly the gRPC request headers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FrameReader, FrameType, Flag, H2Error, goawayFrame, pingAckFrame, rstStreamFrame, settingsFrame, windowUpdateFrame, writeFrameHeader,
} from '../../../src/shared/cri/h2/h2-frames.js';
import type { FrameSink } from '../../../src/shared/cri/h2/h2-frames.js';
import { HeaderBlockAssembler, isFramingError, unpad } from '../../../src/shared/cri/h2/h2-header-block.js';
import { parsePeerSettings } from '../../../src/shared/cri/h2/h2-settings.js';
import { requestHeaderPrefix, writeTimeoutField, MAX_TIMEOUT_FIELD_BYTES } from '../../../src/shared/cri/h2/h2-request-headers.js';
import { grpcTimeoutValue } from '../../../src/shared/cri/grpc-wire.js';
import { HpackDecoder, HpackError } from '../../../src/shared/hpack/hpack-decoder.js';

interface Seen { type: number; flags: number; streamId: number; payload: string }

function collector(): { sink: FrameSink; frames: Seen[]; errors: Array<[number, string]> } {
  const frames: Seen[] = [];
  const errors: Array<[number, string]> = [];
  return {
    frames,
    errors,
    sink: {
      onFrame: (type, flags, streamId, payload) => frames.push({ type, flags, streamId, payload: payload.toString('hex') }),
      onFrameError: (code, message) => errors.push([code, message]),
    },
  };
}

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const b = Buffer.alloc(9 + payload.length);
  writeFrameHeader(b, 0, payload.length, type, flags, streamId);
  payload.copy(b, 9);
  return b;
}

test('FrameReader: the same frames whether the bytes come at once, byte by byte or in odd chunks', () => {
  const wire = Buffer.concat([
    frame(FrameType.HEADERS, Flag.END_HEADERS, 1, Buffer.from('abc')),
    frame(FrameType.DATA, 0, 1, Buffer.alloc(0)),
    frame(FrameType.DATA, Flag.END_STREAM, 1, Buffer.alloc(16_384, 7)),
    frame(FrameType.PING, 0, 0, Buffer.alloc(8, 1)),
  ]);
  const expected = collector();
  new FrameReader(expected.sink).push(wire);
  assert.equal(expected.frames.length, 4);
  assert.deepEqual(expected.frames.map((f) => [f.type, f.flags, f.streamId, f.payload.length / 2]), [[1, 4, 1, 3], [0, 0, 1, 0], [0, 1, 1, 16_384], [6, 0, 0, 8]]);
  for (const chunking of [1, 5, 9, 10, 4097]) {
    const c = collector();
    const r = new FrameReader(c.sink);
    for (let i = 0; i < wire.length; i += chunking) r.push(wire.subarray(i, i + chunking));
    assert.deepEqual(c.frames, expected.frames, `chunks of ${chunking}`);
    assert.deepEqual(c.errors, []);
  }
});

test('FrameReader: a frame above MAX_FRAME_SIZE is a FRAME_SIZE_ERROR before its payload is buffered; nothing after it', () => {
  const c = collector();
  const r = new FrameReader(c.sink);
  const header = Buffer.alloc(9);
  writeFrameHeader(header, 0, 0xffffff, FrameType.DATA, 0, 1); // 16 MiB claimed, 0 sent
  r.push(Buffer.concat([frame(FrameType.PING, 0, 0, Buffer.alloc(8)), header]));
  assert.equal(c.frames.length, 1);
  assert.deepEqual(c.errors.map((e) => e[0]), [H2Error.FRAME_SIZE_ERROR]);
  r.push(frame(FrameType.PING, 0, 0, Buffer.alloc(8)));
  assert.equal(c.frames.length, 1, 'a failed reader hands out nothing more');
  // The same with the oversized header split across chunks.
  const d = collector();
  const r2 = new FrameReader(d.sink);
  r2.push(header.subarray(0, 4));
  assert.deepEqual(d.errors, []);
  r2.push(header.subarray(4));
  assert.deepEqual(d.errors.map((e) => e[0]), [H2Error.FRAME_SIZE_ERROR]);
});

test('frame writers: wire format', () => {
  assert.equal(settingsFrame([[0x2, 0], [0x4, 16 * 1024 * 1024]]).toString('hex'), '00000c040000000000' + '000200000000' + '000401000000');
  assert.equal(windowUpdateFrame(0, 0x7fffffff).toString('hex'), '000004080000000000' + '7fffffff');
  assert.equal(rstStreamFrame(3, H2Error.CANCEL).toString('hex'), '000004030000000003' + '00000008');
  assert.equal(goawayFrame(5, H2Error.PROTOCOL_ERROR).toString('hex'), '000008070000000000' + '0000000500000001');
  assert.equal(pingAckFrame(Buffer.from('0102030405060708', 'hex')).toString('hex'), '000008060100000000' + '0102030405060708');
});

test('grpc-timeout: at most 8 digits; milliseconds, then seconds rounded up, capped at 2^31 - 1 ms', () => {
  assert.equal(grpcTimeoutValue(0), '0m');
  assert.equal(grpcTimeoutValue(1.2), '2m');
  assert.equal(grpcTimeoutValue(120_000), '120000m');
  assert.equal(grpcTimeoutValue(99_999_999), '99999999m');
  assert.equal(grpcTimeoutValue(100_000_000), '100000S');
  assert.equal(grpcTimeoutValue(2 ** 31 - 1), '2147483S', 'never past 2^31 - 1 ms: grpc-js servers overflow an int32');
  assert.equal(grpcTimeoutValue(1e12), '2147483S');
  assert.equal(grpcTimeoutValue(-5), '0m');
});

test('request header block: decodes to the gRPC request headers, stateless (no table entries)', () => {
  const prefix = requestHeaderPrefix('/runtime.v1.RuntimeService/Version');
  const block = Buffer.alloc(prefix.length + MAX_TIMEOUT_FIELD_BYTES);
  prefix.copy(block);
  const end = writeTimeoutField(block, prefix.length, 2 ** 31 - 1);
  assert.ok(end <= block.length);
  const d = new HpackDecoder();
  const list = d.decode(block, 0, end);
  assert.ok(!(list instanceof HpackError));
  assert.deepEqual(list.names.map((n, i) => [n, list.values[i]]), [
    [':method', 'POST'], [':scheme', 'http'], [':path', '/runtime.v1.RuntimeService/Version'], [':authority', 'localhost'],
    ['content-type', 'application/grpc'], ['te', 'trailers'], ['grpc-timeout', '2147483S'],
  ]);
  assert.equal(d.tableLength, 0, 'literals without indexing leave the peer\'s table empty');
  // A long path needs a multi-octet length.
  const long = '/' + 'x'.repeat(300);
  const l2 = new HpackDecoder().decode(requestHeaderPrefix(long));
  assert.ok(!(l2 instanceof HpackError));
  assert.equal(l2.values[2], long);
});

test('header blocks: padding and priority stripped, CONTINUATION gathered, an endless chain refused at the bound', () => {
  const a = new HeaderBlockAssembler(100);
  // PADDED + PRIORITY: pad length 2, 5 priority octets, fragment "ab", 2 pad octets.
  const r = a.headers(Flag.PADDED | Flag.PRIORITY | Flag.END_HEADERS | Flag.END_STREAM, 1, Buffer.from('02' + '0000000010' + '6162' + '0000', 'hex'));
  assert.ok(r !== null && !isFramingError(r));
  assert.deepEqual([r.streamId, r.endStream, r.block.toString()], [1, true, 'ab']);
  assert.equal(a.headers(0, 3, Buffer.from('x')), null);
  assert.ok(a.open);
  assert.deepEqual(a.continuation(0, 5, Buffer.from('y')), { code: H2Error.PROTOCOL_ERROR, message: 'unexpected CONTINUATION' });
  const done = a.continuation(Flag.END_HEADERS, 3, Buffer.from('yz'));
  assert.ok(done !== null && !isFramingError(done));
  assert.equal(done.block.toString(), 'xyz');
  assert.ok(!a.open);
  assert.equal(a.headers(0, 7, Buffer.alloc(60)), null);
  const big = a.continuation(0, 7, Buffer.alloc(60));
  assert.ok(big !== null && isFramingError(big) && big.code === H2Error.ENHANCE_YOUR_CALM, 'a chain past 100 bytes is refused');
  assert.ok(isFramingError(unpad(Flag.PADDED, Buffer.from('05aa', 'hex'), 0)), 'pad length past the frame');
  assert.ok(isFramingError(unpad(Flag.PADDED, Buffer.alloc(0), 0)), 'no pad length octet');
});

test('peer SETTINGS: decoded, each value validated, unknown ids ignored', () => {
  const p = (pairs: Array<[number, number]>): Buffer => settingsFrame(pairs).subarray(9);
  assert.deepEqual(parsePeerSettings(p([[0x4, 1_000], [0x5, 32_768], [0x3, 10], [0x1, 0], [0x99, 7]])), { initialWindow: 1_000, maxFrame: 32_768, maxStreams: 10 });
  assert.deepEqual(parsePeerSettings(p([[0x4, 2 ** 31]])), { code: H2Error.FLOW_CONTROL_ERROR, message: 'INITIAL_WINDOW_SIZE 2147483648' });
  assert.equal((parsePeerSettings(p([[0x5, 100]])) as { code: number }).code, H2Error.PROTOCOL_ERROR);
  assert.equal((parsePeerSettings(p([[0x5, 2 ** 24]])) as { code: number }).code, H2Error.PROTOCOL_ERROR);
  assert.equal((parsePeerSettings(p([[0x2, 2]])) as { code: number }).code, H2Error.PROTOCOL_ERROR);
  assert.equal((parsePeerSettings(Buffer.alloc(7)) as { code: number }).code, H2Error.FRAME_SIZE_ERROR);
});
