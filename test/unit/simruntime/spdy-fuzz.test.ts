/**
 * Fuzz and property tests of the hand-written SPDY/3.1 code (src/simruntime/spdy/): the frame
 * reader, the header block codec and a whole server session fed arbitrary bytes, plus the
 * resize-message reader. Properties: encode → split anywhere → read gives the same frames;
 * arbitrary bytes give frames or SpdyProtocolError, never another exception, and the reader
 * never buffers more than one frame plus the last chunk; header blocks round-trip through our
 * encoder into both our decoder and zlib's; a session on garbage ends cleanly (no throw, socket
 * closed or left waiting) and never answers with more than it was sent plus a bounded reply.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { SPDY3_DICTIONARY } from '../../../src/simruntime/spdy/spdy-dictionary.js';
import {
  encodeData,
  encodeGoaway,
  encodePing,
  encodeRstStream,
  encodeSettings,
  encodeSynReply,
  encodeSynStream,
  encodeWindowUpdate,
  SpdyFrameReader,
  SpdyProtocolError,
  type SpdyFrame,
} from '../../../src/simruntime/spdy/spdy-frames.js';
import { HeaderBlockDecoder, HeaderBlockEncoder, parseHeaderPairs, serializeHeaderPairs } from '../../../src/simruntime/spdy/spdy-headers.js';
import { SpdySession } from '../../../src/simruntime/spdy/spdy-session.js';
import { ResizeReader } from '../../../src/simruntime/sim-remotecommand.js';

const SEED = 20261127;
const BUDGET_MS = 10_000;
const params = (numRuns: number): fc.Parameters<unknown> => ({ seed: SEED, numRuns, interruptAfterTimeLimit: BUDGET_MS });

test('the SPDY/3 dictionary: 1423 bytes with zlib dictionary id e3c6a7c2 (its adler32), as every SPDY/3 peer has it', () => {
  assert.equal(SPDY3_DICTIONARY.length, 1423);
  const dictId = zlib.deflateSync(Buffer.alloc(0), { dictionary: SPDY3_DICTIONARY }).readUInt32BE(2);
  assert.equal(dictId.toString(16), 'e3c6a7c2');
  assert.equal(SPDY3_DICTIONARY.subarray(0, 11).toString('latin1'), '\0\0\0\x07options');
  assert.ok(SPDY3_DICTIONARY.toString('latin1').endsWith(',*,enq=0.'));
});

const id31 = fc.integer({ min: 1, max: 0x7fffffff });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const bytes = (max: number): fc.Arbitrary<Buffer> => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));

const frameArb: fc.Arbitrary<{ bytes: Buffer; expect: SpdyFrame }> = fc.oneof(
  fc.tuple(id31, bytes(2000), fc.boolean()).map(([id, d, fin]) => ({ bytes: encodeData(id, d, fin), expect: { kind: 'data', streamId: id, flags: fin ? 1 : 0, data: d } as SpdyFrame })),
  fc.tuple(id31, id31, fc.integer({ min: 0, max: 7 }), bytes(300), fc.integer({ min: 0, max: 3 })).map(([id, assoc, pri, block, flags]) => ({ bytes: encodeSynStream(id, block, flags, assoc, pri), expect: { kind: 'syn_stream', streamId: id, assocId: assoc, priority: pri, flags, headerBlock: block } as SpdyFrame })),
  fc.tuple(id31, bytes(300)).map(([id, block]) => ({ bytes: encodeSynReply(id, block), expect: { kind: 'syn_reply', streamId: id, flags: 0, headerBlock: block } as SpdyFrame })),
  fc.tuple(id31, u32).map(([id, st]) => ({ bytes: encodeRstStream(id, st), expect: { kind: 'rst_stream', streamId: id, status: st } as SpdyFrame })),
  u32.map((pid) => ({ bytes: encodePing(pid), expect: { kind: 'ping', id: pid } as SpdyFrame })),
  fc.tuple(id31, u32).map(([id, st]) => ({ bytes: encodeGoaway(id, st), expect: { kind: 'goaway', lastGoodStreamId: id, status: st } as SpdyFrame })),
  fc.tuple(id31, id31).map(([id, d]) => ({ bytes: encodeWindowUpdate(id, d), expect: { kind: 'window_update', streamId: id, delta: d } as SpdyFrame })),
  fc.array(fc.record({ id: fc.integer({ min: 0, max: 0xffffff }), flags: fc.integer({ min: 0, max: 255 }), value: u32 }), { maxLength: 5 }).map((e) => e.map((x) => ({ ...x }))).map((entries) => ({ bytes: encodeSettings(entries), expect: { kind: 'settings', flags: 0, entries } as SpdyFrame })),
);

/** Splits `b` at the given fractions. */
function split(b: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => Math.floor(c * b.length)))].sort((x, y) => x - y);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(b.subarray(prev, p));
    prev = p;
  }
  out.push(b.subarray(prev));
  return out;
}

test('frames: encode → split anywhere → read gives the same frames, in order', () => {
  fc.assert(
    fc.property(fc.array(frameArb, { maxLength: 12 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 10 }), (frames, cuts) => {
      const all = Buffer.concat(frames.map((f) => f.bytes));
      const r = new SpdyFrameReader({ maxFrameBytes: 0xffffff });
      const got: SpdyFrame[] = [];
      for (const piece of split(all, cuts)) {
        r.push(piece);
        for (let f = r.next(); f !== undefined; f = r.next()) got.push(f);
      }
      assert.deepEqual(got, frames.map((f) => f.expect));
      assert.equal(r.buffered, 0);
    }),
    params(2000),
  );
});

test('frames: arbitrary bytes give frames or SpdyProtocolError only; buffering stays within one frame plus a chunk', () => {
  fc.assert(
    fc.property(fc.array(bytes(64), { maxLength: 20 }), fc.boolean(), (chunks, controlish) => {
      const r = new SpdyFrameReader({ maxFrameBytes: 1024 });
      try {
        for (const c0 of chunks) {
          // Half the runs make control frames likely (0x80 0x03 = control, version 3).
          const c = controlish && c0.length >= 2 ? Buffer.concat([Buffer.from([0x80, 0x03]), c0]) : c0;
          r.push(c);
          for (let f = r.next(); f !== undefined; f = r.next()) assert.ok(typeof f.kind === 'string');
          assert.ok(r.buffered <= 8 + 1024 + c.length, `buffered ${r.buffered}`);
        }
      } catch (err) {
        if (!(err instanceof SpdyProtocolError)) throw err;
      }
    }),
    params(5000),
  );
});

test('a frame longer than the limit is refused from its header alone (nothing of it is buffered first)', () => {
  const r = new SpdyFrameReader({ maxFrameBytes: 1000 });
  r.push(encodeData(1, Buffer.alloc(2000), false).subarray(0, 8));
  assert.throws(() => r.next(), SpdyProtocolError);
});

const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
const headerValue = fc.string({ maxLength: 40 }).filter((s) => !s.includes('\0'));

test('header blocks: pairs → our encoder → our decoder and zlib both give them back, across many blocks of one session', () => {
  fc.assert(
    fc.property(fc.array(fc.uniqueArray(fc.tuple(headerName, headerValue), { selector: (p) => p[0], maxLength: 8 }), { minLength: 1, maxLength: 6 }), (blocks) => {
      const enc = new HeaderBlockEncoder();
      const dec = new HeaderBlockDecoder({ maxBlockBytes: 1 << 20, maxPairs: 100 });
      const wire: Buffer[] = [];
      for (const pairs of blocks) {
        const b = enc.encode(pairs);
        wire.push(b);
        assert.deepEqual(dec.decode(b), new Map(pairs.map(([k, v]) => [k, [v]])));
      }
      const z = zlib.inflateSync(Buffer.concat(wire), { dictionary: SPDY3_DICTIONARY, finishFlush: zlib.constants.Z_SYNC_FLUSH });
      assert.deepEqual(z, Buffer.concat(blocks.map((p) => serializeHeaderPairs(p))));
    }),
    params(1000),
  );
});

test('header blocks compressed by zlib (as Go\'s spdystream does) decode, block after block', async () => {
  const def = zlib.createDeflate({ dictionary: SPDY3_DICTIONARY, level: 9 });
  const dec = new HeaderBlockDecoder({ maxBlockBytes: 1 << 20, maxPairs: 100 });
  for (const t of ['error', 'stdin', 'stdout', 'stderr', 'resize']) {
    def.write(serializeHeaderPairs([['streamtype', t], ['port', '8080']]));
    const block = await new Promise<Buffer>((resolve) => def.flush(zlib.constants.Z_SYNC_FLUSH, () => resolve(def.read() as Buffer)));
    assert.deepEqual(dec.decode(block), new Map([['streamtype', [t]], ['port', ['8080']]]));
  }
});

test('header blocks: arbitrary compressed or plain bytes fail as SpdyProtocolError only; a zlib bomb stops at the cap', () => {
  fc.assert(
    fc.property(bytes(200), fc.boolean(), (b, withPreamble) => {
      const dec = new HeaderBlockDecoder({ maxBlockBytes: 4096, maxPairs: 16 });
      const input = withPreamble ? Buffer.concat([new HeaderBlockEncoder().encode([]).subarray(0, 6), b]) : b;
      try {
        dec.decode(input);
      } catch (err) {
        if (!(err instanceof SpdyProtocolError)) throw err;
      }
      try {
        parseHeaderPairs(b, 16);
      } catch (err) {
        if (!(err instanceof SpdyProtocolError)) throw err;
      }
    }),
    params(5000),
  );
  const bomb = zlib.deflateSync(serializeHeaderPairs([['x', 'a'.repeat(4 * 1024 * 1024)]]), { dictionary: SPDY3_DICTIONARY, finishFlush: zlib.constants.Z_SYNC_FLUSH });
  const dec = new HeaderBlockDecoder({ maxBlockBytes: 64 * 1024, maxPairs: 16 });
  assert.throws(() => dec.decode(bomb), (e: unknown) => e instanceof SpdyProtocolError && /inflates past 65536 bytes/.test(e.message));
  assert.throws(() => dec.decode(Buffer.alloc(1)), SpdyProtocolError, 'a broken decoder stays broken');
});

test('resize reader: any input never throws; valid messages set the size; garbage stops it for good', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.string({ maxLength: 60 }), fc.record({ Width: fc.integer({ min: 0, max: 65535 }), Height: fc.integer({ min: 0, max: 65535 }) }).map((o) => JSON.stringify(o))), { maxLength: 20 }), (msgs) => {
      const r = new ResizeReader(undefined);
      let stopped = false;
      for (const m of msgs) {
        const ok = r.feed(m);
        if (stopped) assert.equal(ok, false);
        if (!ok) stopped = true;
      }
      if (!stopped) assert.ok(r.size === undefined || (Number.isInteger(r.size.width) && Number.isInteger(r.size.height)));
    }),
    params(3000),
  );
  const r = new ResizeReader(undefined);
  assert.equal(r.feed('{"Width":80,"Height":24}{"Width":100,'), true);
  assert.deepEqual(r.size, { width: 80, height: 24 });
  assert.equal(r.feed('"Height":50}'), true);
  assert.deepEqual(r.size, { width: 100, height: 50 });
  assert.equal(r.feed('{"Width":-1,"Height":5}'), false);
  assert.equal(r.feed('x'.repeat(10_000)), false);
  assert.deepEqual(r.size, { width: 100, height: 50 });
  const big = new ResizeReader(undefined);
  assert.equal(big.feed('{' + ' '.repeat(5000)), false, 'an unterminated message past 4 KiB stops reading');
});

test('a server session fed arbitrary bytes never throws; it ends with GOAWAY or keeps waiting; its replies stay bounded', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(bytes(40), frameArb.map((f) => f.bytes)), { maxLength: 8 }), async (chunks) => {
        const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
        const client = net.connect(port, '127.0.0.1');
        const sock = await accepted;
        let streams = 0;
        const closed = new Promise<void>((resolve) => {
          const s = new SpdySession({ socket: sock, limits: { maxStreams: 4, maxFrameBytes: 4096 }, onStream: (st) => {
            streams++;
            st.reply();
            st.on('error', () => {});
          }, onClose: () => resolve() });
          void s;
        });
        let received = 0;
        client.on('data', (d: Buffer) => (received += d.length));
        client.on('error', () => {});
        const sent = Buffer.concat(chunks);
        await new Promise<void>((r) => client.end(sent, r));
        // The client's end makes the session close (GOAWAY + end), so this always settles.
        await closed;
        client.destroy();
        assert.ok(streams <= 4 + 8, 'streams bounded');
        assert.ok(received <= 64 * (chunks.length + 2) + sent.length, `replies bounded (${received} for ${sent.length})`);
      }),
      { seed: SEED, numRuns: 200, interruptAfterTimeLimit: BUDGET_MS },
    );
  } finally {
    server.close();
  }
});

test('Go\'s compress/zlib, read as spdystream reads (kubectl, kube-apiserver), decodes our header blocks frame by frame', () => {
  const enc = new HeaderBlockEncoder();
  const blocks: Array<Array<[string, string]>> = [[], [['streamtype', 'error'], ['port', '8080']], [], [['x', 'y'.repeat(70_000)]], [['requestid', '7']]];
  const len = (b: Buffer): Buffer => {
    const l = Buffer.alloc(4);
    l.writeUInt32BE(b.length);
    return Buffer.concat([l, b]);
  };
  const input = Buffer.concat([len(SPDY3_DICTIONARY), ...blocks.map((p) => len(enc.encode(p)))]);
  const src = new URL('../../../../test/harness/go-zlib-headers/main.go', import.meta.url).pathname;
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'go-zlib-'));
  try {
    const r = spawnSync('go', ['run', src], { input, encoding: 'utf8', timeout: 180_000, env: { ...process.env, GO111MODULE: 'off', GOCACHE: cache, GOFLAGS: '' } });
    assert.equal(r.status, 0, `go run failed: ${r.error?.message ?? ''} ${r.stderr}`);
    assert.deepEqual(r.stdout.trimEnd().split('\n'), blocks.map((p) => `ok ${p.map(([k, v]) => `${k}=${v}`).join(';')}`));
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
});
