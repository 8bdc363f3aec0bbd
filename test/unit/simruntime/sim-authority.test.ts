/**
 * Issue 10 item 1: gRPC clients that send the unix socket PATH as `:authority` (grpc-go of the
 * cri-tools v1.26 / kubelet ≤ 1.25 generation, grpc-java) must be served by the simulated
 * runtime as containerd serves them. Without the connection shim in front of the grpc-js server,
 * nghttp2 resets every such stream with PROTOCOL_ERROR (the first two suites fail on a runtime
 * without it).
 *
 * The runtime under test is the product's SimulatedRuntime (its own listener + shim + grpc-js
 * server), driven by (1) node:http2's client with a custom `createConnection` to the socket and
 * (2) hand-made HPACK blocks covering the representations node's encoder never picks. Then the
 * shim and the HPACK pieces alone: chunk boundaries, Huffman vectors, undecodable input.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { H2AuthorityShim } from '../../../src/simruntime/h2-authority-shim.js';
import { HpackAuthorityRewriter, isValidAuthority, sanitizeAuthority } from '../../../src/simruntime/hpack-authority-rewriter.js';
import { huffmanDecode } from '../../../src/shared/hpack/hpack-huffman.js';
import {
  CLIENT_PREFACE,
  decodeVersionResponse,
  FLAG,
  frame,
  FRAME,
  grpcMessage,
  grpcRequestHeaders,
  incremental,
  indexed,
  neverIndexed,
  RawH2Connection,
  sizeUpdate,
  versionRequestBody,
  withoutIndexing,
} from './h2-raw-frames.js';
import { startHarness, type Harness } from './sim-harness.js';

const CALL_TIMEOUT_MS = 10_000;

interface CallResult {
  grpcStatus?: string;
  body: Buffer;
  error?: string;
}

/** One unary Version call on `session` with the given `:authority` (and extra headers). */
function versionCall(session: http2.ClientHttp2Session, authority: string, extra: http2.OutgoingHttpHeaders = {}): Promise<CallResult> {
  return new Promise((resolve) => {
    const req = session.request({
      ':method': 'POST',
      ':scheme': 'http',
      ':path': '/runtime.v1.RuntimeService/Version',
      ':authority': authority,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...extra,
    });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      req.close(http2.constants.NGHTTP2_CANCEL);
      resolve({ body: Buffer.concat(chunks), error: `no answer within ${CALL_TIMEOUT_MS} ms` });
    }, CALL_TIMEOUT_MS);
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('trailers', (t) => {
      clearTimeout(timer);
      resolve({ grpcStatus: String(t['grpc-status']), body: Buffer.concat(chunks) });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      resolve({ body: Buffer.concat(chunks), error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}` });
    });
    req.end(grpcMessage(versionRequestBody()));
  });
}

function assertVersionOk(r: CallResult, what: string): void {
  assert.equal(r.error, undefined, `${what}: ${r.error}`);
  assert.equal(r.grpcStatus, '0', what);
  assert.equal(decodeVersionResponse(r.body).runtimeName, 'shardlet-sim', what);
}

describe('sim runtime: :authority that nghttp2 rejects (node:http2 client)', () => {
  let h: Harness;
  let session: http2.ClientHttp2Session;
  before(async () => {
    h = await startHarness();
    session = http2.connect('http://localhost', { createConnection: () => net.connect(h.rt.socketPath) });
  });
  after(async () => {
    session.destroy();
    await h.close();
  });

  it('answers Version to a client that sends the socket path as :authority, call after call on one connection', async () => {
    // Node's encoder indexes the first one and refers to the table entry afterwards.
    for (let i = 0; i < 3; i++) assertVersionOk(await versionCall(session, h.rt.socketPath), `call ${i}`);
  });

  it('keeps serving through table evictions, other invalid values, valid ones and never-indexed fields', async () => {
    const long = '/var/run/' + 'x'.repeat(3_000) + '.sock'; // most of the 4 KiB table: evicts
    const sequence: [string, http2.OutgoingHttpHeaders][] = [
      ['localhost', {}],
      [long, {}],
      [h.rt.socketPath, {}],
      ['/a b/{c}', {}],
      [long, {}],
      ['unix:///run/containerd/containerd.sock', {}],
      [h.rt.socketPath, { [http2.sensitiveHeaders]: [':authority'] }],
      ['localhost', {}],
      [h.rt.socketPath, {}],
    ];
    for (const [authority, extra] of sequence) assertVersionOk(await versionCall(session, authority, extra), authority.slice(0, 40));
  });
});

describe('sim runtime: hand-made HPACK blocks with a path :authority', () => {
  let h: Harness;
  let c: RawH2Connection;
  let nextStream = 1;
  before(async () => {
    h = await startHarness();
    c = await RawH2Connection.open(h.rt.socketPath);
  });
  after(async () => {
    c.close();
    await h.close();
  });

  /** Sends one Version call whose header block is `block` (split/padded as asked) and checks the answer. */
  async function call(what: string, block: Buffer, opts: { split?: number; padded?: number; priority?: boolean; bytewise?: boolean } = {}): Promise<void> {
    const id = nextStream;
    nextStream += 2;
    const bytes: Buffer[] = [];
    const prefix: Buffer[] = [];
    let flags = 0;
    if (opts.padded !== undefined) {
      flags |= FLAG.PADDED;
      prefix.push(Buffer.from([opts.padded]));
    }
    if (opts.priority) {
      flags |= FLAG.PRIORITY;
      prefix.push(Buffer.from([0, 0, 0, 0, 15]));
    }
    const cut = opts.split ?? block.length;
    const first = Buffer.concat([...prefix, block.subarray(0, cut), Buffer.alloc(opts.padded ?? 0)]);
    bytes.push(frame(FRAME.HEADERS, flags | (cut === block.length ? FLAG.END_HEADERS : 0), id, first));
    if (cut < block.length) bytes.push(frame(FRAME.CONTINUATION, FLAG.END_HEADERS, id, block.subarray(cut)));
    bytes.push(frame(FRAME.DATA, FLAG.END_STREAM, id, grpcMessage(versionRequestBody())));
    if (opts.bytewise) await c.sendBytewise(Buffer.concat(bytes));
    else c.send(Buffer.concat(bytes));
    const r = await c.outcome(id);
    assert.equal(r.rst, undefined, `${what}: stream ${id} reset with code ${r.rst} (1 = PROTOCOL_ERROR)`);
    assert.equal(decodeVersionResponse(r.data).runtimeName, 'shardlet-sim', what);
  }

  it('rewrites every representation that can carry it, keeping the dynamic table in step', async () => {
    const path = h.rt.socketPath;
    // Dynamic table after each step, newest first (index 62 = newest).
    await call('literal with incremental indexing, static name', Buffer.concat([incremental(1, path), grpcRequestHeaders('Version')])); // [auth]
    await call('indexed reference to the rewritten entry', Buffer.concat([indexed(62), grpcRequestHeaders('Version')]));
    await call('incremental indexing naming the dynamic :authority entry', Buffer.concat([incremental(62, '/other/path.sock'), grpcRequestHeaders('Version')])); // [auth2, auth]
    await call('literal name, without indexing', Buffer.concat([withoutIndexing(':authority', path), grpcRequestHeaders('Version')]));
    await call('never indexed, static name', Buffer.concat([neverIndexed(1, path), grpcRequestHeaders('Version')]));
    await call('a regular header inserted after the authority', Buffer.concat([incremental(1, path), grpcRequestHeaders('Version'), incremental('x-trace', 'abc')])); // [x-trace, auth, auth2, auth]
    await call('without indexing, naming dynamic entry 63 (an authority, found through the mirror)', Buffer.concat([withoutIndexing(63, path), grpcRequestHeaders('Version'), indexed(62)]));
    await call('size update to 0 empties the table, then a new insert', Buffer.concat([sizeUpdate(0), sizeUpdate(4096), incremental(1, path), grpcRequestHeaders('Version')])); // [auth]
    await call('without indexing, naming dynamic entry 62 after the reset', Buffer.concat([withoutIndexing(62, '/x'), grpcRequestHeaders('Version')]));
    await call('empty value, never indexed', Buffer.concat([neverIndexed(1, ''), grpcRequestHeaders('Version')]));
  });

  it('handles CONTINUATION, padding, priority, frames split across reads and values over one frame', async () => {
    const path = h.rt.socketPath;
    const block = Buffer.concat([incremental(1, path), grpcRequestHeaders('Version')]);
    await call('HEADERS + CONTINUATION, cut inside the authority', block, { split: 5 });
    await call('PADDED + PRIORITY', block, { padded: 7, priority: true });
    await call('sent one byte per write', block, { bytewise: true, padded: 2 });
    // 20,000 octets: the rewritten block no longer fits one 16 KiB frame; larger than the table, so
    // inserting it empties the table (RFC 7541 §4.4).
    const huge = '/' + 'd/'.repeat(10_000);
    await call('a 20 KB path, re-framed as HEADERS + CONTINUATION', Buffer.concat([incremental(1, huge), grpcRequestHeaders('Version')]), { split: 1_000 });
    await call('after the table emptied', Buffer.concat([incremental(1, path), grpcRequestHeaders('Version')]));
    await call('and refers to it', Buffer.concat([indexed(62), grpcRequestHeaders('Version')]));
    assert.equal(c.closed, false);
  });
});

/** A fake accepted socket: the test pushes client bytes in; server writes are collected. */
function fakeSocket(): { socket: Duplex; written: Buffer[] } {
  const written: Buffer[] = [];
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      written.push(chunk);
      cb();
    },
  });
  return { socket, written };
}

/** Feeds `input` to a fresh shim in chunks of the given sizes (cycled) and returns what it passes on. */
async function throughShim(input: Buffer, sizes: readonly number[]): Promise<{ out: Buffer; rewrites: number; interpreting: boolean }> {
  const { socket } = fakeSocket();
  const shim = new H2AuthorityShim(socket);
  const out: Buffer[] = [];
  shim.on('data', (d: Buffer) => out.push(d));
  const ended = new Promise<void>((resolve) => shim.once('end', resolve));
  let p = 0;
  for (let i = 0; p < input.length; i++) {
    const n = sizes[i % sizes.length] ?? 1;
    socket.push(input.subarray(p, p + n));
    p += n;
  }
  socket.push(null);
  await ended;
  const r = { out: Buffer.concat(out), rewrites: shim.rewrites, interpreting: shim.interpreting };
  shim.destroy();
  return r;
}

describe('H2AuthorityShim on its own', () => {
  const settings = frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 4, 0, 0, 0xff, 0xff]));
  const data = (id: number): Buffer => frame(FRAME.DATA, FLAG.END_STREAM, id, grpcMessage(Buffer.alloc(300, 7)));
  const headers = (id: number, block: Buffer): Buffer => frame(FRAME.HEADERS, FLAG.END_HEADERS, id, block);
  const chunkings: readonly (readonly number[])[] = [[1], [2, 7], [9], [10, 1], [4096], [5, 300, 3]];

  it('passes a connection with valid authorities through byte for byte, whatever the read boundaries', async () => {
    const input = Buffer.concat([
      CLIENT_PREFACE,
      settings,
      headers(1, Buffer.concat([incremental(1, 'localhost'), grpcRequestHeaders('Version')])),
      data(1),
      frame(FRAME.HEADERS, FLAG.PADDED, 3, Buffer.concat([Buffer.from([3]), indexed(62), Buffer.alloc(3)])),
      frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 3, grpcRequestHeaders('Status')),
      data(3),
      frame(FRAME.DATA, 0, 5, Buffer.alloc(0)),
    ]);
    for (const sizes of chunkings) {
      const r = await throughShim(input, sizes);
      assert.ok(r.out.equals(input), `chunks ${sizes.join(',')}`);
      assert.equal(r.rewrites, 0);
      assert.equal(r.interpreting, true);
    }
  });

  it('rewrites the same way whatever the read boundaries, and only the authority value', async () => {
    const path = '/run/x/sim.sock';
    const input = Buffer.concat([CLIENT_PREFACE, settings, headers(1, Buffer.concat([incremental(1, path), grpcRequestHeaders('Version')])), data(1), headers(3, Buffer.concat([indexed(62), grpcRequestHeaders('Version')])), data(3)]);
    const whole = await throughShim(input, [input.length]);
    assert.equal(whole.rewrites, 1);
    const expected = Buffer.concat([CLIENT_PREFACE, settings, headers(1, Buffer.concat([incremental(1, '_run_x_sim.sock'), grpcRequestHeaders('Version')])), data(1), headers(3, Buffer.concat([indexed(62), grpcRequestHeaders('Version')])), data(3)]);
    assert.ok(whole.out.equals(expected), 'one HEADERS frame with the value replaced in place, everything else as sent');
    for (const sizes of chunkings) {
      const r = await throughShim(input, sizes);
      assert.ok(r.out.equals(expected), `chunks ${sizes.join(',')}`);
    }
  });

  it('becomes a plain pipe on a malformed header sequence and forwards everything as received', async () => {
    const input = Buffer.concat([
      CLIENT_PREFACE,
      frame(FRAME.HEADERS, 0, 1, incremental(1, '/a.sock')), // no END_HEADERS …
      data(1), // … then a DATA frame: a connection error for nghttp2 to report
      headers(3, Buffer.concat([incremental(1, '/b.sock'), grpcRequestHeaders('Version')])),
    ]);
    const r = await throughShim(input, [3]);
    assert.ok(r.out.equals(input));
    assert.equal(r.interpreting, false);
    assert.equal(r.rewrites, 0);
  });
});

describe('HPACK pieces', () => {
  it('huffmanDecode: RFC 7541 C.4 vectors, and invalid padding is refused', () => {
    const dec = (hex: string): string | undefined => {
      const b = Buffer.from(hex, 'hex');
      return huffmanDecode(b, 0, b.length)?.toString('latin1');
    };
    assert.equal(dec('f1e3c2e5f23a6ba0ab90f4ff'), 'www.example.com');
    assert.equal(dec('a8eb10649cbf'), 'no-cache');
    assert.equal(dec('25a849e95ba97d7f'), 'custom-key');
    assert.equal(dec('25a849e95bb8e8b4bf'), 'custom-value');
    assert.equal(dec(''), '');
    assert.equal(dec('f1e3c2e5f23a6ba0ab90f400'), undefined, 'padding of zeros');
    assert.equal(dec('ffffffff'), undefined, 'EOS inside the string');
  });

  it('authority validity follows nghttp2, and the replacement keeps the length', () => {
    for (const ok of ['localhost', 'localhost:10250', '[::1]:80', 'a%2Fb', "x-._~!$&'()*+,;=:@"]) assert.equal(isValidAuthority(Buffer.from(ok)), true, ok);
    for (const bad of ['', '/run/x.sock', 'a b', 'x{y}', 'a\u0000b', 'unix:///x']) assert.equal(isValidAuthority(Buffer.from(bad, 'latin1')), false, JSON.stringify(bad));
    const s = sanitizeAuthority(Buffer.from('/run/containerd/containerd.sock'));
    assert.equal(s.toString(), '_run_containerd_containerd.sock');
    assert.equal(isValidAuthority(s), true);
  });

  it('an undecodable block turns the rewriter inert: later blocks pass unchanged', () => {
    const rw = new HpackAuthorityRewriter();
    assert.ok(rw.rewrite(incremental(1, '/a.sock')), 'rewritten while active');
    assert.equal(rw.rewrite(indexed(70)), undefined, 'index beyond the table');
    assert.equal(rw.active, false);
    assert.equal(rw.rewrite(incremental(1, '/a.sock')), undefined);
    const truncated = new HpackAuthorityRewriter();
    assert.equal(truncated.rewrite(incremental(1, '/a.sock').subarray(0, 4)), undefined);
    assert.equal(truncated.active, false);
    const tooBig = new HpackAuthorityRewriter();
    assert.equal(tooBig.rewrite(sizeUpdate(1 << 20)), undefined, 'a size update above the advertised 4096');
    assert.equal(tooBig.active, false);
  });
});
