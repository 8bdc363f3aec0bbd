/**
 * Hand-made HTTP/2 (RFC 9113) and HPACK (RFC 7541) bytes for the `:authority` tests: lets a test
 * send exactly the representations a Go client would (incremental indexing, references to the
 * dynamic table, CONTINUATION, padding, priority), which node:http2's client never chooses.
 *
 * HPACK here is encode-only and raw (no Huffman): strings are sent with H = 0.
 */
import net from 'node:net';
import { loadCriProto } from '../../../src/shared/cri/cri-proto.js';

export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const FRAME = { DATA: 0x0, HEADERS: 0x1, RST_STREAM: 0x3, SETTINGS: 0x4, GOAWAY: 0x7, CONTINUATION: 0x9 } as const;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

export function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(streamId, 5);
  return Buffer.concat([h, payload]);
}

/** RFC 7541 §5.1 integer; `high` is OR-ed into the first octet (the representation's bits). */
export function hpackInt(value: number, prefixBits: number, high: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([high | value]);
  const out = [high | max];
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return Buffer.from(out);
}

export function hpackString(s: string): Buffer {
  const v = Buffer.from(s, 'latin1');
  return Buffer.concat([hpackInt(v.length, 7, 0), v]);
}

/** §6.1 indexed field. */
export const indexed = (index: number): Buffer => hpackInt(index, 7, 0x80);
/** §6.2.1 literal with incremental indexing; `name` is a table index or a literal name. */
export const incremental = (name: number | string, value: string): Buffer =>
  typeof name === 'number' ? Buffer.concat([hpackInt(name, 6, 0x40), hpackString(value)]) : Buffer.concat([Buffer.from([0x40]), hpackString(name), hpackString(value)]);
/** §6.2.2 literal without indexing. */
export const withoutIndexing = (name: number | string, value: string): Buffer =>
  typeof name === 'number' ? Buffer.concat([hpackInt(name, 4, 0x00), hpackString(value)]) : Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)]);
/** §6.2.3 literal never indexed. */
export const neverIndexed = (name: number | string, value: string): Buffer =>
  typeof name === 'number' ? Buffer.concat([hpackInt(name, 4, 0x10), hpackString(value)]) : Buffer.concat([Buffer.from([0x10]), hpackString(name), hpackString(value)]);
/** §6.3 dynamic table size update. */
export const sizeUpdate = (max: number): Buffer => hpackInt(max, 5, 0x20);

/** The request headers of a gRPC call other than `:authority` (static indices 3 = POST, 6 = http). */
export function grpcRequestHeaders(method: string): Buffer {
  return Buffer.concat([indexed(3), indexed(6), withoutIndexing(4, `/runtime.v1.RuntimeService/${method}`), withoutIndexing(31, 'application/grpc'), withoutIndexing('te', 'trailers')]);
}

/** A gRPC length-prefixed message (uncompressed). */
export function grpcMessage(body: Buffer): Buffer {
  const h = Buffer.alloc(5);
  h.writeUInt32BE(body.length, 1);
  return Buffer.concat([h, body]);
}

export function versionRequestBody(): Buffer {
  const m = loadCriProto().runtime['Version'];
  if (!m) throw new Error('no Version method');
  return m.requestSerialize({ version: 'v1' });
}

export function decodeVersionResponse(grpcFrame: Buffer): { runtimeName: string; runtimeApiVersion: string } {
  const m = loadCriProto().runtime['Version'];
  if (!m) throw new Error('no Version method');
  const len = grpcFrame.readUInt32BE(1);
  return m.responseDeserialize(grpcFrame.subarray(5, 5 + len)) as { runtimeName: string; runtimeApiVersion: string };
}

interface Waiter {
  readonly pred: () => boolean;
  readonly resolve: () => void;
}

export interface ReceivedFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/**
 * A raw HTTP/2 client connection on a unix socket: sends what the test builds, answers the
 * server's SETTINGS with an ACK, and collects every frame the server sends.
 */
export class RawH2Connection {
  readonly frames: ReceivedFrame[] = [];
  readonly #socket: net.Socket;
  #buf = Buffer.alloc(0);
  #waiters: Waiter[] = [];
  #closed = false;

  private constructor(socket: net.Socket) {
    this.#socket = socket;
    socket.on('data', (d: Buffer) => this.#onData(d));
    socket.on('close', () => {
      this.#closed = true;
      this.#wake();
    });
    socket.on('error', () => undefined);
  }

  static async open(socketPath: string): Promise<RawH2Connection> {
    const socket = net.connect(socketPath);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const c = new RawH2Connection(socket);
    c.send(Buffer.concat([CLIENT_PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(0))]));
    return c;
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(bytes: Buffer): void {
    this.#socket.write(bytes);
  }

  /** Sends one byte per write (the server sees arbitrary chunk boundaries). */
  async sendBytewise(bytes: Buffer): Promise<void> {
    for (const b of bytes) {
      await new Promise<void>((resolve, reject) => this.#socket.write(Buffer.from([b]), (err) => (err ? reject(err) : resolve())));
    }
  }

  /** Resolves once `pred` holds over the frames received (or the connection closed); bounded. */
  async until(pred: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (pred() || this.#closed) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        new Promise<void>((resolve) => this.#waiters.push({ pred, resolve })),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; frames: ${this.describe()}`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits until stream `id` ended (END_STREAM or RST_STREAM) and returns how. */
  async outcome(id: number): Promise<{ rst?: number; data: Buffer }> {
    const ended = (): boolean => this.frames.some((f) => f.streamId === id && (f.type === FRAME.RST_STREAM || (f.flags & FLAG.END_STREAM) !== 0 && (f.type === FRAME.HEADERS || f.type === FRAME.DATA))) || this.frames.some((f) => f.type === FRAME.GOAWAY);
    await this.until(ended, `stream ${id} to end`);
    const rst = this.frames.find((f) => f.streamId === id && f.type === FRAME.RST_STREAM);
    const goaway = this.frames.find((f) => f.type === FRAME.GOAWAY);
    const data = Buffer.concat(this.frames.filter((f) => f.streamId === id && f.type === FRAME.DATA).map((f) => f.payload));
    if (rst) return { rst: rst.payload.readUInt32BE(0), data };
    if (goaway && !this.frames.some((f) => f.streamId === id && (f.flags & FLAG.END_STREAM) !== 0)) return { rst: -goaway.payload.readUInt32BE(4), data };
    return { data };
  }

  describe(): string {
    return this.frames.map((f) => `${f.type}/${f.flags}/${f.streamId}`).join(' ');
  }

  close(): void {
    this.#socket.destroy();
  }

  #onData(d: Buffer): void {
    this.#buf = Buffer.concat([this.#buf, d]);
    while (this.#buf.length >= 9) {
      const len = this.#buf.readUIntBE(0, 3);
      if (this.#buf.length < 9 + len) break;
      const f: ReceivedFrame = { type: this.#buf[3] ?? 0, flags: this.#buf[4] ?? 0, streamId: this.#buf.readUInt32BE(5) & 0x7fffffff, payload: this.#buf.subarray(9, 9 + len) };
      this.#buf = this.#buf.subarray(9 + len);
      this.frames.push(f);
      if (f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0) this.send(frame(FRAME.SETTINGS, FLAG.ACK, 0, Buffer.alloc(0)));
    }
    this.#wake();
  }

  #wake(): void {
    const still: Waiter[] = [];
    for (const w of this.#waiters) {
      if (w.pred() || this.#closed) w.resolve();
      else still.push(w);
    }
    this.#waiters = still;
  }
}
