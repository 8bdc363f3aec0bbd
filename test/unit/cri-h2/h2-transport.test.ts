/**
 * The CRI client's HTTP/2 unary transports ('h2' and 'node-http2', alike) against real peers on unix
 * sockets: a node:http2 server the test scripts (GOAWAY with streams in flight, RST_STREAM,
 * trailers-only errors, DATA split across many frames, small peer windows and concurrency
 * limits, the socket closed mid-call, deadline, abort, reconnect after a restart) and a raw
 * frame peer (padding, CONTINUATION, a gRPC prefix split across frames, PING, hostile frames).
 * Deadlines and the reconnect backoff run on a FakeClock the tests step.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { CriClient } from '../../../src/shared/cri/cri-client.js';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import type { CriErrorCode } from '../../../src/shared/cri/cri-errors.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { Flag, FrameType, H2Error } from '../../../src/shared/cri/h2/h2-frames.js';
import type { Container, RunPodSandboxRequest } from '../../../src/shared/cri/cri-types.js';
import {
  grpcFramed, hpackLiteral, waitFor, OK_TRAILERS, rawFrame, rawPeer, replyOk, requestOf, RESPONSE_HEADERS, responseMessage, scriptedServer, tempSocket, VERSION_REPLY,
} from './h2-test-peers.js';

const isCode = (code: CriErrorCode, msg?: RegExp) => (e: unknown): boolean => {
  assert.ok(e instanceof CriError, `not a CriError: ${String(e)}`);
  assert.equal(e.code, code, e.message);
  if (msg) assert.match(e.message, msg);
  return true;
};

function client(socket: string, extra: Partial<ConstructorParameters<typeof CriClient>[0]> = {}): CriClient {
  return new CriClient({ endpoint: `unix://${socket}`, transport: 'h2', timeoutMs: 30_000, ...extra });
}

/** The HTTP/2 transports that must behave alike against the same scripted node:http2 peer. */
function onHttp2Transports(name: string, fn: (transport: 'h2' | 'node-http2') => Promise<void>): void {
  for (const transport of ['h2', 'node-http2'] as const) test(`${transport} on node:http2: ${name}`, () => fn(transport));
}

function containers(n: number): Container[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `c${i}`.padEnd(64, '0'), podSandboxId: `s${i}`.padEnd(64, '0'), metadata: { name: `ctr-${i}`, attempt: 0 },
    image: { image: 'busybox' }, imageRef: 'sha256:' + 'a'.repeat(64), state: 'CONTAINER_RUNNING', createdAt: String(1_700_000_000_000_000_000 + i),
    labels: { 'io.kubernetes.pod.name': `pod-${i}`, 'io.kubernetes.pod.namespace': 'default' }, annotations: {},
  } as unknown as Container));
}

onHttp2Transports('a 1 MB reply in 1 KiB writes, trailers-only errors with percent-encoded messages, HTTP status mapping', async (transport) => {
  const t = tempSocket(`h2-basic-${transport}-`);
  const srv = await scriptedServer(t.socket, (stream, headers) => {
    const p = headers[':path'];
    if (p === '/runtime.v1.RuntimeService/ListContainers') replyOk(stream, responseMessage('ListContainers', { containers: containers(4_000) }), 1024);
    else if (p === '/runtime.v1.RuntimeService/ContainerStatus') stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '5', 'grpc-message': 'container %22x%22 not found: %C3%BC' }, { endStream: true });
    else if (p === '/runtime.v1.RuntimeService/Status') stream.respond({ ':status': 404 }, { endStream: true });
    else replyOk(stream, responseMessage('Version', VERSION_REPLY));
  });
  const c = client(t.socket, { transport });
  try {
    assert.equal((await c.version()).runtimeName, 'peer');
    const list = await c.listContainers();
    assert.equal(list.length, 4_000);
    assert.equal(list[3_999]?.metadata?.name, 'ctr-3999');
    await assert.rejects(c.containerStatus('x'), isCode('ERR_CRI_NOT_FOUND', /container "x" not found: ü/));
    await assert.rejects(c.status(), isCode('ERR_CRI_UNIMPLEMENTED', /HTTP status code 404/));
    assert.equal(srv.sessions.length, 1, 'one connection for all calls');
  } finally {
    c.close();
    await srv.close();
    t.cleanup();
  }
});

onHttp2Transports('RST_STREAM is an error; REFUSED_STREAM is retried once; the request headers are the gRPC ones', async (transport) => {
  const t = tempSocket(`h2-rst-${transport}-`);
  let refusals = 0;
  const seen: http2.IncomingHttpHeaders[] = [];
  const srv = await scriptedServer(t.socket, (stream, headers, body) => {
    seen.push(headers);
    const p = headers[':path'];
    if (p === '/runtime.v1.RuntimeService/StopContainer') stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    else if (p === '/runtime.v1.RuntimeService/StartContainer') {
      const req = requestOf('StartContainer', body) as { containerId: string };
      if (req.containerId === 'always' || refusals++ === 0) stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else replyOk(stream, responseMessage('StartContainer', {}));
    } else replyOk(stream, responseMessage('Version', VERSION_REPLY));
  });
  const c = client(t.socket, { transport });
  try {
    await c.version({ timeoutMs: 7_000 });
    assert.equal(seen[0]?.[':method'], 'POST');
    assert.equal(seen[0]?.[':scheme'], 'http');
    assert.equal(seen[0]?.[':authority'], 'localhost');
    assert.equal(seen[0]?.['content-type'], 'application/grpc');
    assert.equal(seen[0]?.['te'], 'trailers');
    assert.match(String(seen[0]?.['grpc-timeout']), /^(7000|69\d\d)m$/);
    await assert.rejects(c.stopContainer('x', 1), isCode('ERR_CRI_INTERNAL', /RST_STREAM with code 2/));
    await c.startContainer('once');
    assert.equal(refusals, 2, 'refused once, then served on the retry');
    await assert.rejects(c.startContainer('always'), isCode('ERR_CRI_UNAVAILABLE', /RST_STREAM with code 7/), 'a second refusal is not retried');
  } finally {
    c.close();
    await srv.close();
    t.cleanup();
  }
});

onHttp2Transports('GOAWAY — streams above last-stream-id are retried on a new connection, the others finish', async (transport) => {
  const t = tempSocket(`h2-goaway-${transport}-`);
  let held: http2.ServerHttp2Stream | undefined;
  const srv = await scriptedServer(t.socket, (stream, _headers, body, session) => {
    const req = requestOf('ContainerStatus', body) as { containerId: string };
    if (req.containerId === 'held') {
      held = stream;
      return;
    }
    if (srv.sessions.indexOf(session) === 0) {
      // The second call on the first connection: GOAWAY naming only the held stream (1) as processed.
      session.goaway(http2.constants.NGHTTP2_NO_ERROR, 1);
      return;
    }
    replyOk(stream, responseMessage('ContainerStatus', { status: { id: `${req.containerId}@${srv.sessions.indexOf(session)}` } }));
  });
  const c = client(t.socket, { transport });
  try {
    const first = c.containerStatus('held');
    await waitFor(srv.events, 'request', () => held !== undefined, 'the held request');
    const second = await c.containerStatus('moved');
    assert.equal(second.status?.id, 'moved@1', 'retried on the second connection');
    replyOk(held as http2.ServerHttp2Stream, responseMessage('ContainerStatus', { status: { id: 'held@0' } }));
    assert.equal((await first).status?.id, 'held@0', 'the stream below last-stream-id finished on the draining connection');
    assert.equal((await c.containerStatus('third')).status?.id, 'third@1', 'new calls use the new connection');
    assert.equal(srv.sessions.length, 2);
  } finally {
    c.close();
    await srv.close();
    t.cleanup();
  }
});

onHttp2Transports('a 200 KB request through a 1,000-octet peer window; MAX_CONCURRENT_STREAMS 1 queues calls', async (transport) => {
  const t = tempSocket(`h2-flow-${transport}-`);
  let open = 0;
  let maxOpen = 0;
  const lengths: number[] = [];
  const srv = await scriptedServer(t.socket, (stream, headers, body, session) => {
    if (headers[':path'] === '/runtime.v1.RuntimeService/RunPodSandbox') {
      lengths.push(body.length);
      const req = requestOf('RunPodSandbox', body) as RunPodSandboxRequest;
      replyOk(stream, responseMessage('RunPodSandbox', { podSandboxId: String(Object.values(req.config?.annotations ?? {}).join('').length) }));
      return;
    }
    open++;
    maxOpen = Math.max(maxOpen, open);
    // Answer once a PING round trip completes: every stream the client had already sent is
    // ahead of the PING's ACK on the wire, so concurrent calls would overlap here if it let them.
    session.ping(() => {
      open--;
      replyOk(stream, responseMessage('Version', VERSION_REPLY));
    });
  }, { initialWindowSize: 1_000, maxConcurrentStreams: 1 });
  const c = client(t.socket, { transport });
  try {
    const annotations = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, 'v'.repeat(1_000)]));
    const id = await c.runPodSandbox({ config: { metadata: { name: 'p', namespace: 'n', uid: 'u', attempt: 0 }, annotations } } as unknown as RunPodSandboxRequest);
    assert.equal(id, String(200 * 1_000), 'the whole body arrived');
    assert.ok((lengths[0] ?? 0) > 200_000);
    const results = await Promise.all(Array.from({ length: 6 }, () => c.version()));
    assert.equal(results.length, 6);
    assert.equal(maxOpen, 1, 'never more streams than the peer allows');
  } finally {
    c.close();
    await srv.close();
    t.cleanup();
  }
});

onHttp2Transports('the peer closing the socket mid-call is UNAVAILABLE; the next call reconnects at once', async (transport) => {
  const t = tempSocket(`h2-close-${transport}-`);
  const srv = await scriptedServer(t.socket, (stream, headers) => {
    if (headers[':path'] === '/runtime.v1.RuntimeService/ListPodSandbox') {
      for (const s of srv.sockets) s.destroy();
      return;
    }
    replyOk(stream, responseMessage('Version', VERSION_REPLY));
  });
  const c = client(t.socket, { transport });
  try {
    await c.version();
    await assert.rejects(c.listPodSandbox(), isCode('ERR_CRI_UNAVAILABLE', /Connection to the runtime lost/));
    await c.version();
    assert.equal(srv.sessions.length, 2);
  } finally {
    c.close();
    await srv.close();
    t.cleanup();
  }
});

onHttp2Transports('deadline and abort reset the stream (RST_STREAM CANCEL) and are typed; the hook sees every call', async (transport) => {
  const t = tempSocket(`h2-deadline-${transport}-`);
  let arrived = 0;
  const srv = await scriptedServer(t.socket, () => {
    arrived++; // never answers
  });
  const clock = new FakeClock();
  const ops: string[] = [];
  const c = client(t.socket, { transport, clock, onOperation: (e) => ops.push(`${e.operation}:${e.error ? (e.error as CriError).code : 'ok'}`) });
  try {
    const p = c.listContainers(undefined, { timeoutMs: 5_000 });
    await waitFor(srv.events, 'request', () => arrived === 1, 'the request at the server');
    clock.step(4_999);
    clock.step(1);
    await assert.rejects(p, isCode('ERR_CRI_DEADLINE_EXCEEDED'));
    await waitFor(srv.events, 'closed', () => srv.closedCodes.length === 1, 'the server seeing the reset');
    assert.equal(srv.closedCodes[0], http2.constants.NGHTTP2_CANCEL);

    const ac = new AbortController();
    const q = c.listContainers(undefined, { signal: ac.signal });
    await waitFor(srv.events, 'request', () => arrived === 2, 'the second request at the server');
    ac.abort();
    await assert.rejects(q, isCode('ERR_CRI_CANCELLED'));
    await waitFor(srv.events, 'closed', () => srv.closedCodes.length === 2, 'the server seeing the second reset');
    assert.equal(srv.closedCodes[1], http2.constants.NGHTTP2_CANCEL);
    assert.deepEqual(ops, ['list_containers:ERR_CRI_DEADLINE_EXCEEDED', 'list_containers:ERR_CRI_CANCELLED']);
    assert.equal(clock.pendingTimers, 0, 'completed calls leave no timer behind');
  } finally {
    c.close();
    await srv.close();
    t.cleanup();
  }
});

onHttp2Transports('reconnect after the runtime restarts — fail fast during the backoff, dial lazily after it', async (transport) => {
  const t = tempSocket(`h2-restart-${transport}-`);
  const handler = (stream: http2.ServerHttp2Stream): void => replyOk(stream, responseMessage('Version', VERSION_REPLY));
  let srv = await scriptedServer(t.socket, handler);
  const clock = new FakeClock();
  const c = client(t.socket, { transport, clock, random: () => 0.5 });
  try {
    await c.version();
    await srv.close();
    // Calls fail UNAVAILABLE: first on the dying connection, then on a failed dial.
    let msg = '';
    for (let i = 0; i < 20 && !/No connection established/.test(msg); i++) {
      await assert.rejects(c.version(), (e: unknown) => {
        msg = (e as Error).message;
        return isCode('ERR_CRI_UNAVAILABLE')(e);
      });
    }
    assert.match(msg, /No connection established/);
    srv = await scriptedServer(t.socket, handler);
    // Within the backoff (100 ms, jitter 0 with random 0.5) calls fail at once, without dialling.
    await assert.rejects(c.version(), isCode('ERR_CRI_UNAVAILABLE', /No connection established/));
    assert.equal(srv.sessions.length, 0);
    clock.step(100);
    assert.equal((await c.version()).runtimeName, 'peer', 'the first call after the backoff dials and is served');
    assert.equal(srv.sessions.length, 1);
  } finally {
    c.close();
    await srv.close();
    t.cleanup();
  }
});

test('h2 on a raw peer: padding, CONTINUATION, a gRPC prefix split across DATA frames, PING answered, unknown frames ignored', async () => {
  const t = tempSocket('h2-raw-');
  const msg = responseMessage('Version', VERSION_REPLY);
  const framed = grpcFramed(msg);
  const peer = await rawPeer(t.socket, (id, write) => {
    const padded = (payload: Buffer, pad: number): Buffer => Buffer.concat([Buffer.from([pad]), payload, Buffer.alloc(pad)]);
    write(rawFrame(FrameType.PING, 0, 0, '0102030405060708'));
    write(rawFrame(0xfa, 0, id, 'deadbeef')); // unknown type
    // Response headers split: HEADERS (padded, no END_HEADERS) + CONTINUATION.
    write(rawFrame(FrameType.HEADERS, Flag.PADDED, id, padded(RESPONSE_HEADERS.subarray(0, 3), 4)));
    write(rawFrame(FrameType.CONTINUATION, Flag.END_HEADERS, id, RESPONSE_HEADERS.subarray(3)));
    write(rawFrame(FrameType.DATA, 0, id, framed.subarray(0, 2)));
    write(rawFrame(FrameType.DATA, Flag.PADDED, id, padded(framed.subarray(2, 7), 10)));
    write(rawFrame(FrameType.DATA, 0, id, framed.subarray(7)));
    write(rawFrame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, id, OK_TRAILERS));
  });
  const c = client(t.socket);
  try {
    assert.deepEqual({ ...(await c.version()) }, { ...VERSION_REPLY });
    const ack = await peer.next(FrameType.PING);
    assert.equal(ack[1], Flag.ACK);
    assert.equal(ack[3].toString('hex'), '0102030405060708');
    const settings = peer.frames.filter((f) => f[0] === FrameType.SETTINGS);
    assert.ok(settings.some((f) => f[1] === Flag.ACK), 'the peer\'s SETTINGS are acknowledged');
    const ours = settings.find((f) => f[1] === 0)?.[3] ?? Buffer.alloc(0);
    const values = new Map<number, number>();
    for (let o = 0; o < ours.length; o += 6) values.set(ours.readUInt16BE(o), ours.readUInt32BE(o + 2));
    assert.equal(values.get(0x2), 0, 'ENABLE_PUSH 0');
    assert.equal(values.get(0x4), 16 * 1024 * 1024, 'INITIAL_WINDOW_SIZE = CRI_FLOW_CONTROL_WINDOW');
    const wu = peer.frames.find((f) => f[0] === FrameType.WINDOW_UPDATE && f[2] === 0);
    assert.equal(wu?.[3].readUInt32BE(0), 16 * 1024 * 1024 - 65_535, 'the connection window raised to match');
  } finally {
    c.close();
    await peer.close();
    t.cleanup();
  }
});

test('h2 on a raw peer: hostile replies end the call typed — oversized, compressed, two messages, bad HPACK, oversized frame', async () => {
  const t = tempSocket('h2-hostile-');
  let mode = '';
  const peer = await rawPeer(t.socket, (id, write) => {
    const headers = rawFrame(FrameType.HEADERS, Flag.END_HEADERS, id, RESPONSE_HEADERS);
    const trailers = rawFrame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, id, OK_TRAILERS);
    const msg = responseMessage('Version', VERSION_REPLY);
    switch (mode) {
      case 'huge': {
        // Claims 2 GB; sends 5 octets. Must not allocate it.
        write(Buffer.concat([headers, rawFrame(FrameType.DATA, 0, id, '007fffffff')]));
        return;
      }
      case 'compressed':
        write(Buffer.concat([headers, rawFrame(FrameType.DATA, 0, id, grpcFramed(msg, 1)), trailers]));
        return;
      case 'two':
        write(Buffer.concat([headers, rawFrame(FrameType.DATA, 0, id, Buffer.concat([grpcFramed(msg), grpcFramed(msg)])), trailers]));
        return;
      case 'no-message':
        write(Buffer.concat([headers, trailers]));
        return;
      case 'bad-hpack':
        write(rawFrame(FrameType.HEADERS, Flag.END_HEADERS, id, 'ff00'));
        return;
      case 'big-frame': {
        const b = Buffer.alloc(9);
        b.writeUIntBE(1 << 20, 0, 3);
        b[3] = FrameType.DATA;
        b.writeUInt32BE(id, 5);
        write(b);
        return;
      }
      case 'status-literal':
        write(Buffer.concat([headers, rawFrame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, id, Buffer.concat([hpackLiteral('grpc-status', '9'), hpackLiteral('grpc-message', 'no%')]))]));
        return;
      default:
        write(Buffer.concat([headers, rawFrame(FrameType.DATA, 0, id, grpcFramed(msg)), trailers]));
    }
  });
  const c = client(t.socket);
  try {
    const run = async (m: string, code: CriErrorCode, re?: RegExp): Promise<void> => {
      mode = m;
      await assert.rejects(c.version(), isCode(code, re), m);
    };
    await run('huge', 'ERR_CRI_RESOURCE_EXHAUSTED', /larger than max/);
    const rst = await peer.next(FrameType.RST_STREAM);
    assert.equal(rst[3].readUInt32BE(0), H2Error.CANCEL);
    await run('compressed', 'ERR_CRI_INTERNAL', /Compressed/);
    await run('two', 'ERR_CRI_UNIMPLEMENTED', /Too many responses/);
    await run('no-message', 'ERR_CRI_UNIMPLEMENTED', /No message/);
    await run('status-literal', 'ERR_CRI_FAILED_PRECONDITION', /no%/);
    mode = '';
    await c.version();
    assert.equal(peer.connections, 1, 'stream-level errors keep the connection');
    await run('bad-hpack', 'ERR_CRI_UNAVAILABLE', /connection error/);
    const goaway = await peer.next(FrameType.GOAWAY);
    assert.equal(goaway[3].readUInt32BE(4), H2Error.COMPRESSION_ERROR);
    await run('big-frame', 'ERR_CRI_UNAVAILABLE', /MAX_FRAME_SIZE/);
    mode = '';
    await c.version();
    assert.equal(peer.connections, 3, 'each connection error cost one connection');
  } finally {
    c.close();
    await peer.close();
    t.cleanup();
  }
});

test('both transports: a StopContainer with a grace period beyond 24.8 days is sent with grpc-timeout ≤ 2,147,483 S (an int32 of ms on grpc-js servers)', async () => {
  for (const transport of ['h2', 'node-http2', 'grpc-js'] as const) {
    const t = tempSocket(`timeout-cap-${transport}-`);
    const seen: string[] = [];
    const srv = await scriptedServer(t.socket, (stream, headers) => {
      seen.push(String(headers['grpc-timeout']));
      const stop = headers[':path'] === '/runtime.v1.RuntimeService/StopContainer';
      replyOk(stream, stop ? responseMessage('StopContainer', {}) : responseMessage('Version', VERSION_REPLY));
    });
    const c = client(t.socket, { transport });
    try {
      await c.stopContainer('x', 400_000_000_000);
      assert.equal(seen.length, 1, transport);
      const m = /^(\d+)([HMSmun])$/.exec(seen[0] ?? '');
      assert.ok(m, `${transport}: grpc-timeout ${seen[0]}`);
      const perUnit: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 1e-3, n: 1e-6 };
      const ms = Number(m[1]) * (perUnit[m[2] as string] as number);
      assert.ok(ms <= 2 ** 31 - 1, `${transport}: grpc-timeout ${seen[0]} is ${ms} ms, past an int32`);
      assert.ok(ms >= 2_147_000_000, `${transport}: grpc-timeout ${seen[0]} is not the capped maximum`);
    } finally {
      c.close();
      await srv.close();
      t.cleanup();
    }
  }
});

test('h2 on a raw peer: a reply that arrived whole in one read survives the reads after it (the connection reuses one read buffer)', async () => {
  const t = tempSocket('h2-reuse-');
  const framed = grpcFramed(responseMessage('Version', VERSION_REPLY));
  const peer = await rawPeer(t.socket, (id, write) => {
    // The whole message in one DATA frame, then a PING: once its ACK is back, the client has
    // consumed the read that held the message. Then 16 KiB of junk (an unknown frame type,
    // ignored) lands where that read was, and only then the trailers complete the call.
    write(Buffer.concat([rawFrame(FrameType.HEADERS, Flag.END_HEADERS, id, RESPONSE_HEADERS), rawFrame(FrameType.DATA, 0, id, framed), rawFrame(FrameType.PING, 0, 0, '0807060504030201')]));
    void peer.next(FrameType.PING).then(() => {
      write(rawFrame(0xfa, 0, id, Buffer.alloc(16_384, 0xff)));
      write(rawFrame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, id, OK_TRAILERS));
    });
  });
  const c = client(t.socket);
  try {
    assert.deepEqual({ ...(await c.version()) }, { ...VERSION_REPLY });
  } finally {
    c.close();
    await peer.close();
    t.cleanup();
  }
});

onHttp2Transports('large list replies gathered in reused buffers — concurrent calls of one method each get their own, and repeated calls stay exact', async (transport) => {
  const t = tempSocket(`h2-lists-${transport}-`);
  // Two different replies by filter, each ~0.5 MB (spread over many DATA frames), written in
  // 1 KiB pieces so that both streams' frames interleave on the connection.
  const named = (prefix: string, n: number): Container[] => containers(n).map((c, i) => ({ ...c, id: `${prefix}${i}`.padEnd(64, '0'), metadata: { name: `${prefix}-${i}`, attempt: 0 } }));
  const lists: Record<string, Container[]> = { a: named('a', 1_500), b: named('b', 2_000) };
  const srv = await scriptedServer(t.socket, (stream, _headers, body) => {
    const req = requestOf('ListContainers', body) as { filter?: { podSandboxId?: string } };
    const which = req.filter?.podSandboxId === 'b' ? 'b' : 'a';
    replyOk(stream, responseMessage('ListContainers', { containers: lists[which] }), 1024);
  });
  const c = client(t.socket, { transport });
  const names = (l: Container[]): string[] => l.map((x) => x.metadata?.name ?? '');
  try {
    for (let round = 0; round < 3; round++) {
      const [a, b, a2] = await Promise.all([c.listContainers({ podSandboxId: 'a' }), c.listContainers({ podSandboxId: 'b' }), c.listContainers({ podSandboxId: 'a' })]);
      assert.deepEqual(names(a), names(lists['a']!), `round ${round}: first 'a'`);
      assert.deepEqual(names(b), names(lists['b']!), `round ${round}: 'b'`);
      assert.deepEqual(names(a2), names(lists['a']!), `round ${round}: second 'a'`);
    }
  } finally {
    c.close();
    await srv.close();
    t.cleanup();
  }
});
