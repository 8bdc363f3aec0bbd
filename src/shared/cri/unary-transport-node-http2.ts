/**
 * The 'node-http2' unary transport: CRI calls on Node's own HTTP/2 client (`node:http2`, nghttp2
 * underneath — what grpc-js and undici build on), with gRPC over HTTP/2 done here: the request
 * headers, the 5-octet length prefix, grpc-timeout, the reply's one message and the
 * grpc-status / grpc-message trailers.
 *
 * Channel semantics are those of the 'h2' transport and grpc-js for unary calls without
 * wait-for-ready:
 *   - one current session; the first call dials (lazily); calls made while dialling are queued
 *     by node:http2 until the session connects;
 *   - a dial that fails (socket error, closed before connecting, no connection within
 *     CONNECT_TIMEOUT_MS) fails its calls with UNAVAILABLE and starts a backoff (the kubelet's
 *     100 ms × 1.6^k ± 20%, at most 3 s); calls made during the backoff fail at once
 *     with UNAVAILABLE; the first call after it dials again;
 *   - a connected session that closes fails its open calls with UNAVAILABLE; the next call
 *     dials at once;
 *   - GOAWAY or stream ids used up: new calls go to a new session; a call the peer refused
 *     unprocessed (REFUSED_STREAM) is sent once more (grpc-js's transparent retry).
 * What nghttp2 bounds for us (issue 27, item 3): outstanding PING/SETTINGS acknowledgements
 * (`maxOutstandingPings`, `maxOutstandingSettings`), the session's buffered memory
 * (`maxSessionMemory`), header list size, and the peer's MAX_CONCURRENT_STREAMS (calls beyond it
 * wait in nghttp2's queue).
 *
 * Per call, settled exactly once (`#finish`): the deadline (a local timer on the injected clock,
 * which resets the stream with CANCEL and fails DEADLINE_EXCEEDED), the abort signal
 * (CANCEL, CANCELLED), a reply over the message limit (CANCEL, RESOURCE_EXHAUSTED), and the
 * stream's close, classified by what arrived (trailers, RST_STREAM code, HTTP status).
 */
import http2 from 'node:http2';
import net from 'node:net';
import { jitteredMs, nextBackoffMs } from '../backoff/exponential-backoff.js';
import type { Clock, Random, TimerHandle } from '../clock/clock.js';
import { criErrorFromGrpc } from './cri-errors.js';
import type { CriError } from './cri-errors.js';
import type { UnaryMethod } from './cri-methods.js';
import { CRI_FLOW_CONTROL_WINDOW } from './cri-proto.js';
import { codeOfHttpStatus, decodeGrpcMessage, GrpcCode, grpcCodeOfRst, grpcTimeoutValue } from './grpc-wire.js';
import type { CallOptions } from './runtime-service.js';
import type { UnaryReport, UnaryTransport } from './unary-transport.js';

export interface NodeHttp2UnaryTransportOptions {
  /** Unix socket path. */
  path: string;
  backoff: { readonly initialMs: number; readonly maxMs: number };
  clock: Clock;
  random: Random;
  report: UnaryReport;
  /** The largest reply message accepted (longer: RESOURCE_EXHAUSTED). */
  maxMessageBytes: number;
}

/** How long a dial may take to connect (grpc-js: 20 s minimum connect timeout). */
export const NODE_HTTP2_CONNECT_TIMEOUT_MS = 20_000;
const BACKOFF_MULTIPLIER = 1.6;
const BACKOFF_JITTER = 0.2;
const GRPC_PREFIX_BYTES = 5;
const {
  HTTP2_HEADER_AUTHORITY, HTTP2_HEADER_METHOD, HTTP2_HEADER_PATH, HTTP2_HEADER_STATUS, HTTP2_HEADER_CONTENT_TYPE, HTTP2_HEADER_TE,
  NGHTTP2_CANCEL, NGHTTP2_NO_ERROR, NGHTTP2_REFUSED_STREAM,
} = http2.constants;

/**
 * Session settings: the 16 MiB window per stream (and, set on connect, per session) so the
 * largest accepted reply needs no WINDOW_UPDATE round trip (cri-proto.ts); no server push.
 * Bounds on what a hostile peer can make this side hold are nghttp2's (module comment).
 */
const SESSION_OPTIONS: http2.ClientSessionOptions = Object.freeze({
  settings: Object.freeze({ enablePush: false, initialWindowSize: CRI_FLOW_CONTROL_WINDOW }),
  maxOutstandingPings: 10,
  maxOutstandingSettings: 10,
  // MiB: the 16 MiB receive window plus headroom; beyond it nghttp2 refuses new streams.
  maxSessionMemory: 64,
  maxHeaderListPairs: 128,
});

/** One dialled session and what the transport knows about it. */
interface Dial {
  readonly session: http2.ClientHttp2Session;
  /** The peer's SETTINGS arrived: a working connection (a close after this does not back off). */
  connected: boolean;
  /** Set once the session must take no new calls (GOAWAY, out of stream ids, closed). */
  retired: boolean;
  /** Why it closed, for the calls it fails. */
  reason: string;
  connectTimer: TimerHandle | null;
  /** Calls on the session; it is ref'd (keeps the process alive) while this is above 0. */
  active: number;
}

interface ReadyWaiter {
  resolve(): void;
  reject(err: Error): void;
  timer: TimerHandle;
}

/**
 * One call's state. Its reply is gathered from the 5-octet prefix and the message the prefix
 * announces; a second message, a compressed one or one over the limit end the call.
 */
class NodeHttp2Call {
  readonly method: UnaryMethod;
  readonly body: Buffer;
  readonly start: number;
  readonly deadlineAt: number;
  readonly signal: AbortSignal | undefined;
  resolve: (res: unknown) => void = noop;
  reject: (err: CriError) => void = noop;
  stream: http2.ClientHttp2Stream | null = null;
  dial: Dial | null = null;
  timer: TimerHandle | null = null;
  onAbort: (() => void) | null = null;
  retried = false;
  done = false;
  // Response state.
  httpStatus = '';
  contentType = '';
  /** grpc-status as received, '' until trailers (or a trailers-only response) arrive. */
  grpcStatus = '';
  grpcMessage = '';
  /** An error this side found in the reply (set once; the stream is reset with CANCEL). */
  localCode = -1;
  localDetails = '';
  prefix: Buffer | null = null;
  prefixFilled = 0;
  msgLen = -1;
  msg: Buffer | null = null;
  msgFilled = 0;
  messages = 0;

  constructor(method: UnaryMethod, body: Buffer, start: number, deadlineAt: number, signal: AbortSignal | undefined) {
    this.method = method;
    this.body = body;
    this.start = start;
    this.deadlineAt = deadlineAt;
    this.signal = signal;
  }
}

function noop(): void {}

export class NodeHttp2UnaryTransport implements UnaryTransport {
  readonly #opts: NodeHttp2UnaryTransportOptions;
  #current: Dial | null = null;
  /** Every session not yet closed (the current one and those draining after GOAWAY). */
  readonly #live = new Set<Dial>();
  /** Monotonic ms before which no dial starts (backoff after a failed dial). */
  #retryAt = 0;
  #backoffMs: number;
  #lastError = '';
  #waiters: ReadyWaiter[] = [];
  #kickTimer: TimerHandle | null = null;
  #closed = false;
  /** Dials made (tests count reconnect attempts). */
  dials = 0;

  constructor(opts: NodeHttp2UnaryTransportOptions) {
    this.#opts = opts;
    this.#backoffMs = opts.backoff.initialMs;
  }

  unary<Res>(m: UnaryMethod, body: Buffer, opts: CallOptions | undefined, timeoutMs: number, start: number): Promise<Res> {
    const clock = this.#opts.clock;
    const call = new NodeHttp2Call(m, body, start, clock.monotonic() + timeoutMs, opts?.signal);
    const promise = new Promise<Res>((resolve, reject) => {
      call.resolve = resolve as (res: unknown) => void;
      call.reject = reject;
    });
    // Unref'd like grpc-js's deadline timers: the connection keeps the process alive while calls are open.
    call.timer = clock.setTimer(timeoutMs, () => this.#cancel(call, GrpcCode.DEADLINE_EXCEEDED, 'Deadline exceeded'), { unref: true });
    if (call.signal !== undefined) {
      call.onAbort = () => this.#cancel(call, GrpcCode.CANCELLED, 'Cancelled on client');
      call.signal.addEventListener('abort', call.onAbort, { once: true });
    }
    this.#start(call);
    return promise;
  }

  waitForReady(timeoutMs: number): Promise<void> {
    if (this.#current?.connected === true) return Promise.resolve();
    if (this.#closed) return Promise.reject(criErrorFromGrpc('connect', { code: GrpcCode.UNAVAILABLE, details: 'Channel has been shut down' }));
    return new Promise<void>((resolve, reject) => {
      const waiter: ReadyWaiter = {
        resolve,
        reject,
        timer: this.#opts.clock.setTimer(timeoutMs, () => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          reject(criErrorFromGrpc('connect', { code: GrpcCode.UNAVAILABLE, details: `Failed to connect before the deadline${this.#lastError === '' ? '' : `: ${this.#lastError}`}` }));
        }),
      };
      this.#waiters.push(waiter);
      this.#kick();
    });
  }

  /** Stops now: calls in flight fail UNAVAILABLE, waiters reject, sessions are destroyed. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#kickTimer?.cancel();
    this.#kickTimer = null;
    this.#current = null;
    for (const d of [...this.#live]) {
      d.reason = 'Channel has been shut down';
      d.retired = true;
      d.session.destroy();
    }
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) {
      w.timer.cancel();
      w.reject(criErrorFromGrpc('connect', { code: GrpcCode.UNAVAILABLE, details: 'Channel has been shut down' }));
    }
  }

  // ---- sessions ----------------------------------------------------------------------------

  #start(call: NodeHttp2Call): void {
    if (call.done) return;
    if (this.#closed) {
      this.#finish(call, GrpcCode.UNAVAILABLE, 'Channel has been shut down');
      return;
    }
    let dial = this.#current;
    if (dial === null) {
      if (this.#opts.clock.monotonic() < this.#retryAt) {
        this.#finish(call, GrpcCode.UNAVAILABLE, `No connection established to the runtime: ${this.#lastError}`);
        return;
      }
      dial = this.#dial();
    }
    const remaining = call.deadlineAt - this.#opts.clock.monotonic();
    let stream: http2.ClientHttp2Stream;
    try {
      stream = dial.session.request({
        [HTTP2_HEADER_METHOD]: 'POST',
        // A unix socket has no authority: 'localhost', as the 'h2' transport and grpc-js send (node:http2 would add ':80').
        [HTTP2_HEADER_AUTHORITY]: 'localhost',
        [HTTP2_HEADER_PATH]: call.method.path,
        [HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
        [HTTP2_HEADER_TE]: 'trailers',
        'grpc-timeout': grpcTimeoutValue(remaining),
      });
    } catch (err) {
      // Out of stream ids (ERR_HTTP2_OUT_OF_STREAMS) or a session closing under us: a new session, once.
      this.#retire(dial);
      if (!call.retried) {
        call.retried = true;
        this.#start(call);
      } else this.#finish(call, GrpcCode.UNAVAILABLE, `Connection to the runtime lost: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    call.stream = stream;
    call.dial = dial;
    if (dial.active++ === 0) dial.session.ref();
    stream.on('response', (headers, flags) => this.#onHeaders(call, headers, (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0));
    stream.on('trailers', (headers) => this.#onTrailers(call, headers));
    stream.on('data', (chunk: Buffer) => this.#onData(call, chunk));
    // Errors are classified at 'close' (the RST code, the session's fate); the listener keeps them from throwing.
    stream.on('error', noop);
    stream.on('close', () => this.#onClose(call));
    const framed = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + call.body.length);
    framed[0] = 0;
    framed.writeUInt32BE(call.body.length, 1);
    call.body.copy(framed, GRPC_PREFIX_BYTES);
    stream.end(framed);
  }

  #dial(): Dial {
    this.dials++;
    const path = this.#opts.path;
    const session = http2.connect('http://localhost', { ...SESSION_OPTIONS, createConnection: () => net.connect(path) });
    const dial: Dial = { session, connected: false, retired: false, reason: '', connectTimer: null, active: 0 };
    this.#current = dial;
    this.#live.add(dial);
    dial.connectTimer = this.#opts.clock.setTimer(NODE_HTTP2_CONNECT_TIMEOUT_MS, () => {
      dial.connectTimer = null;
      if (!dial.connected) {
        dial.reason = `no connection to the runtime within ${NODE_HTTP2_CONNECT_TIMEOUT_MS} ms`;
        session.destroy();
      }
    }, { unref: true });
    // Ready is the peer's first SETTINGS, not the socket's connect (a socket that is accepted and
    // dropped is a failed dial, as on the 'h2' transport and grpc-js).
    session.once('remoteSettings', () => this.#onConnect(dial));
    session.on('error', (err: Error) => {
      if (dial.reason === '') dial.reason = err.message;
    });
    session.on('goaway', () => this.#retire(dial));
    session.once('close', () => this.#onSessionClose(dial));
    // Like grpc-js's subchannel: an idle connection does not keep the process alive.
    session.unref();
    return dial;
  }

  #onConnect(dial: Dial): void {
    dial.connected = true;
    dial.connectTimer?.cancel();
    dial.connectTimer = null;
    // The session (connection-level) window: the per-stream one is in SESSION_OPTIONS.
    try {
      dial.session.setLocalWindowSize(CRI_FLOW_CONTROL_WINDOW);
    } catch {
      // The session closed in between: its close handler fails the calls.
    }
    if (dial !== this.#current) return;
    this.#backoffMs = this.#opts.backoff.initialMs;
    this.#retryAt = 0;
    this.#lastError = '';
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) {
      w.timer.cancel();
      w.resolve();
    }
  }

  /** No new calls on `dial` (GOAWAY, out of stream ids): the next call dials. */
  #retire(dial: Dial): void {
    dial.retired = true;
    if (this.#current === dial) this.#current = null;
  }

  #onSessionClose(dial: Dial): void {
    this.#live.delete(dial);
    dial.connectTimer?.cancel();
    dial.connectTimer = null;
    dial.retired = true;
    if (this.#current === dial) this.#current = null;
    if (dial.reason === '') dial.reason = 'connection closed';
    if (!dial.connected && !this.#closed) {
      // A failed dial: back off (its calls fail UNAVAILABLE in their own close handlers).
      this.#lastError = dial.reason;
      this.#retryAt = this.#opts.clock.monotonic() + jitteredMs(this.#backoffMs, BACKOFF_JITTER, this.#opts.random);
      this.#backoffMs = nextBackoffMs(this.#backoffMs, { factor: BACKOFF_MULTIPLIER, maxMs: this.#opts.backoff.maxMs });
    } else this.#lastError = dial.reason;
    this.#kick();
  }

  /** Keeps dialling (through the backoff) while someone waits for ready. */
  #kick(): void {
    if (this.#closed || this.#waiters.length === 0 || this.#current !== null || this.#kickTimer !== null) return;
    const wait = this.#retryAt - this.#opts.clock.monotonic();
    if (wait > 0) {
      this.#kickTimer = this.#opts.clock.setTimer(wait, () => {
        this.#kickTimer = null;
        this.#kick();
      });
      return;
    }
    this.#dial();
  }

  // ---- one call ------------------------------------------------------------------------------

  #onHeaders(call: NodeHttp2Call, headers: http2.IncomingHttpHeaders, endStream: boolean): void {
    call.httpStatus = String(headers[HTTP2_HEADER_STATUS] ?? '');
    call.contentType = String(headers[HTTP2_HEADER_CONTENT_TYPE] ?? '');
    // A trailers-only response carries the status in its only header block.
    if (endStream) this.#onTrailers(call, headers);
  }

  #onTrailers(call: NodeHttp2Call, headers: http2.IncomingHttpHeaders): void {
    const status = headers['grpc-status'];
    call.grpcStatus = typeof status === 'string' ? status : '';
    const message = headers['grpc-message'];
    call.grpcMessage = typeof message === 'string' ? message : '';
  }

  #onData(call: NodeHttp2Call, data: Buffer): void {
    if (call.done || call.localCode !== -1) return;
    let off = 0;
    const end = data.length;
    while (off < end) {
      if (call.msgLen < 0) {
        call.prefix ??= Buffer.allocUnsafe(GRPC_PREFIX_BYTES);
        while (off < end && call.prefixFilled < GRPC_PREFIX_BYTES) call.prefix[call.prefixFilled++] = data[off++] ?? 0;
        if (call.prefixFilled < GRPC_PREFIX_BYTES) return;
        call.prefixFilled = 0;
        if (!this.#startMessage(call, call.prefix)) return;
        if (end - off >= call.msgLen) {
          // The whole message in this chunk: a view of it (node:http2 gives each chunk its own memory).
          call.msg = data.subarray(off, off + call.msgLen);
          off += call.msgLen;
          this.#finishMessage(call);
          continue;
        }
        call.msg = Buffer.allocUnsafe(call.msgLen);
        call.msgFilled = 0;
      }
      const msg = call.msg as Buffer;
      const n = Math.min(end - off, call.msgLen - call.msgFilled);
      data.copy(msg, call.msgFilled, off, off + n);
      call.msgFilled += n;
      off += n;
      if (call.msgFilled === call.msgLen) this.#finishMessage(call);
    }
  }

  /** Reads a message prefix; false (and the call failed) when the message cannot be taken. */
  #startMessage(call: NodeHttp2Call, prefix: Buffer): boolean {
    const flag = prefix[0] ?? 0;
    const len = prefix.readUInt32BE(1);
    if (call.messages >= 1) this.#fail(call, GrpcCode.UNIMPLEMENTED, 'Too many responses received');
    else if (flag !== 0) this.#fail(call, GrpcCode.INTERNAL, `Compressed message (flag ${flag}) received; no compression was negotiated`);
    else if (len > this.#opts.maxMessageBytes) this.#fail(call, GrpcCode.RESOURCE_EXHAUSTED, `Received message larger than max (${len} vs. ${this.#opts.maxMessageBytes})`);
    else {
      call.msgLen = len;
      return true;
    }
    return false;
  }

  #finishMessage(call: NodeHttp2Call): void {
    call.messages++;
    call.msgLen = -1;
    call.msgFilled = 0;
  }

  /** A reply this side refuses: the call ends now with `code`, the stream is reset. */
  #fail(call: NodeHttp2Call, code: number, details: string): void {
    call.localCode = code;
    call.localDetails = details;
    this.#cancel(call, code, details);
  }

  /** A local end (deadline, abort, refused reply): settles the call, resets its stream with CANCEL. */
  #cancel(call: NodeHttp2Call, code: number, details: string): void {
    if (call.done) return;
    const stream = call.stream;
    this.#finish(call, code, details);
    if (stream !== null && !stream.closed && !stream.destroyed) stream.close(NGHTTP2_CANCEL);
  }

  /** The stream closed: the call's outcome from what arrived. */
  #onClose(call: NodeHttp2Call): void {
    if (call.done) return;
    const stream = call.stream as http2.ClientHttp2Stream;
    const dial = call.dial as Dial;
    if (call.grpcStatus !== '') {
      const code = Number(call.grpcStatus);
      const grpcCode = Number.isInteger(code) && code >= 0 && code <= 16 ? code : GrpcCode.UNKNOWN;
      if (grpcCode !== GrpcCode.OK) this.#finish(call, grpcCode, decodeGrpcMessage(call.grpcMessage));
      else if (call.msgLen >= 0 || call.prefixFilled > 0) this.#finish(call, GrpcCode.INTERNAL, 'Stream ended inside a message');
      else if (call.messages === 0) this.#finish(call, GrpcCode.UNIMPLEMENTED, 'No message received');
      else this.#finish(call, GrpcCode.OK, '');
      return;
    }
    const rst = stream.rstCode ?? NGHTTP2_NO_ERROR;
    if (rst === NGHTTP2_REFUSED_STREAM && !call.retried) {
      // Refused unprocessed (RST_STREAM or above a GOAWAY's last stream id): once more, on a fresh session if this one is going.
      call.retried = true;
      this.#detach(call);
      this.#start(call);
      return;
    }
    if (call.httpStatus !== '' && call.httpStatus !== '200') {
      this.#finish(call, codeOfHttpStatus(call.httpStatus), `Received HTTP status code ${call.httpStatus}`);
      return;
    }
    if (call.httpStatus === '200' && !call.contentType.startsWith('application/grpc')) {
      this.#finish(call, GrpcCode.UNKNOWN, `Invalid content-type ${JSON.stringify(call.contentType)}`);
      return;
    }
    if (dial.session.destroyed && rst !== NGHTTP2_REFUSED_STREAM) {
      this.#finish(call, GrpcCode.UNAVAILABLE, dial.connected ? `Connection to the runtime lost: ${dial.reason || 'connection closed'}` : `No connection established to the runtime: ${dial.reason || 'connection closed'}`);
      return;
    }
    if (rst !== NGHTTP2_NO_ERROR) {
      this.#finish(call, grpcCodeOfRst(rst), `Received RST_STREAM with code ${rst}`);
      return;
    }
    this.#finish(call, GrpcCode.UNKNOWN, 'Stream ended without trailers');
  }

  /** The call leaves its stream and session; an idle session stops keeping the process alive. */
  #detach(call: NodeHttp2Call): void {
    const dial = call.dial;
    call.stream = null;
    call.dial = null;
    if (dial !== null && --dial.active === 0 && !dial.session.destroyed) dial.session.unref();
  }

  /** Settles the call once: disarms its timer, reports, decodes the reply. */
  #finish(call: NodeHttp2Call, code: number, details: string): void {
    if (call.done) return;
    call.done = true;
    call.timer?.cancel();
    call.timer = null;
    const m = call.method;
    let err: CriError | undefined;
    let res: unknown;
    if (code !== GrpcCode.OK) err = criErrorFromGrpc(m.name, { code, details: details === '' ? 'No message received' : details });
    else {
      try {
        res = m.deserialize(call.msg as Buffer);
      } catch (e) {
        err = criErrorFromGrpc(m.name, { code: GrpcCode.INTERNAL, details: `Response message parsing error: ${e instanceof Error ? e.message : String(e)}` });
      }
    }
    call.msg = null;
    this.#detach(call);
    if (call.onAbort !== null) {
      call.signal?.removeEventListener('abort', call.onAbort);
      call.onAbort = null;
    }
    this.#opts.report(m.operation, call.start, err);
    if (err !== undefined) call.reject(err);
    else call.resolve(res);
  }
}
