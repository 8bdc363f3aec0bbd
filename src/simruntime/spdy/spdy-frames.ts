/**
 * SPDY/3.1 framing (draft-mbelshe-httpbis-spdy-00 §2.2, as spoken by moby/spdystream, the
 * library under Kubernetes' httpstream/spdy): an incremental frame reader and the encoders.
 * Pure byte handling, no I/O and no header compression (spdy-headers.ts).
 *
 * Frame header (8 bytes, big-endian):
 *   control: 1 | version:15 | type:16 | flags:8 | length:24
 *   data:    0 | stream id:31          | flags:8 | length:24
 * The reader refuses (SpdyProtocolError) any frame longer than its `maxFrameBytes`, a control
 * frame of another version, and a known control frame whose length does not fit its layout;
 * unknown control types are skipped, as the draft requires.
 */
export const SPDY_VERSION = 3;
export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

export const ControlType = Object.freeze({
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
});

/** RST_STREAM status codes (§2.6.3). */
export const RstStatus = Object.freeze({
  PROTOCOL_ERROR: 1,
  INVALID_STREAM: 2,
  REFUSED_STREAM: 3,
  UNSUPPORTED_VERSION: 4,
  CANCEL: 5,
  INTERNAL_ERROR: 6,
  FLOW_CONTROL_ERROR: 7,
  STREAM_IN_USE: 8,
  STREAM_ALREADY_CLOSED: 9,
  FRAME_TOO_LARGE: 11,
});

/** GOAWAY status codes (§2.6.6). */
export const GoawayStatus = Object.freeze({ OK: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2 });

export type SpdyFrame =
  | { readonly kind: 'data'; readonly streamId: number; readonly flags: number; readonly data: Buffer }
  | { readonly kind: 'syn_stream'; readonly streamId: number; readonly assocId: number; readonly priority: number; readonly flags: number; readonly headerBlock: Buffer }
  | { readonly kind: 'syn_reply'; readonly streamId: number; readonly flags: number; readonly headerBlock: Buffer }
  | { readonly kind: 'headers'; readonly streamId: number; readonly flags: number; readonly headerBlock: Buffer }
  | { readonly kind: 'rst_stream'; readonly streamId: number; readonly status: number }
  | { readonly kind: 'settings'; readonly flags: number; readonly entries: ReadonlyArray<{ id: number; flags: number; value: number }> }
  | { readonly kind: 'ping'; readonly id: number }
  | { readonly kind: 'goaway'; readonly lastGoodStreamId: number; readonly status: number }
  | { readonly kind: 'window_update'; readonly streamId: number; readonly delta: number }
  | { readonly kind: 'unknown'; readonly type: number; readonly flags: number };

export class SpdyProtocolError extends Error {
  readonly code = 'ERR_SPDY_PROTOCOL';
}

const HEADER_BYTES = 8;
/** The format's own ceiling: a 24-bit length. */
export const MAX_FRAME_PAYLOAD = 0xffffff;
const STREAM_ID_MASK = 0x7fffffff;

/**
 * Incremental reader: `push()` bytes as they arrive, then `next()` until it answers undefined
 * (no whole frame buffered). Buffered bytes never exceed one frame plus one pushed chunk.
 */
export class SpdyFrameReader {
  readonly #maxFrameBytes: number;
  #chunks: Buffer[] = [];
  #length = 0;

  constructor(opts: { maxFrameBytes: number }) {
    if (!Number.isInteger(opts.maxFrameBytes) || opts.maxFrameBytes < 8 || opts.maxFrameBytes > MAX_FRAME_PAYLOAD) {
      throw new RangeError(`SpdyFrameReader: maxFrameBytes must be an integer in [8, ${MAX_FRAME_PAYLOAD}]`);
    }
    this.#maxFrameBytes = opts.maxFrameBytes;
  }

  /** Bytes buffered and not yet returned as frames. */
  get buffered(): number {
    return this.#length;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  /** The next whole frame, or undefined. Throws SpdyProtocolError on a malformed frame. */
  next(): SpdyFrame | undefined {
    for (;;) {
      if (this.#length < HEADER_BYTES) return undefined;
      const head = this.#peek(HEADER_BYTES);
      const length = head.readUIntBE(5, 3);
      if (length > this.#maxFrameBytes) throw new SpdyProtocolError(`frame of ${length} bytes exceeds the limit of ${this.#maxFrameBytes}`);
      if (this.#length < HEADER_BYTES + length) return undefined;
      const frame = this.#take(HEADER_BYTES + length);
      const parsed = parseFrame(frame);
      if (parsed !== undefined) return parsed;
    }
  }

  #peek(n: number): Buffer {
    const first = this.#chunks[0]!;
    if (first.length >= n) return first.subarray(0, n);
    const whole = Buffer.concat(this.#chunks);
    this.#chunks = [whole];
    return whole.subarray(0, n);
  }

  #take(n: number): Buffer {
    let first = this.#chunks[0]!;
    if (first.length < n) {
      first = Buffer.concat(this.#chunks);
      this.#chunks = [first];
    }
    const out = first.subarray(0, n);
    if (first.length === n) this.#chunks.shift();
    else this.#chunks[0] = first.subarray(n);
    this.#length -= n;
    return out;
  }
}

/** One whole frame (header + payload) → SpdyFrame; undefined for frames to skip. */
function parseFrame(f: Buffer): SpdyFrame | undefined {
  const flags = f[4]!;
  const payload = f.subarray(HEADER_BYTES);
  const len = payload.length;
  if ((f[0]! & 0x80) === 0) {
    return { kind: 'data', streamId: f.readUInt32BE(0) & STREAM_ID_MASK, flags, data: Buffer.from(payload) };
  }
  const version = f.readUInt16BE(0) & 0x7fff;
  if (version !== SPDY_VERSION) throw new SpdyProtocolError(`unsupported SPDY version ${version}`);
  const type = f.readUInt16BE(2);
  const need = (ok: boolean, what: string): void => {
    if (!ok) throw new SpdyProtocolError(`${what} frame with a bad length ${len}`);
  };
  switch (type) {
    case ControlType.SYN_STREAM:
      need(len >= 10, 'SYN_STREAM');
      return {
        kind: 'syn_stream',
        streamId: payload.readUInt32BE(0) & STREAM_ID_MASK,
        assocId: payload.readUInt32BE(4) & STREAM_ID_MASK,
        priority: payload[8]! >> 5,
        flags,
        headerBlock: Buffer.from(payload.subarray(10)),
      };
    case ControlType.SYN_REPLY:
      need(len >= 4, 'SYN_REPLY');
      return { kind: 'syn_reply', streamId: payload.readUInt32BE(0) & STREAM_ID_MASK, flags, headerBlock: Buffer.from(payload.subarray(4)) };
    case ControlType.HEADERS:
      need(len >= 4, 'HEADERS');
      return { kind: 'headers', streamId: payload.readUInt32BE(0) & STREAM_ID_MASK, flags, headerBlock: Buffer.from(payload.subarray(4)) };
    case ControlType.RST_STREAM:
      need(len === 8, 'RST_STREAM');
      return { kind: 'rst_stream', streamId: payload.readUInt32BE(0) & STREAM_ID_MASK, status: payload.readUInt32BE(4) };
    case ControlType.SETTINGS: {
      need(len >= 4, 'SETTINGS');
      const n = payload.readUInt32BE(0);
      need(len === 4 + 8 * n, 'SETTINGS');
      const entries: Array<{ id: number; flags: number; value: number }> = [];
      for (let i = 0; i < n; i++) {
        const o = 4 + 8 * i;
        entries.push({ flags: payload[o]!, id: payload.readUIntBE(o + 1, 3), value: payload.readUInt32BE(o + 4) });
      }
      return { kind: 'settings', flags, entries };
    }
    case ControlType.PING:
      need(len === 4, 'PING');
      return { kind: 'ping', id: payload.readUInt32BE(0) };
    case ControlType.GOAWAY:
      need(len === 8, 'GOAWAY');
      return { kind: 'goaway', lastGoodStreamId: payload.readUInt32BE(0) & STREAM_ID_MASK, status: payload.readUInt32BE(4) };
    case ControlType.WINDOW_UPDATE:
      need(len === 8, 'WINDOW_UPDATE');
      return { kind: 'window_update', streamId: payload.readUInt32BE(0) & STREAM_ID_MASK, delta: payload.readUInt32BE(4) & STREAM_ID_MASK };
    default:
      return { kind: 'unknown', type, flags };
  }
}

function control(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > MAX_FRAME_PAYLOAD) throw new RangeError(`control frame payload of ${payload.length} bytes is too large`);
  const h = Buffer.alloc(HEADER_BYTES);
  h.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  h.writeUInt16BE(type, 2);
  h[4] = flags;
  h.writeUIntBE(payload.length, 5, 3);
  return Buffer.concat([h, payload]);
}

function u32s(...v: number[]): Buffer {
  const b = Buffer.alloc(4 * v.length);
  v.forEach((x, i) => b.writeUInt32BE(x >>> 0, 4 * i));
  return b;
}

/** A DATA frame; `data` up to the 24-bit limit (callers split larger writes). */
export function encodeData(streamId: number, data: Buffer, fin: boolean): Buffer {
  if (data.length > MAX_FRAME_PAYLOAD) throw new RangeError(`data frame of ${data.length} bytes is too large`);
  const h = Buffer.alloc(HEADER_BYTES);
  h.writeUInt32BE(streamId & STREAM_ID_MASK, 0);
  h[4] = fin ? FLAG_FIN : 0;
  h.writeUIntBE(data.length, 5, 3);
  return data.length === 0 ? h : Buffer.concat([h, data]);
}

export function encodeSynStream(streamId: number, headerBlock: Buffer, flags = 0, assocId = 0, priority = 0): Buffer {
  const p = Buffer.alloc(10);
  p.writeUInt32BE(streamId & STREAM_ID_MASK, 0);
  p.writeUInt32BE(assocId & STREAM_ID_MASK, 4);
  p[8] = (priority & 7) << 5;
  return control(ControlType.SYN_STREAM, flags, Buffer.concat([p, headerBlock]));
}

export function encodeSynReply(streamId: number, headerBlock: Buffer, flags = 0): Buffer {
  return control(ControlType.SYN_REPLY, flags, Buffer.concat([u32s(streamId & STREAM_ID_MASK), headerBlock]));
}

export function encodeRstStream(streamId: number, status: number): Buffer {
  return control(ControlType.RST_STREAM, 0, u32s(streamId & STREAM_ID_MASK, status));
}

export function encodePing(id: number): Buffer {
  return control(ControlType.PING, 0, u32s(id));
}

export function encodeGoaway(lastGoodStreamId: number, status: number): Buffer {
  return control(ControlType.GOAWAY, 0, u32s(lastGoodStreamId & STREAM_ID_MASK, status));
}

export function encodeWindowUpdate(streamId: number, delta: number): Buffer {
  return control(ControlType.WINDOW_UPDATE, 0, u32s(streamId & STREAM_ID_MASK, delta & STREAM_ID_MASK));
}

export function encodeSettings(entries: ReadonlyArray<{ id: number; flags: number; value: number }>): Buffer {
  const b = Buffer.alloc(4 + 8 * entries.length);
  b.writeUInt32BE(entries.length, 0);
  entries.forEach((e, i) => {
    b[4 + 8 * i] = e.flags;
    b.writeUIntBE(e.id, 5 + 8 * i, 3);
    b.writeUInt32BE(e.value >>> 0, 8 + 8 * i);
  });
  return control(ControlType.SETTINGS, 0, b);
}
