/**
 * One unary gRPC call on the HTTP/2 transport: the request it sends, the response it reads
 * (gRPC over HTTP/2: response headers, exactly one length-prefixed message, trailers — or a
 * trailers-only response) and its completion.
 *
 * Timeline (owned by the connection that carries it, h2-connection.ts):
 *   created → queued (waiting for a ready connection or a stream slot) → open (stream id set,
 *   request written, maybe part of the body waiting for flow-control window) → done.
 * `complete` runs exactly once; every later event (a frame for the stream, a timer, an abort)
 * is ignored because `done` is set.
 */
import type { TimerHandle } from '../../clock/clock.js';
import { codeOfHttpStatus, decodeGrpcMessage, GrpcCode } from '../grpc-wire.js';
import type { ReplyBuffers } from './reply-buffers.js';

/** Who learns the outcome: the CRI client (deserializes the reply, reports the operation). */
export interface H2CallOwner {
  /**
   * Called exactly once per call. `reply` is the message (code OK) or null; it may be a lent
   * buffer (reply-buffers.ts) that the next reply overwrites, so it must be consumed
   * (deserialized) before returning.
   */
  callDone(call: H2UnaryCall, code: number, details: string, reply: Buffer | null): void;
}

/** Per-call connection-side state; the connection that carries the call owns these fields. */
export interface H2CallCarrier {
  /** RST_STREAM(CANCEL) the call's stream (or drop it from a queue) after a local cancel. */
  cancelCall(call: H2UnaryCall): void;
}



const GRPC_PREFIX_BYTES = 5;

export class H2UnaryCall {
  /** The owning client's name of the method (errors and the operation hook use it). */
  readonly method: string;
  /** Header block minus grpc-timeout (h2-request-headers.ts). */
  readonly headerPrefix: Buffer;
  /** The serialized request message (without the gRPC prefix). */
  readonly body: Buffer;
  /** Monotonic ms at which the deadline fires (for grpc-timeout). */
  readonly deadlineAt: number;
  readonly owner: H2CallOwner;
  /** Opaque slot for the owner (its promise settlers, start time, method descriptor). */
  readonly context: unknown;
  readonly maxMessageBytes: number;
  /** Lends the buffer a reply that spans DATA frames is gathered in (methods whose deserializer copies). */
  readonly replyBuffers: ReplyBuffers | undefined;

  // ---- carrier state (h2-connection.ts) -------------------------------------------------
  carrier: H2CallCarrier | null = null;
  streamId = 0;
  /** Stream send window (peer's INITIAL_WINDOW_SIZE, adjusted by WINDOW_UPDATEs and SETTINGS). */
  sendWindow = 0;
  /** The gRPC-framed body not yet sent (flow control), and how much of it was sent. */
  pendingBody: Buffer | null = null;
  pendingOffset = 0;
  /** Octets received on this stream not yet returned to the peer with a WINDOW_UPDATE. */
  recvUnacked = 0;
  /** Set once the call was refused unprocessed (GOAWAY above last-stream-id, REFUSED_STREAM) and re-sent. */
  retried = false;

  // ---- response state -------------------------------------------------------------------
  #headersSeen = false;
  /** gRPC status from trailers (or an HTTP status mapping), -1 until known. */
  #code = -1;
  #details = '';
  /** Length-prefix octets collected so far (the prefix may straddle DATA frames). */
  #prefix: Buffer | null = null;
  #prefixFilled = 0;
  #msgLen = -1;
  #msg: Buffer | null = null;
  /** The buffer borrowed from replyBuffers that #msg is a view of, given back on completion. */
  #lent: Buffer | null = null;
  #msgFilled = 0;
  #messages = 0;
  #done = false;
  /** The deadline timer and the abort signal this call listens to (as its own `handleEvent`), dropped on completion. */
  #timer: TimerHandle | null = null;
  #signal: AbortSignal | null = null;

  constructor(method: string, headerPrefix: Buffer, body: Buffer, deadlineAt: number, owner: H2CallOwner, context: unknown, maxMessageBytes: number, replyBuffers?: ReplyBuffers) {
    this.method = method;
    this.headerPrefix = headerPrefix;
    this.body = body;
    this.deadlineAt = deadlineAt;
    this.owner = owner;
    this.context = context;
    this.maxMessageBytes = maxMessageBytes;
    this.replyBuffers = replyBuffers;
  }

  get done(): boolean {
    return this.#done;
  }

  /**
   * Arms the deadline (`timer`, which must call `cancel(DEADLINE_EXCEEDED, …)`) and the abort
   * signal: the call itself is the listener (`handleEvent`), so no closure per call.
   */
  arm(timer: TimerHandle, signal: AbortSignal | undefined): void {
    this.#timer = timer;
    if (signal !== undefined) {
      this.#signal = signal;
      signal.addEventListener('abort', this, { once: true });
    }
  }

  /** The abort signal fired (EventListener object protocol). */
  handleEvent(): void {
    this.cancel(GrpcCode.CANCELLED, 'Cancelled on client');
  }

  /** A local cancel (deadline, abort): completes the call and has the carrier reset its stream. */
  cancel(code: number, details: string): void {
    if (this.#done) return;
    const carrier = this.carrier;
    this.complete(code, details);
    carrier?.cancelCall(this);
  }

  /**
   * A complete header block for this stream. Returns a gRPC code ≠ -1 when the call must end
   * now with an error (the carrier resets the stream), else -1.
   */
  receiveHeaders(names: readonly string[], values: readonly string[], endStream: boolean): number {
    const trailers = this.#headersSeen;
    this.#headersSeen = true;
    let httpStatus = '';
    let contentType = '';
    let grpcStatus = '';
    let grpcMessage = '';
    for (let i = 0; i < names.length; i++) {
      const n = names[i];
      if (n === ':status') httpStatus = values[i] ?? '';
      else if (n === 'grpc-status') grpcStatus = values[i] ?? '';
      else if (n === 'grpc-message') grpcMessage = values[i] ?? '';
      else if (n === 'content-type') contentType = values[i] ?? '';
    }
    if (!trailers) {
      if (httpStatus !== '200') {
        this.#code = codeOfHttpStatus(httpStatus);
        this.#details = `Received HTTP status code ${httpStatus}`;
        return endStream ? -1 : this.#code;
      }
      if (!contentType.startsWith('application/grpc') && grpcStatus === '') {
        this.#code = GrpcCode.UNKNOWN;
        this.#details = `Invalid content-type ${JSON.stringify(contentType)}`;
        return endStream ? -1 : this.#code;
      }
      if (!endStream) return -1;
    }
    // Trailers (or trailers-only).
    if (!endStream) {
      this.#code = GrpcCode.INTERNAL;
      this.#details = 'Received a second header block without END_STREAM';
      return this.#code;
    }
    if (grpcStatus === '') {
      this.#code = GrpcCode.UNKNOWN;
      this.#details = 'No grpc-status in trailers';
      return -1;
    }
    const code = Number(grpcStatus);
    this.#code = Number.isInteger(code) && code >= 0 && code <= 16 ? code : GrpcCode.UNKNOWN;
    this.#details = decodeGrpcMessage(grpcMessage);
    return -1;
  }

  /**
   * DATA payload (padding removed) for this stream. Returns -1, or a gRPC code when the call
   * must end now (the carrier resets the stream).
   */
  receiveData(data: Buffer): number {
    if (this.#done) return -1;
    let off = 0;
    const end = data.length;
    while (off < end) {
      if (this.#msgLen < 0) {
        // Collecting the 5-octet prefix.
        if (this.#prefixFilled === 0 && end - off >= GRPC_PREFIX_BYTES) {
          const err = this.#startMessage(data, off);
          if (err !== -1) return err;
          off += GRPC_PREFIX_BYTES;
        } else {
          this.#prefix ??= Buffer.allocUnsafe(GRPC_PREFIX_BYTES);
          while (off < end && this.#prefixFilled < GRPC_PREFIX_BYTES) this.#prefix[this.#prefixFilled++] = data[off++] ?? 0;
          if (this.#prefixFilled < GRPC_PREFIX_BYTES) return -1;
          this.#prefixFilled = 0;
          const err = this.#startMessage(this.#prefix, 0);
          if (err !== -1) return err;
        }
        if (this.#msgLen === 0) {
          this.#msg = Buffer.alloc(0);
          this.#finishMessage();
          continue;
        }
        // The whole message inside this frame: copied, as `data` aliases a buffer the
        // connection reuses (h2-frames.ts FrameSink); small messages come from Node's pool.
        if (end - off >= this.#msgLen) {
          this.#msg = Buffer.from(data.subarray(off, off + this.#msgLen));
          off += this.#msgLen;
          this.#finishMessage();
          continue;
        }
        if (this.replyBuffers !== undefined) {
          this.#lent = this.replyBuffers.borrow(this.#msgLen);
          this.#msg = this.#lent.subarray(0, this.#msgLen);
        } else this.#msg = Buffer.allocUnsafe(this.#msgLen);
        this.#msgFilled = 0;
      }
      const msg = this.#msg as Buffer;
      const n = Math.min(end - off, this.#msgLen - this.#msgFilled);
      data.copy(msg, this.#msgFilled, off, off + n);
      this.#msgFilled += n;
      off += n;
      if (this.#msgFilled === this.#msgLen) this.#finishMessage();
    }
    return -1;
  }

  #startMessage(src: Buffer, off: number): number {
    if (this.#messages >= 1) {
      this.#code = GrpcCode.UNIMPLEMENTED;
      this.#details = 'Too many responses received';
      return this.#code;
    }
    const flag = src[off] ?? 0;
    const len = src.readUInt32BE(off + 1);
    if (flag !== 0) {
      this.#code = GrpcCode.INTERNAL;
      this.#details = `Compressed message (flag ${flag}) received; no compression was negotiated`;
      return this.#code;
    }
    if (len > this.maxMessageBytes) {
      this.#code = GrpcCode.RESOURCE_EXHAUSTED;
      this.#details = `Received message larger than max (${len} vs. ${this.maxMessageBytes})`;
      return this.#code;
    }
    this.#msgLen = len;
    return -1;
  }

  #finishMessage(): void {
    this.#messages++;
    this.#msgLen = -1;
    this.#msgFilled = 0;
  }

  /** END_STREAM reached (after receiveHeaders/receiveData): completes the call from what arrived. */
  endOfStream(): void {
    if (this.#code === -1) {
      this.complete(GrpcCode.UNKNOWN, 'Stream ended without trailers');
      return;
    }
    if (this.#code !== GrpcCode.OK) {
      this.complete(this.#code, this.#details);
      return;
    }
    if (this.#msgLen >= 0 || this.#prefixFilled > 0) {
      this.complete(GrpcCode.INTERNAL, 'Stream ended inside a message');
      return;
    }
    if (this.#messages === 0) {
      this.complete(GrpcCode.UNIMPLEMENTED, 'No message received');
      return;
    }
    this.complete(GrpcCode.OK, '');
  }

  /** The error a carrier-detected stream failure ends with (after receive* returned a code). */
  failWithOwnStatus(): void {
    this.complete(this.#code === -1 ? GrpcCode.INTERNAL : this.#code, this.#details);
  }

  /** Ends the call once: disarms its timer and abort listener, hands the outcome to the owner. */
  complete(code: number, details: string): void {
    if (this.#done) return;
    this.#done = true;
    this.carrier = null;
    this.pendingBody = null;
    this.#timer?.cancel();
    this.#timer = null;
    if (this.#signal !== null) {
      this.#signal.removeEventListener('abort', this);
      this.#signal = null;
    }
    const reply = code === GrpcCode.OK ? this.#msg : null;
    const lent = this.#lent;
    this.#msg = null;
    this.#lent = null;
    try {
      this.owner.callDone(this, code, details, reply);
    } finally {
      if (lent !== null) this.replyBuffers?.giveBack(lent);
    }
  }
}
