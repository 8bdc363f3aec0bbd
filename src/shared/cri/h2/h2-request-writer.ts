/**
 * The send side of an HTTP/2 connection (h2-connection.ts): writes a call's request — HEADERS
 * plus its gRPC-framed body as DATA with END_STREAM — within the peer's MAX_FRAME_SIZE and
 * flow-control windows (RFC 9113 §6.9), and holds bodies that do not fit until WINDOW_UPDATE.
 *
 * Invariants:
 *   - `connWindow` and every open call's `sendWindow` are what the peer allows right now; no
 *     DATA octet is written beyond either;
 *   - a request that fits (the usual CRI request: < 1 KiB) is one buffer and one socket write;
 *   - `blocked` holds exactly the open calls with body octets still to send, in arrival order.
 */
import type net from 'node:net';
import { DEFAULT_INITIAL_WINDOW, DEFAULT_MAX_FRAME_SIZE, Flag, FRAME_HEADER_BYTES, FrameType, writeFrameHeader } from './h2-frames.js';
import { MAX_TIMEOUT_FIELD_BYTES, writeTimeoutField } from './h2-request-headers.js';
import type { H2UnaryCall } from './h2-unary-call.js';

const GRPC_PREFIX_BYTES = 5;

export class H2RequestWriter {
  readonly #socket: net.Socket;
  /** The peer's connection window (its WINDOW_UPDATEs on stream 0 add to it). */
  connWindow = DEFAULT_INITIAL_WINDOW;
  /** The peer's SETTINGS_MAX_FRAME_SIZE. */
  maxFrame = DEFAULT_MAX_FRAME_SIZE;
  #blocked: H2UnaryCall[] = [];

  constructor(socket: net.Socket) {
    this.#socket = socket;
  }

  get hasBlocked(): boolean {
    return this.#blocked.length > 0;
  }

  /**
   * Writes `call`'s HEADERS (grpc-timeout from `remainingMs`) and as much of its body as the
   * windows allow; `call.streamId` and `call.sendWindow` are set by the caller.
   */
  writeRequest(call: H2UnaryCall, remainingMs: number): void {
    const id = call.streamId;
    const body = call.body;
    const msgLen = GRPC_PREFIX_BYTES + body.length;
    const fits = msgLen <= this.maxFrame && msgLen <= this.connWindow && msgLen <= call.sendWindow;
    const buf = Buffer.allocUnsafe(FRAME_HEADER_BYTES + call.headerPrefix.length + MAX_TIMEOUT_FIELD_BYTES + (fits ? FRAME_HEADER_BYTES + msgLen : 0));
    let off = FRAME_HEADER_BYTES;
    off += call.headerPrefix.copy(buf, off);
    off = writeTimeoutField(buf, off, remainingMs);
    writeFrameHeader(buf, 0, off - FRAME_HEADER_BYTES, FrameType.HEADERS, Flag.END_HEADERS, id);
    if (fits) {
      writeFrameHeader(buf, off, msgLen, FrameType.DATA, Flag.END_STREAM, id);
      off += FRAME_HEADER_BYTES;
      buf[off] = 0;
      buf.writeUInt32BE(body.length, off + 1);
      body.copy(buf, off + GRPC_PREFIX_BYTES);
      off += msgLen;
      this.connWindow -= msgLen;
      call.sendWindow -= msgLen;
      this.#socket.write(off === buf.length ? buf : buf.subarray(0, off));
      return;
    }
    this.#socket.write(buf.subarray(0, off));
    const framed = Buffer.allocUnsafe(msgLen);
    framed[0] = 0;
    framed.writeUInt32BE(body.length, 1);
    body.copy(framed, GRPC_PREFIX_BYTES);
    call.pendingBody = framed;
    call.pendingOffset = 0;
    this.#blocked.push(call);
    this.flush();
  }

  /** Sends held body octets within the windows; the last frame of a body carries END_STREAM. */
  flush(): void {
    const out: Buffer[] = [];
    for (let i = 0; i < this.#blocked.length && this.connWindow > 0;) {
      const call = this.#blocked[i] as H2UnaryCall;
      const body = call.pendingBody;
      if (body === null) {
        this.#blocked.splice(i, 1);
        continue;
      }
      while (call.pendingOffset < body.length && this.connWindow > 0 && call.sendWindow > 0) {
        const n = Math.min(body.length - call.pendingOffset, this.maxFrame, this.connWindow, call.sendWindow);
        const last = call.pendingOffset + n === body.length;
        const hdr = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
        writeFrameHeader(hdr, 0, n, FrameType.DATA, last ? Flag.END_STREAM : 0, call.streamId);
        out.push(hdr, body.subarray(call.pendingOffset, call.pendingOffset + n));
        call.pendingOffset += n;
        this.connWindow -= n;
        call.sendWindow -= n;
      }
      if (call.pendingOffset === body.length) {
        call.pendingBody = null;
        this.#blocked.splice(i, 1);
      } else i++;
    }
    if (out.length > 0) this.#socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
  }

  /** Forgets `call`'s held body (its stream ended or was reset). */
  remove(call: H2UnaryCall): void {
    const i = this.#blocked.indexOf(call);
    if (i >= 0) this.#blocked.splice(i, 1);
  }

  /** Drops every held body (the connection closed). */
  clear(): void {
    this.#blocked = [];
  }
}
