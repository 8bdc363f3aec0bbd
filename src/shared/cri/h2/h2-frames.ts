/**
 * HTTP/2 frame codec (RFC 9113 §4, §6) for the CRI client's unary transport: constants, frame
 * writers, and {@link FrameReader}, which cuts a socket byte stream into frames.
 *
 * The reader never allocates from a length the peer sends before checking it: a frame longer
 * than the MAX_FRAME_SIZE this side advertised is a FRAME_SIZE_ERROR before its payload is
 * buffered, so the reader holds at most one frame (≤ 16 KiB + 9) beyond the current chunk.
 */

export const FRAME_HEADER_BYTES = 9;
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const FrameType = Object.freeze({
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
});

export const Flag = Object.freeze({
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
});

export const Setting = Object.freeze({
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
});

/** RFC 9113 §7 error codes. */
export const H2Error = Object.freeze({
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
});

/** RFC 9113 §6.5.2 defaults. */
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
export const DEFAULT_INITIAL_WINDOW = 65_535;
export const MAX_WINDOW = 2 ** 31 - 1;
export const MAX_STREAM_ID = 2 ** 31 - 1;

/** Writes a 9-octet frame header at `off`. */
export function writeFrameHeader(buf: Buffer, off: number, length: number, type: number, flags: number, streamId: number): void {
  buf[off] = (length >>> 16) & 0xff;
  buf[off + 1] = (length >>> 8) & 0xff;
  buf[off + 2] = length & 0xff;
  buf[off + 3] = type;
  buf[off + 4] = flags;
  buf.writeUInt32BE(streamId & 0x7fffffff, off + 5);
}

export function settingsFrame(settings: ReadonlyArray<readonly [number, number]>): Buffer {
  const buf = Buffer.allocUnsafe(FRAME_HEADER_BYTES + 6 * settings.length);
  writeFrameHeader(buf, 0, 6 * settings.length, FrameType.SETTINGS, 0, 0);
  let off = FRAME_HEADER_BYTES;
  for (const [id, value] of settings) {
    buf.writeUInt16BE(id, off);
    buf.writeUInt32BE(value, off + 2);
    off += 6;
  }
  return buf;
}

export const SETTINGS_ACK: Buffer = (() => {
  const b = Buffer.alloc(FRAME_HEADER_BYTES);
  writeFrameHeader(b, 0, 0, FrameType.SETTINGS, Flag.ACK, 0);
  return b;
})();

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const buf = Buffer.allocUnsafe(FRAME_HEADER_BYTES + 4);
  writeFrameHeader(buf, 0, 4, FrameType.WINDOW_UPDATE, 0, streamId);
  buf.writeUInt32BE(increment & 0x7fffffff, FRAME_HEADER_BYTES);
  return buf;
}

export function rstStreamFrame(streamId: number, errorCode: number): Buffer {
  const buf = Buffer.allocUnsafe(FRAME_HEADER_BYTES + 4);
  writeFrameHeader(buf, 0, 4, FrameType.RST_STREAM, 0, streamId);
  buf.writeUInt32BE(errorCode >>> 0, FRAME_HEADER_BYTES);
  return buf;
}

export function pingAckFrame(payload: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(FRAME_HEADER_BYTES + 8);
  writeFrameHeader(buf, 0, 8, FrameType.PING, Flag.ACK, 0);
  buf.set(payload.subarray(0, 8), FRAME_HEADER_BYTES);
  return buf;
}

export function goawayFrame(lastStreamId: number, errorCode: number): Buffer {
  const buf = Buffer.allocUnsafe(FRAME_HEADER_BYTES + 8);
  writeFrameHeader(buf, 0, 8, FrameType.GOAWAY, 0, 0);
  buf.writeUInt32BE(lastStreamId & 0x7fffffff, FRAME_HEADER_BYTES);
  buf.writeUInt32BE(errorCode >>> 0, FRAME_HEADER_BYTES + 4);
  return buf;
}

/** What {@link FrameReader} hands out per frame; `payload` is only valid during the call. */
export interface FrameSink {
  /** One complete frame. `payload` aliases the socket's read buffer or the reader's gathering buffer: copy what outlives the call. */
  onFrame(type: number, flags: number, streamId: number, payload: Buffer): void;
  /** A frame the reader refuses (too long): a connection error with this H2 error code. */
  onFrameError(code: number, message: string): void;
}

/**
 * Cuts a byte stream into frames. A frame wholly inside a socket chunk is handed out as a
 * subarray of that chunk (no copy); a frame spread over chunks is gathered into this reader's
 * one gathering buffer (header + MAX_FRAME_SIZE octets, allocated at the first such frame and
 * reused: a frame's payload is only valid during onFrame), once its 9-octet header (and so its
 * checked length) is known — so a peer dribbling bytes costs linear copying, and a claimed
 * length above MAX_FRAME_SIZE allocates nothing. The chunks themselves may be one reused read
 * buffer (h2-connection.ts): nothing here keeps a view of a chunk past push().
 */
export class FrameReader {
  readonly #sink: FrameSink;
  readonly #maxFrameSize: number;
  /** Header octets of a frame whose header straddles chunks. */
  readonly #head = Buffer.alloc(FRAME_HEADER_BYTES);
  #headFilled = 0;
  /** A frame being gathered across chunks (header included), and how much of it is filled. */
  #frame: Buffer | null = null;
  /** Backing store of #frame, reused for every gathered frame (see above). */
  #gather: Buffer | null = null;
  #frameFilled = 0;
  #failed = false;

  constructor(sink: FrameSink, maxFrameSize = DEFAULT_MAX_FRAME_SIZE) {
    this.#sink = sink;
    this.#maxFrameSize = maxFrameSize;
  }

  push(chunk: Buffer): void {
    let off = 0;
    const end = chunk.length;
    while (off < end && !this.#failed) {
      const frame = this.#frame;
      if (frame !== null) {
        const n = Math.min(frame.length - this.#frameFilled, end - off);
        chunk.copy(frame, this.#frameFilled, off, off + n);
        this.#frameFilled += n;
        off += n;
        if (this.#frameFilled < frame.length) return;
        this.#frame = null;
        this.#dispatch(frame, 0);
        continue;
      }
      if (this.#headFilled > 0 || end - off < FRAME_HEADER_BYTES) {
        const n = Math.min(FRAME_HEADER_BYTES - this.#headFilled, end - off);
        chunk.copy(this.#head, this.#headFilled, off, off + n);
        this.#headFilled += n;
        off += n;
        if (this.#headFilled < FRAME_HEADER_BYTES) return;
        this.#headFilled = 0;
        const length = this.#checkedLength(this.#head, 0);
        if (length < 0) return;
        const whole = this.#gathering(length);
        this.#head.copy(whole, 0);
        if (length === 0) this.#dispatch(whole, 0);
        else {
          this.#frame = whole;
          this.#frameFilled = FRAME_HEADER_BYTES;
        }
        continue;
      }
      const length = this.#checkedLength(chunk, off);
      if (length < 0) return;
      if (end - off >= FRAME_HEADER_BYTES + length) {
        this.#dispatch(chunk, off);
        off += FRAME_HEADER_BYTES + length;
        continue;
      }
      const whole = this.#gathering(length);
      chunk.copy(whole, 0, off, end);
      this.#frame = whole;
      this.#frameFilled = end - off;
      off = end;
    }
  }

  /** A view of the gathering buffer for a frame of `length` (checked) payload octets. */
  #gathering(length: number): Buffer {
    this.#gather ??= Buffer.allocUnsafe(FRAME_HEADER_BYTES + this.#maxFrameSize);
    return this.#gather.subarray(0, FRAME_HEADER_BYTES + length);
  }

  /** Stops handing out frames (after a connection error found by the sink). */
  fail(): void {
    this.#failed = true;
    this.#frame = null;
  }

  /** The frame length at `buf[off]`, or -1 after reporting a FRAME_SIZE_ERROR. */
  #checkedLength(buf: Buffer, off: number): number {
    const length = ((buf[off] ?? 0) << 16) | ((buf[off + 1] ?? 0) << 8) | (buf[off + 2] ?? 0);
    if (length <= this.#maxFrameSize) return length;
    this.fail();
    this.#sink.onFrameError(H2Error.FRAME_SIZE_ERROR, `frame of ${length} bytes above MAX_FRAME_SIZE ${this.#maxFrameSize}`);
    return -1;
  }

  /** Hands out the complete frame at `buf[off]`. */
  #dispatch(buf: Buffer, off: number): void {
    const length = ((buf[off] ?? 0) << 16) | ((buf[off + 1] ?? 0) << 8) | (buf[off + 2] ?? 0);
    const type = buf[off + 3] ?? 0;
    const flags = buf[off + 4] ?? 0;
    const streamId = buf.readUInt32BE(off + 5) & 0x7fffffff;
    this.#sink.onFrame(type, flags, streamId, buf.subarray(off + FRAME_HEADER_BYTES, off + FRAME_HEADER_BYTES + length));
  }
}
