/**
 * One HTTP/2 client connection (RFC 9113) on a unix socket, carrying unary gRPC calls
 * (h2-unary-call.ts). No node:http2, no grpc-js: the frames are written and read here.
 *
 * State machine:
 *   connecting ──peer SETTINGS──▶ ready ──GOAWAY / stream ids exhausted──▶ draining ──last stream done──▶ closed
 *        │                          │                                          │
 *        └──────────── socket error / close / connection error ───────────────┴──────────▶ closed
 * - connecting: the socket is dialling or the peer's first SETTINGS has not arrived; calls queue.
 * - ready: calls open streams (up to the peer's MAX_CONCURRENT_STREAMS, the rest queue).
 * - draining: no new streams; open streams finish; the owner (h2-channel.ts) was told through
 *   `onDrain` and sends new calls elsewhere; queued calls are handed back to it.
 * - closed: every call still carried has completed with UNAVAILABLE (or been handed back for
 *   its one transparent retry when it was never processed).
 *
 * Flow control: this side advertises `recvWindow` for every stream and the connection and
 * returns consumed octets with WINDOW_UPDATE once half of a window is used; it sends DATA only
 * within the peer's windows and queues the rest of a body until WINDOW_UPDATE.
 *
 * A peer that does not read (invariants that keep this side's memory bounded whatever it does):
 * - Control frames this side writes in reply to the peer's (PING and SETTINGS ACKs,
 *   WINDOW_UPDATE, RST_STREAM) go through #writeControl. While the socket needs draining, reading
 *   stops (the peer gets no more replies to queue than one read held) and each reply written is
 *   counted; past MAX_UNFLUSHED_CONTROL_REPLIES (nghttp2's max outbound ACK, which node:http2's
 *   flood protection rests on) the connection ends with GOAWAY ENHANCE_YOUR_CALM. 'drain'
 *   resets the count and resumes reading.
 * - Writes stalled (the socket needing a drain) for WRITE_STALL_TIMEOUT_MS end the connection.
 * - Ending a connection never waits on a peer that does not read: with unflushed bytes the
 *   socket is destroyed at once, and a closed connection reads nothing more.
 */
import net from 'node:net';
import type { TimerHandle } from '../../clock/clock.js';
import { HpackDecoder } from '../../hpack/hpack-decoder.js';
import type { HeaderList } from '../../hpack/hpack-decoder.js';
import { GrpcCode, grpcCodeOfRst } from '../grpc-wire.js';
import {
  CLIENT_PREFACE, DEFAULT_INITIAL_WINDOW, Flag, FrameReader, FrameType, goawayFrame,
  H2Error, MAX_STREAM_ID, MAX_WINDOW, pingAckFrame, rstStreamFrame, Setting, SETTINGS_ACK, settingsFrame, windowUpdateFrame,
} from './h2-frames.js';
import type { FrameSink } from './h2-frames.js';
import { HeaderBlockAssembler, isFramingError, unpad } from './h2-header-block.js';
import type { FramingError, HeaderBlock } from './h2-header-block.js';
import { H2RequestWriter } from './h2-request-writer.js';
import { parsePeerSettings } from './h2-settings.js';
import type { H2CallCarrier, H2UnaryCall } from './h2-unary-call.js';

export type H2ConnectionState = 'connecting' | 'ready' | 'draining' | 'closed';

/** What the connection tells its owner (h2-channel.ts). */
export interface H2ConnectionEvents {
  /** The peer's SETTINGS arrived: the connection carries calls. */
  onReady(conn: H2Connection): void;
  /** No new streams here any more (GOAWAY, stream ids used up); `requeue` are calls never started on it. */
  onDrain(conn: H2Connection, requeue: H2UnaryCall[]): void;
  /**
   * The connection is closed. `wasReady`: whether it ever became ready (a failed dial feeds the
   * reconnect backoff). Open streams were completed (UNAVAILABLE) before this; `queued` are
   * calls that never reached the peer, for the owner to carry elsewhere or fail.
   */
  onClosed(conn: H2Connection, wasReady: boolean, reason: string, queued: H2UnaryCall[]): void;
  /** A call the peer refused unprocessed (GOAWAY above its last stream id, REFUSED_STREAM): the owner may re-send it once. */
  onRetry(call: H2UnaryCall): void;
}

export interface H2ConnectionOptions {
  /** Unix socket path. */
  path: string;
  events: H2ConnectionEvents;
  /** Window advertised per stream and for the connection (CRI_FLOW_CONTROL_WINDOW). */
  recvWindow: number;
  /** Monotonic ms (the clock's), for grpc-timeout. */
  monotonic: () => number;
  /** Highest stream id to use before draining (tests lower it; default 2^31 - 1). */
  maxStreamId?: number;
  /** Timers (the channel's clock) for the write-stall timeout; absent: no stall timeout. */
  setTimer?: (ms: number, fn: () => void) => TimerHandle;
}

/** Control-frame replies written while the socket needs draining, before ENHANCE_YOUR_CALM. */
export const MAX_UNFLUSHED_CONTROL_REPLIES = 1000;

/** How long writes may stay blocked on a peer that does not read before the connection ends. */
export const WRITE_STALL_TIMEOUT_MS = 20_000;

/** The connection's one read buffer (a socket read fills at most this much). */
const READ_BUFFER_BYTES = 64 * 1024;

/** The decoded header list this side accepts per block (RFC 7541 sizes), also the bound on a block's compressed size. */
const MAX_HEADER_BLOCK_BYTES = 256 * 1024;

export class H2Connection implements FrameSink, H2CallCarrier {
  #state: H2ConnectionState = 'connecting';
  readonly #events: H2ConnectionEvents;
  readonly #socket: net.Socket;
  readonly #reader: FrameReader;
  readonly #hpack = new HpackDecoder({ maxHeaderListBytes: MAX_HEADER_BLOCK_BYTES });
  readonly #recvWindow: number;
  readonly #monotonic: () => number;
  readonly #maxStreamId: number;
  #wasReady = false;
  /** Open streams by id. */
  readonly #streams = new Map<number, H2UnaryCall>();
  /** Calls waiting for `ready` or a stream slot, in order. */
  #queue: H2UnaryCall[] = [];
  /** Writes requests within the peer's frame size and windows. */
  readonly #writer: H2RequestWriter;
  #nextStreamId = 1;
  // Peer settings (RFC 9113 §6.5.2 defaults until its SETTINGS arrive).
  #peerInitialWindow = DEFAULT_INITIAL_WINDOW;
  #peerMaxStreams = Infinity;
  /** Connection receive window left, and received octets not yet returned with WINDOW_UPDATE. */
  #connRecvAvail: number;
  #connRecvUnacked = 0;
  /** Gathers HEADERS + CONTINUATION into header blocks. */
  readonly #blocks = new HeaderBlockAssembler(MAX_HEADER_BLOCK_BYTES);
  #closeReason = '';
  /** Control replies written since the socket last drained (see the module comment). */
  #unflushedReplies = 0;
  /** Reading stopped until 'drain' (replies cannot be written). */
  #readPaused = false;
  readonly #setTimer: H2ConnectionOptions['setTimer'];
  /** Armed while writes are blocked; ends the connection when it fires. */
  #stallTimer: TimerHandle | undefined;

  constructor(opts: H2ConnectionOptions) {
    this.#setTimer = opts.setTimer;
    this.#events = opts.events;
    this.#recvWindow = opts.recvWindow;
    this.#connRecvAvail = opts.recvWindow;
    this.#monotonic = opts.monotonic;
    this.#maxStreamId = Math.min(opts.maxStreamId ?? MAX_STREAM_ID, MAX_STREAM_ID);
    this.#reader = new FrameReader(this);
    // Every read lands in one buffer per connection, reused (nothing keeps a view of it past
    // #onBytes: h2-frames.ts). With a fresh buffer per read, a relist of thousands of pods
    // allocated megabytes of ArrayBuffers per second, and V8 answered that external memory with
    // a full collection of the PLEG thread's heap every second or two.
    const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    const socket = (this.#socket = net.createConnection({ path: opts.path, onread: { buffer: readBuffer, callback: (n: number, buf: Uint8Array) => this.#onRead(n, buf) } }));
    // Referenced only while calls are carried (see start / #afterStreamClosed).
    socket.unref();
    this.#writer = new H2RequestWriter(socket);
    socket.on('connect', () => this.#onConnect());
    socket.on('drain', () => this.#onDrain());
    socket.on('error', (err: Error) => this.#teardown(`socket error: ${err.message}`));
    socket.on('close', () => this.#teardown('socket closed by the runtime'));
  }

  get state(): H2ConnectionState {
    return this.#state;
  }

  /** Calls open or queued on this connection. */
  get load(): number {
    return this.#streams.size + this.#queue.length;
  }

  /** Carries `call`: opens its stream now when ready and a slot is free, else queues it. */
  start(call: H2UnaryCall): void {
    call.carrier = this;
    if (this.#streams.size === 0 && this.#queue.length === 0) this.#socket.ref();
    if (this.#state === 'ready' && this.#streams.size < this.#peerMaxStreams && this.#queue.length === 0) this.#open(call);
    else this.#queue.push(call);
  }

  /** Stops now: every carried call completes UNAVAILABLE. Idempotent. */
  destroy(reason = 'connection closed by the client'): void {
    this.#teardown(reason);
  }

  // ---- H2CallCarrier ---------------------------------------------------------------------

  cancelCall(call: H2UnaryCall): void {
    if (call.streamId !== 0 && this.#streams.get(call.streamId) === call) {
      this.#streams.delete(call.streamId);
      if (this.#state !== 'closed') this.#writeControl(rstStreamFrame(call.streamId, H2Error.CANCEL));
      this.#writer.remove(call);
      this.#afterStreamClosed();
      return;
    }
    const i = this.#queue.indexOf(call);
    if (i >= 0) this.#queue.splice(i, 1);
    if (this.#streams.size === 0 && this.#queue.length === 0) this.#socket.unref();
  }

  // ---- sending ---------------------------------------------------------------------------

  #onConnect(): void {
    if (this.#state !== 'connecting') return;
    const settings = settingsFrame([
      [Setting.ENABLE_PUSH, 0],
      [Setting.INITIAL_WINDOW_SIZE, this.#recvWindow],
      [Setting.MAX_HEADER_LIST_SIZE, MAX_HEADER_BLOCK_BYTES],
    ]);
    const extra = this.#recvWindow - DEFAULT_INITIAL_WINDOW;
    const parts = [CLIENT_PREFACE, settings];
    if (extra > 0) parts.push(windowUpdateFrame(0, extra));
    this.#socket.write(Buffer.concat(parts));
  }

  /** Opens `call`'s stream and writes its request (h2-request-writer.ts). */
  #open(call: H2UnaryCall): void {
    const id = this.#nextStreamId;
    this.#nextStreamId += 2;
    call.streamId = id;
    call.sendWindow = this.#peerInitialWindow;
    this.#streams.set(id, call);
    this.#writer.writeRequest(call, call.deadlineAt - this.#monotonic());
    this.#watchWrites();
    if (this.#nextStreamId > this.#maxStreamId) this.#drain('stream ids exhausted');
  }

  /** A stream slot was freed: start queued calls; a draining connection with no streams closes. */
  #afterStreamClosed(): void {
    // An idle connection does not keep the process alive (grpc-js unrefs its idle sessions too).
    if (this.#streams.size === 0 && this.#queue.length === 0) this.#socket.unref();
    if (this.#state === 'ready') {
      while (this.#queue.length > 0 && this.#streams.size < this.#peerMaxStreams && this.#state === 'ready') {
        const next = this.#queue.shift() as H2UnaryCall;
        if (!next.done) this.#open(next);
      }
    } else if (this.#state === 'draining' && this.#streams.size === 0) {
      this.#closeSocket('drained');
    }
  }

  /** Stops opening streams here; hands queued calls back to the owner. */
  #drain(reason: string): void {
    if (this.#state !== 'ready' && this.#state !== 'connecting') return;
    this.#state = 'draining';
    this.#closeReason = reason;
    const requeue = this.#queue;
    this.#queue = [];
    for (const c of requeue) c.carrier = null;
    this.#events.onDrain(this, requeue);
    if (this.#streams.size === 0) this.#closeSocket(reason);
  }

  #closeSocket(reason: string): void {
    if (this.#state === 'closed') return;
    this.#endSocket();
    this.#teardown(reason);
  }

  /**
   * FIN after what is queued, then destroyed: a peer that never closes its side holds nothing.
   * With bytes still queued (a peer that does not read), destroyed now: nothing to wait for.
   */
  #endSocket(): void {
    if (this.#socket.writableLength > 0) this.#socket.destroy();
    else this.#socket.destroySoon();
  }

  /** Connection error (RFC 9113 §5.4.1): GOAWAY with the code, then close. */
  #connectionError(code: number, message: string): void {
    if (this.#state === 'closed') return;
    this.#reader.fail();
    if (!this.#socket.destroyed) this.#socket.write(goawayFrame(0, code));
    this.#endSocket();
    this.#teardown(`connection error: ${message}`);
  }

  // ---- writing replies (backpressure, flood bound, stall timeout) -------------------------

  /** Writes a control frame this side owes the peer (see the module comment for the bound). */
  #writeControl(frame: Buffer): void {
    if (this.#socket.destroyed) return;
    this.#socket.write(frame);
    if (!this.#socket.writableNeedDrain) return;
    this.#readPaused = true;
    this.#watchWrites();
    if (++this.#unflushedReplies > MAX_UNFLUSHED_CONTROL_REPLIES) {
      this.#connectionError(H2Error.ENHANCE_YOUR_CALM, `ENHANCE_YOUR_CALM: the runtime sent control frames faster than it read the replies (${this.#unflushedReplies} unflushed)`);
    }
  }

  /** Arms the stall timer when writes are blocked (a no-op when they are not, or it is armed). */
  #watchWrites(): void {
    if (!this.#socket.writableNeedDrain || this.#stallTimer !== undefined || this.#setTimer === undefined || this.#state === 'closed') return;
    this.#stallTimer = this.#setTimer(WRITE_STALL_TIMEOUT_MS, () => {
      this.#stallTimer = undefined;
      if (this.#socket.writableNeedDrain) this.#connectionError(H2Error.INTERNAL_ERROR, `the runtime read nothing for ${WRITE_STALL_TIMEOUT_MS} ms while writes were blocked`);
    });
  }

  #onDrain(): void {
    this.#unflushedReplies = 0;
    this.#stallTimer?.cancel();
    this.#stallTimer = undefined;
    if (this.#readPaused && this.#state !== 'closed') {
      this.#readPaused = false;
      this.#socket.resume();
    }
  }

  /** Enters `closed` once: fails every carried call UNAVAILABLE, tells the owner. */
  #teardown(reason: string): void {
    if (this.#state === 'closed') return;
    const wasDraining = this.#state === 'draining';
    this.#state = 'closed';
    this.#reader.fail();
    this.#stallTimer?.cancel();
    this.#stallTimer = undefined;
    // A closed connection never keeps the process alive; one not already ending (or ending
    // with bytes a peer may never read) stops now.
    this.#socket.unref();
    if (!this.#socket.destroyed && (!this.#socket.writableEnded || this.#socket.writableLength > 0)) this.#socket.destroy();
    const why = wasDraining && reason === 'drained' ? this.#closeReason : reason;
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    const queued = this.#queue;
    this.#queue = [];
    this.#writer.clear();
    for (const c of streams) c.complete(GrpcCode.UNAVAILABLE, `Connection to the runtime lost: ${why}`);
    // Queued calls never reached the peer: the owner carries them elsewhere or fails them.
    for (const c of queued) c.carrier = null;
    this.#events.onClosed(this, this.#wasReady, why, queued.filter((c) => !c.done));
  }

  // ---- receiving (FrameSink) -------------------------------------------------------------

  /** A socket read of `n` octets into the connection's read buffer (`onread`); true: keep reading. */
  #onRead(n: number, buf: Uint8Array): boolean {
    if (this.#state === 'closed') return false;
    this.#onBytes(Buffer.from(buf.buffer, buf.byteOffset, n));
    // false pauses the socket (net's onread contract): replies are blocked, or it is closed.
    return !this.#readPaused && (this.#state as H2ConnectionState) !== 'closed';
  }

  /**
   * Socket bytes. Whatever a frame handler throws (a defect, or an operation hook that throws
   * while a call completes) ends this connection, never the thread.
   */
  #onBytes(chunk: Buffer): void {
    try {
      this.#reader.push(chunk);
    } catch (err) {
      this.#connectionError(H2Error.INTERNAL_ERROR, `frame handling failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  onFrameError(code: number, message: string): void {
    this.#connectionError(code, message);
  }

  onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.#state === 'closed') return;
    if (this.#blocks.open && type !== FrameType.CONTINUATION) {
      this.#connectionError(H2Error.PROTOCOL_ERROR, 'frame inside a header block');
      return;
    }
    switch (type) {
      case FrameType.DATA: this.#onData(flags, streamId, payload); return;
      case FrameType.HEADERS: this.#onHeaders(flags, streamId, payload); return;
      case FrameType.CONTINUATION: this.#onBlockFrame(this.#blocks.continuation(flags, streamId, payload)); return;
      case FrameType.RST_STREAM: this.#onRstStream(streamId, payload); return;
      case FrameType.SETTINGS: this.#onSettings(flags, streamId, payload); return;
      case FrameType.PING: this.#onPing(flags, streamId, payload); return;
      case FrameType.GOAWAY: this.#onGoaway(streamId, payload); return;
      case FrameType.WINDOW_UPDATE: this.#onWindowUpdate(streamId, payload); return;
      case FrameType.PUSH_PROMISE:
        this.#connectionError(H2Error.PROTOCOL_ERROR, 'PUSH_PROMISE with push disabled');
        return;
      case FrameType.PRIORITY:
        if (payload.length !== 5) this.#connectionError(H2Error.FRAME_SIZE_ERROR, 'PRIORITY frame size');
        return;
      default:
        return; // §5.5: unknown frame types are ignored.
    }
  }

  #onData(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) {
      this.#connectionError(H2Error.PROTOCOL_ERROR, 'DATA on stream 0');
      return;
    }
    // Flow control counts the whole payload, padding included (§6.9.1).
    const len = payload.length;
    this.#connRecvAvail -= len;
    if (this.#connRecvAvail < 0) {
      this.#connectionError(H2Error.FLOW_CONTROL_ERROR, 'peer exceeded the connection window');
      return;
    }
    this.#connRecvUnacked += len;
    if (this.#connRecvUnacked >= this.#recvWindow / 2) {
      this.#writeControl(windowUpdateFrame(0, this.#connRecvUnacked));
      this.#connRecvAvail += this.#connRecvUnacked;
      this.#connRecvUnacked = 0;
    }
    const data = unpad(flags, payload, 0);
    if (isFramingError(data)) {
      this.#connectionError(data.code, data.message);
      return;
    }
    const call = this.#streams.get(streamId);
    if (call === undefined) return; // A stream this side reset or finished: ignored (§5.1 closed state).
    call.recvUnacked += len;
    const endStream = (flags & Flag.END_STREAM) !== 0;
    if (call.recvUnacked > this.#recvWindow) {
      this.#resetStream(call, H2Error.FLOW_CONTROL_ERROR, GrpcCode.INTERNAL, 'peer exceeded the stream window');
      return;
    }
    if (!endStream && call.recvUnacked >= this.#recvWindow / 2) {
      this.#writeControl(windowUpdateFrame(streamId, call.recvUnacked));
      call.recvUnacked = 0;
    }
    if (call.receiveData(data) !== -1) this.#cancelRejected(call);
    else if (endStream) this.#endStream(call);
  }

  /** The call rejected what its stream carried (it holds its own status): cancel the stream, fail the call. */
  #cancelRejected(call: H2UnaryCall): void {
    this.#streams.delete(call.streamId);
    this.#writeControl(rstStreamFrame(call.streamId, H2Error.CANCEL));
    this.#writer.remove(call);
    call.failWithOwnStatus();
    this.#afterStreamClosed();
  }

  #endStream(call: H2UnaryCall): void {
    this.#streams.delete(call.streamId);
    this.#writer.remove(call);
    call.endOfStream();
    this.#afterStreamClosed();
  }

  /** Ends `call` with a gRPC error and RST_STREAM(h2Code). */
  #resetStream(call: H2UnaryCall, h2Code: number, grpcCode: number, details: string): void {
    this.#streams.delete(call.streamId);
    this.#writeControl(rstStreamFrame(call.streamId, h2Code));
    this.#writer.remove(call);
    call.complete(grpcCode, details);
    this.#afterStreamClosed();
  }

  #onHeaders(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0 || (streamId & 1) === 0) {
      this.#connectionError(H2Error.PROTOCOL_ERROR, `HEADERS on stream ${streamId}`);
      return;
    }
    this.#onBlockFrame(this.#blocks.headers(flags, streamId, payload));
  }

  #onBlockFrame(r: HeaderBlock | null | FramingError): void {
    if (r === null) return;
    if (isFramingError(r)) this.#connectionError(r.code, r.message);
    else this.#headerBlock(r.streamId, r.endStream, r.block);
  }

  /** A complete header block: decoded for every stream (table state), delivered to a live one. */
  #headerBlock(streamId: number, endStream: boolean, block: Buffer): void {
    const list: HeaderList | Error = this.#hpack.decode(block);
    if (list instanceof Error) {
      this.#connectionError(H2Error.COMPRESSION_ERROR, list.message);
      return;
    }
    const call = this.#streams.get(streamId);
    if (call === undefined) {
      if (streamId >= this.#nextStreamId) this.#connectionError(H2Error.PROTOCOL_ERROR, `HEADERS on idle stream ${streamId}`);
      return;
    }
    if (call.receiveHeaders(list.names, list.values, endStream) !== -1) this.#cancelRejected(call);
    else if (endStream) this.#endStream(call);
  }

  #onRstStream(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) {
      this.#connectionError(H2Error.FRAME_SIZE_ERROR, 'RST_STREAM frame size');
      return;
    }
    if (streamId === 0) {
      this.#connectionError(H2Error.PROTOCOL_ERROR, 'RST_STREAM on stream 0');
      return;
    }
    const call = this.#streams.get(streamId);
    if (call === undefined) return;
    this.#streams.delete(streamId);
    this.#writer.remove(call);
    const code = payload.readUInt32BE(0);
    if (code === H2Error.REFUSED_STREAM && !call.retried) {
      // Never processed (§8.7): the owner may send it again.
      call.carrier = null;
      call.streamId = 0;
      call.pendingBody = null;
      this.#events.onRetry(call);
    } else {
      call.complete(grpcCodeOfRst(code), `Received RST_STREAM with code ${code}`);
    }
    this.#afterStreamClosed();
  }

  #onSettings(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) {
      this.#connectionError(H2Error.PROTOCOL_ERROR, 'SETTINGS on a stream');
      return;
    }
    if (flags & Flag.ACK) {
      if (payload.length !== 0) this.#connectionError(H2Error.FRAME_SIZE_ERROR, 'SETTINGS ACK with a payload');
      return;
    }
    const update = parsePeerSettings(payload);
    if (isFramingError(update)) {
      this.#connectionError(update.code, update.message);
      return;
    }
    if (update.initialWindow !== undefined) {
      // §6.9.2: the difference applies to every open stream's window.
      const delta = update.initialWindow - this.#peerInitialWindow;
      this.#peerInitialWindow = update.initialWindow;
      for (const c of this.#streams.values()) c.sendWindow += delta;
    }
    if (update.maxFrame !== undefined) this.#writer.maxFrame = update.maxFrame;
    if (update.maxStreams !== undefined) this.#peerMaxStreams = update.maxStreams;
    this.#writeControl(SETTINGS_ACK);
    if (this.#state === 'connecting') {
      this.#state = 'ready';
      this.#wasReady = true;
      this.#events.onReady(this);
    }
    if (this.#state === 'ready') this.#afterStreamClosed();
    if (this.#writer.hasBlocked) this.#writer.flush();
    this.#watchWrites();
  }

  #onPing(flags: number, streamId: number, payload: Buffer): void {
    if (payload.length !== 8 || streamId !== 0) {
      this.#connectionError(payload.length !== 8 ? H2Error.FRAME_SIZE_ERROR : H2Error.PROTOCOL_ERROR, 'bad PING');
      return;
    }
    if ((flags & Flag.ACK) === 0) this.#writeControl(pingAckFrame(payload));
  }

  #onGoaway(streamId: number, payload: Buffer): void {
    if (streamId !== 0 || payload.length < 8) {
      this.#connectionError(H2Error.PROTOCOL_ERROR, 'bad GOAWAY');
      return;
    }
    const lastStreamId = payload.readUInt32BE(0) & 0x7fffffff;
    const code = payload.readUInt32BE(4);
    // Streams above last-stream-id were never processed (§6.8): each may be retried once,
    // after the owner has stopped sending new calls here (#drain), so the retry goes elsewhere.
    const refused: H2UnaryCall[] = [];
    for (const [id, call] of [...this.#streams]) {
      if (id <= lastStreamId) continue;
      this.#streams.delete(id);
      this.#writer.remove(call);
      refused.push(call);
    }
    const reason = `GOAWAY with code ${code}`;
    if (this.#state === 'ready' || this.#state === 'connecting') this.#drain(reason);
    for (const call of refused) {
      if (call.retried) {
        call.complete(GrpcCode.UNAVAILABLE, `Runtime sent ${reason} before processing the call`);
      } else {
        call.carrier = null;
        call.streamId = 0;
        call.pendingBody = null;
        this.#events.onRetry(call);
      }
    }
    if (this.#state === 'draining' && this.#streams.size === 0) this.#closeSocket(reason);
  }

  #onWindowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) {
      this.#connectionError(H2Error.FRAME_SIZE_ERROR, 'WINDOW_UPDATE frame size');
      return;
    }
    const inc = payload.readUInt32BE(0) & 0x7fffffff;
    if (streamId === 0) {
      if (inc === 0 || this.#writer.connWindow + inc > MAX_WINDOW) {
        this.#connectionError(inc === 0 ? H2Error.PROTOCOL_ERROR : H2Error.FLOW_CONTROL_ERROR, `connection WINDOW_UPDATE ${inc}`);
        return;
      }
      this.#writer.connWindow += inc;
    } else {
      const call = this.#streams.get(streamId);
      if (call === undefined) return;
      if (inc === 0 || call.sendWindow + inc > MAX_WINDOW) {
        this.#resetStream(call, inc === 0 ? H2Error.PROTOCOL_ERROR : H2Error.FLOW_CONTROL_ERROR, GrpcCode.INTERNAL, `stream WINDOW_UPDATE ${inc}`);
        return;
      }
      call.sendWindow += inc;
    }
    if (this.#writer.hasBlocked) this.#writer.flush();
    this.#watchWrites();
  }
}

