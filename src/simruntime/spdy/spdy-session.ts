/**
 * The server side of one SPDY/3.1 session over an upgraded socket, as Kubernetes' streaming
 * clients (spdystream via httpstream/spdy) use it: the client opens every stream
 * (SYN_STREAM, odd ids); the server answers each with SYN_REPLY (`SpdyStream.reply()`),
 * exchanges DATA, half-closes with FIN and ends the session with GOAWAY. PINGs are echoed;
 * SETTINGS and WINDOW_UPDATE are read and ignored (spdystream does no flow control, so
 * neither do we — incoming bytes are bounded per stream instead).
 *
 * Each stream is a Duplex: what the client sends is readable (FIN → end), writes become DATA
 * frames (end() → FIN). Backpressure towards the client is the socket's: a write resolves its
 * callback once the socket has taken the frame. A stream whose reader falls more than
 * `maxStreamBufferBytes` behind is reset (FLOW_CONTROL_ERROR), so a peer that never reads
 * cannot grow memory without bound.
 *
 * Bounds (all required options): frame size, header block size and pairs, concurrent streams
 * (over it: RST_STREAM REFUSED_STREAM). A protocol error ends the session with GOAWAY
 * PROTOCOL_ERROR; the socket's end or error destroys every stream.
 *
 * Lifecycle: `close()` sends GOAWAY(OK) and ends the socket after what is queued; `destroy()`
 * drops the socket now. Both idempotent.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import {
  encodeData,
  encodeGoaway,
  encodePing,
  encodeRstStream,
  encodeSynReply,
  FLAG_FIN,
  FLAG_UNIDIRECTIONAL,
  GoawayStatus,
  RstStatus,
  SpdyFrameReader,
  SpdyProtocolError,
  type SpdyFrame,
} from './spdy-frames.js';
import { HeaderBlockDecoder, HeaderBlockEncoder, type SpdyHeaders } from './spdy-headers.js';

export interface SpdySessionLimits {
  /** Largest frame accepted (bytes of payload). */
  maxFrameBytes: number;
  /** Largest inflated header block. */
  maxHeaderBlockBytes: number;
  maxHeaderPairs: number;
  /** Streams open at once; more are refused. */
  maxStreams: number;
  /** Unread incoming bytes per stream before it is reset. */
  maxStreamBufferBytes: number;
}

export const SPDY_SESSION_DEFAULTS: Readonly<SpdySessionLimits> = Object.freeze({
  maxFrameBytes: 1024 * 1024,
  maxHeaderBlockBytes: 64 * 1024,
  maxHeaderPairs: 64,
  maxStreams: 64,
  maxStreamBufferBytes: 4 * 1024 * 1024,
});

/** DATA frames we send carry at most this much (spdystream writes in 32 KiB pieces too). */
const MAX_DATA_CHUNK = 32 * 1024;

export interface SpdySessionOptions {
  socket: Socket;
  limits?: Partial<SpdySessionLimits>;
  /** Each new stream the client opens; the handler replies (or resets) it. */
  onStream: (stream: SpdyStream) => void;
  /** The session ended (socket closed); `err` when by a protocol or socket error. */
  onClose?: (err: Error | undefined) => void;
}

export class SpdyStream extends Duplex {
  readonly id: number;
  readonly headers: SpdyHeaders;
  readonly #session: SpdySession;
  #replied = false;
  #sentFin: boolean;
  #unread = 0;

  constructor(session: SpdySession, id: number, headers: SpdyHeaders, unidirectional: boolean) {
    super({ allowHalfOpen: true });
    this.#session = session;
    this.id = id;
    this.headers = headers;
    this.#sentFin = unidirectional;
  }

  /** First value of header `name` (lower-case). */
  header(name: string): string | undefined {
    return this.headers.get(name)?.[0];
  }

  /** Sends SYN_REPLY (once). Writes before it are held by the session until it is sent. */
  reply(headers: ReadonlyArray<readonly [string, string]> = []): void {
    if (this.#replied || this.destroyed) return;
    this.#replied = true;
    this.#session.sendReply(this.id, headers);
  }

  /** Resets the stream (RST_STREAM CANCEL unless told), dropping what is unsent. */
  reset(status: number = RstStatus.CANCEL): void {
    if (this.destroyed) return;
    this.#session.sendRst(this.id, status);
    this.#sentFin = true;
    this.destroy();
  }

  /** Called by the session with DATA from the client. */
  deliver(data: Buffer, fin: boolean): void {
    if (this.destroyed) return;
    if (data.length > 0) {
      this.#unread += data.length;
      if (this.#unread > this.#session.limits.maxStreamBufferBytes) {
        this.reset(RstStatus.FLOW_CONTROL_ERROR);
        return;
      }
      this.push(data);
    }
    if (fin) this.push(null);
  }

  override _read(): void {
    // Data is pushed as it arrives; reading only lowers the unread count (in `read` below).
  }

  override read(size?: number): Buffer | null {
    const chunk = super.read(size) as Buffer | null;
    if (chunk !== null) this.#unread = Math.max(0, this.#unread - chunk.length);
    return chunk;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.#sentFin) return cb(new Error(`spdy stream ${this.id}: write after the stream was closed`));
    this.reply();
    this.#session.sendData(this.id, chunk, false, cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (this.#sentFin) return cb();
    this.reply();
    this.#sentFin = true;
    this.#session.sendData(this.id, Buffer.alloc(0), true, cb);
  }

  override _destroy(err: Error | null, cb: (err: Error | null) => void): void {
    this.#session.forget(this.id);
    cb(err);
  }
}

export class SpdySession {
  readonly limits: Readonly<SpdySessionLimits>;
  readonly #socket: Socket;
  readonly #reader: SpdyFrameReader;
  readonly #decoder: HeaderBlockDecoder;
  readonly #encoder = new HeaderBlockEncoder();
  readonly #streams = new Map<number, SpdyStream>();
  readonly #onStream: (s: SpdyStream) => void;
  readonly #onClose: ((err: Error | undefined) => void) | undefined;
  #lastStreamId = 0;
  #state: 'open' | 'closing' | 'closed' = 'open';
  #error: Error | undefined;

  constructor(o: SpdySessionOptions) {
    this.limits = Object.freeze({ ...SPDY_SESSION_DEFAULTS, ...o.limits });
    this.#socket = o.socket;
    this.#onStream = o.onStream;
    this.#onClose = o.onClose;
    this.#reader = new SpdyFrameReader({ maxFrameBytes: this.limits.maxFrameBytes });
    this.#decoder = new HeaderBlockDecoder({ maxBlockBytes: this.limits.maxHeaderBlockBytes, maxPairs: this.limits.maxHeaderPairs });
    o.socket.on('data', (chunk: Buffer) => this.#onBytes(chunk));
    o.socket.on('end', () => this.close());
    o.socket.on('error', (err) => {
      this.#error ??= err;
      this.destroy();
    });
    o.socket.on('close', () => this.#closed());
  }

  /** Streams open now. */
  get streamCount(): number {
    return this.#streams.size;
  }

  /** Feeds bytes that arrived before the session took the socket (the upgrade's `head`). */
  feed(head: Buffer): void {
    if (head.length > 0) this.#onBytes(head);
  }

  #onBytes(chunk: Buffer): void {
    if (this.#state === 'closed') return;
    this.#reader.push(chunk);
    try {
      for (let f = this.#reader.next(); f !== undefined; f = this.#isClosed() ? undefined : this.#reader.next()) this.#onFrame(f);
    } catch (err) {
      if (!(err instanceof SpdyProtocolError)) throw err;
      this.#error ??= err;
      this.#write(encodeGoaway(this.#lastStreamId, GoawayStatus.PROTOCOL_ERROR));
      this.close();
    }
  }

  #isClosed(): boolean {
    return this.#state === 'closed';
  }

  #onFrame(f: SpdyFrame): void {
    switch (f.kind) {
      case 'syn_stream': {
        // Decode first, always: the decompressor's state must see every block in order.
        const headers = this.#decoder.decode(f.headerBlock);
        if (f.streamId === 0 || f.streamId % 2 === 0 || f.streamId <= this.#lastStreamId) {
          throw new SpdyProtocolError(`SYN_STREAM with stream id ${f.streamId} (after ${this.#lastStreamId})`);
        }
        this.#lastStreamId = f.streamId;
        if (this.#state !== 'open' || this.#streams.size >= this.limits.maxStreams) {
          this.sendRst(f.streamId, RstStatus.REFUSED_STREAM);
          return;
        }
        const s = new SpdyStream(this, f.streamId, headers, (f.flags & FLAG_UNIDIRECTIONAL) !== 0);
        this.#streams.set(f.streamId, s);
        if ((f.flags & FLAG_FIN) !== 0) s.deliver(Buffer.alloc(0), true);
        this.#onStream(s);
        return;
      }
      case 'syn_reply':
      case 'headers':
        this.#decoder.decode(f.headerBlock);
        return;
      case 'data': {
        const s = this.#streams.get(f.streamId);
        if (s === undefined) {
          // Data for a stream we never had (or already reset): tell the client once per frame.
          if (f.streamId > this.#lastStreamId) throw new SpdyProtocolError(`DATA for unopened stream ${f.streamId}`);
          return;
        }
        s.deliver(f.data, (f.flags & FLAG_FIN) !== 0);
        return;
      }
      case 'rst_stream':
        this.#streams.get(f.streamId)?.destroy();
        return;
      case 'ping':
        // Client pings have odd ids; echo them. (We send none, so even ids are stray.)
        if (f.id % 2 === 1) this.#write(encodePing(f.id));
        return;
      case 'goaway':
        this.close();
        return;
      case 'settings':
      case 'window_update':
      case 'unknown':
        return;
      default: {
        const never: never = f;
        throw new Error(`unreachable ${String(never)}`);
      }
    }
  }

  /** @internal SYN_REPLY for stream `id`. */
  sendReply(id: number, headers: ReadonlyArray<readonly [string, string]>): void {
    this.#write(encodeSynReply(id, this.#encoder.encode(headers)));
  }

  /** @internal RST_STREAM for stream `id`. */
  sendRst(id: number, status: number): void {
    this.#write(encodeRstStream(id, status));
  }

  /** @internal DATA (split into frames); `cb` once the socket took the last frame. */
  sendData(id: number, data: Buffer, fin: boolean, cb: (err?: Error | null) => void): void {
    if (this.#state === 'closed' || this.#socket.destroyed) return cb(new Error('spdy session is closed'));
    if (data.length === 0) {
      this.#socket.write(encodeData(id, data, fin), () => cb());
      return;
    }
    let ok = true;
    for (let o = 0; o < data.length; o += MAX_DATA_CHUNK) {
      const end = Math.min(data.length, o + MAX_DATA_CHUNK);
      ok = this.#socket.write(encodeData(id, data.subarray(o, end), fin && end === data.length));
    }
    if (ok) cb();
    else this.#socket.once('drain', () => cb());
  }

  /** @internal A stream is gone. */
  forget(id: number): void {
    this.#streams.delete(id);
  }

  #write(frame: Buffer): void {
    if (this.#socket.destroyed || this.#socket.writableEnded) return;
    this.#socket.write(frame);
  }

  /** GOAWAY(OK), then end the socket after what is queued. Idempotent. */
  close(): void {
    if (this.#state !== 'open') return;
    this.#state = 'closing';
    this.#write(encodeGoaway(this.#lastStreamId, GoawayStatus.OK));
    if (!this.#socket.destroyed) this.#socket.end();
  }

  /** Drops the socket now. Idempotent. */
  destroy(): void {
    if (this.#state === 'closed') return;
    this.#socket.destroy();
    this.#closed();
  }

  #closed(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    for (const s of [...this.#streams.values()]) s.destroy();
    this.#streams.clear();
    this.#onClose?.(this.#error);
  }
}
