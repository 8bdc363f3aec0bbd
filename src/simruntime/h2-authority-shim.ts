/**
 * A connection-level shim in front of the simulated runtime's gRPC server: it passes the
 * client's HTTP/2 byte stream through unchanged except for the HPACK header blocks, in which an
 * `:authority` that Node's HTTP/2 server (nghttp2) would reject is rewritten
 * (hpack-authority-rewriter.ts says why and how). Server → client bytes pass untouched.
 *
 * Shape: a Duplex over one accepted unix socket (any Duplex), handed to grpc-js through
 * `Server.createConnectionInjector` (simulated-runtime.ts). Readable side = the client's bytes
 * after rewriting; writable side = the server's bytes, written to the socket.
 *
 * Frame tracking (RFC 9113 §3.4, §4.1): the 24-octet client preface, then frames of a 9-octet
 * header (length 24 bits, type, flags, stream id) and a payload. Frames other than HEADERS and
 * CONTINUATION are forwarded as zero-copy slices of the socket's chunks as they arrive. A
 * header block (HEADERS, then CONTINUATION frames up to END_HEADERS) is held until complete,
 * because a rewrite changes its length:
 * - no rewrite needed (every block of a client that sends a valid authority, e.g. our own
 *   CriClient): the original frames are forwarded byte for byte;
 * - rewritten: re-framed as one HEADERS frame (END_STREAM and PRIORITY kept, padding dropped)
 *   plus CONTINUATION frames, each at most 16,384 octets (the SETTINGS_MAX_FRAME_SIZE every
 *   HTTP/2 endpoint must accept), the last one with END_HEADERS.
 *
 * Anything malformed (a frame between HEADERS and its CONTINUATIONs, bad padding, a header
 * block over MAX_HEADER_BLOCK_BYTES, an undecodable HPACK block) is forwarded as received and
 * the shim turns into a plain pipe: nghttp2 then judges the connection exactly as it would
 * without the shim (a protocol or compression error ends it).
 *
 * Cost: Node's HTTP/2 session reads a non-native stream through its JS stream wrapper, and every
 * header block is parsed (HPACK mirror, Huffman only for inserted strings). With each read
 * handed on as one buffer (`#emit`), the raw-CRI ceiling on sim/zero measured within the
 * machine's noise of the native listener (issue 10 item 1 report has the figures).
 *
 * Backpressure: when the consumer (Node's HTTP/2 session) stops reading, the socket is paused;
 * `_read` resumes it. Memory per connection is bounded by one header block
 * (MAX_HEADER_BLOCK_BYTES) plus one 9-octet frame header.
 */
import { Duplex } from 'node:stream';
import { CLIENT_PREFACE, DEFAULT_MAX_FRAME_SIZE, Flag, FRAME_HEADER_BYTES, FrameType, writeFrameHeader } from '../shared/cri/h2/h2-frames.js';
import { HpackAuthorityRewriter } from './hpack-authority-rewriter.js';

// The frame codec's constants (RFC 9113), shared with the CRI client's HTTP/2 transport.
const PREFACE_LENGTH = CLIENT_PREFACE.length;
const FRAME_HEADER_LENGTH = FRAME_HEADER_BYTES;
const TYPE_HEADERS = FrameType.HEADERS;
const TYPE_CONTINUATION = FrameType.CONTINUATION;
const FLAG_END_STREAM = Flag.END_STREAM;
const FLAG_END_HEADERS = Flag.END_HEADERS;
const FLAG_PADDED = Flag.PADDED;
const FLAG_PRIORITY = Flag.PRIORITY;
const PRIORITY_LENGTH = 5;
/** The smallest SETTINGS_MAX_FRAME_SIZE a peer may advertise (RFC 9113 §6.5.2). */
const MAX_EMITTED_FRAME_PAYLOAD = DEFAULT_MAX_FRAME_SIZE;
/**
 * A header block larger than this is passed through without rewriting (and the shim turns
 * into a pipe): Node's server refuses header lists over 64 KiB anyway.
 */
export const MAX_HEADER_BLOCK_BYTES = 256 * 1024;

/**
 * Parser states, in order: `preface` (24 octets) → then per frame `header` (collecting the
 * 9-octet frame header) → `pass` (payload of a frame forwarded as is) or `block` (a HEADERS or
 * CONTINUATION frame held until the header block is complete) → `header` … `pipe` is final:
 * everything passes untouched.
 */
type ShimState = 'preface' | 'header' | 'pass' | 'block' | 'pipe';

export class H2AuthorityShim extends Duplex {
  readonly #socket: Duplex;
  readonly #rewriter = new HpackAuthorityRewriter();
  #state: ShimState = 'preface';
  /** Octets left of the preface (`preface`) or of the current frame's payload (`pass`, `block`). */
  #remaining = PREFACE_LENGTH;
  /** A frame header split across chunks. */
  readonly #header = Buffer.alloc(FRAME_HEADER_LENGTH);
  #headerHave = 0;
  /** The current header block's frames as received (complete ones, then the current one's parts). */
  #blockFrames: Buffer[] = [];
  #frameParts: Buffer[] = [];
  #blockBytes = 0;

  /** `socket`: the accepted connection (a net.Socket in the product; any Duplex in tests). */
  constructor(socket: Duplex) {
    super({ allowHalfOpen: false });
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#onClientBytes(chunk));
    socket.on('end', () => this.push(null));
    socket.on('error', (err) => this.destroy(err));
    socket.on('close', () => this.destroy());
  }

  /** `:authority` values rewritten on this connection so far. */
  get rewrites(): number {
    return this.#rewriter.rewrites;
  }

  /** False once the shim has given up interpreting this connection (see the module comment). */
  get interpreting(): boolean {
    return this.#state !== 'pipe' && this.#rewriter.active;
  }

  override _read(): void {
    this.#socket.resume();
  }

  /**
   * Completes as soon as the socket takes the bytes (or on 'drain' when its buffer is full):
   * waiting for each flush would hold Node's HTTP/2 session to one write in flight.
   */
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.#socket.write(chunk)) cb();
    else this.#socket.once('drain', () => cb());
  }

  override _writev(chunks: { chunk: Buffer }[], cb: (err?: Error | null) => void): void {
    this.#socket.cork();
    let more = true;
    for (const c of chunks) more = this.#socket.write(c.chunk) && more;
    this.#socket.uncork();
    if (more) cb();
    else this.#socket.once('drain', () => cb());
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.#socket.end();
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.#socket.destroy();
    cb(err);
  }

  /**
   * Hands one read's worth of bytes on as ONE buffer: each push becomes a separate receive in
   * Node's HTTP/2 session, which then flushes its answers; pushing the pieces one by one would
   * turn a read of 64 pipelined requests into 64 receives and 64 socket writes.
   */
  #emit(out: Buffer[]): void {
    let total = 0;
    let pieces = 0;
    let only: Buffer | undefined;
    for (const b of out) {
      if (b.length === 0) continue;
      total += b.length;
      pieces++;
      only = b;
    }
    if (pieces === 0 || only === undefined) return;
    const bytes = pieces === 1 ? only : Buffer.concat(out, total);
    if (!this.push(bytes)) this.#socket.pause();
  }

  #onClientBytes(chunk: Buffer): void {
    // Fast path: the chunk lies within a frame (or the stream) that passes untouched.
    if (this.#state === 'pipe' || (this.#state === 'pass' && chunk.length < this.#remaining)) {
      if (this.#state === 'pass') this.#remaining -= chunk.length;
      if (!this.push(chunk)) this.#socket.pause();
      return;
    }
    const out: Buffer[] = [];
    const n = chunk.length;
    /** Start of the run of octets forwarded as is that ends at `i`. */
    let run = 0;
    let i = 0;
    while (i < n) {
      // Read afresh each turn: the calls below move the state machine.
      const state = this.#state as ShimState;
      switch (state) {
        case 'pipe':
          i = n;
          break;
        case 'preface':
        case 'pass': {
          const k = Math.min(this.#remaining, n - i);
          i += k;
          this.#remaining -= k;
          if (this.#remaining === 0) this.#state = 'header';
          break;
        }
        case 'header': {
          let h: Buffer;
          if (this.#headerHave === 0 && n - i >= FRAME_HEADER_LENGTH) {
            h = chunk.subarray(i, i + FRAME_HEADER_LENGTH);
          } else {
            // A frame header split across chunks: hold its octets until its type is known.
            if (this.#headerHave === 0) {
              out.push(chunk.subarray(run, i));
              run = i;
            }
            const k = Math.min(FRAME_HEADER_LENGTH - this.#headerHave, n - i);
            chunk.copy(this.#header, this.#headerHave, i, i + k);
            this.#headerHave += k;
            i += k;
            run = i;
            if (this.#headerHave < FRAME_HEADER_LENGTH) break;
            this.#headerHave = 0;
            h = Buffer.from(this.#header);
            if (isHeaderBlockFrame(h)) {
              this.#frameParts.push(h);
              this.#startFrame(h, out);
            } else {
              // Anything held (a broken block) goes out before this frame's header.
              this.#startFrame(h, out);
              out.push(h);
            }
            break;
          }
          if (isHeaderBlockFrame(h)) {
            out.push(chunk.subarray(run, i));
            this.#frameParts.push(h);
            i += FRAME_HEADER_LENGTH;
            run = i;
          } else {
            i += FRAME_HEADER_LENGTH;
          }
          this.#startFrame(h, out);
          break;
        }
        case 'block': {
          const k = Math.min(this.#remaining, n - i);
          this.#frameParts.push(chunk.subarray(i, i + k));
          i += k;
          run = i;
          this.#remaining -= k;
          if (this.#remaining === 0) this.#endBlockFrame(out);
          break;
        }
        default: {
          const never: never = state;
          throw new Error(`unreachable shim state ${String(never)}`);
        }
      }
    }
    out.push(chunk.subarray(run, n));
    this.#emit(out);
  }

  /**
   * After a complete frame header `h`: a header-block frame's header is already in
   * `#frameParts`; another frame's header is (or will be, after what this queues) in `out`.
   */
  #startFrame(h: Buffer, out: Buffer[]): void {
    const length = h.readUIntBE(0, 3);
    if (!isHeaderBlockFrame(h)) {
      if (this.#blockFrames.length > 0) {
        // A frame inside a header block: a connection error nghttp2 will report.
        this.#toPipe(out);
        return;
      }
      this.#remaining = length;
      this.#state = length > 0 ? 'pass' : 'header';
      return;
    }
    this.#blockBytes += FRAME_HEADER_LENGTH + length;
    this.#remaining = length;
    if (this.#blockBytes > MAX_HEADER_BLOCK_BYTES) {
      this.#toPipe(out);
      return;
    }
    this.#state = 'block';
    if (length === 0) this.#endBlockFrame(out);
  }

  /** A HEADERS or CONTINUATION frame is complete in `#frameParts`. */
  #endBlockFrame(out: Buffer[]): void {
    const frame = this.#frameParts.length === 1 ? (this.#frameParts[0] ?? Buffer.alloc(0)) : Buffer.concat(this.#frameParts);
    this.#frameParts = [];
    const type = frame[3] ?? 0;
    const inBlock = this.#blockFrames.length > 0;
    this.#blockFrames.push(frame);
    if ((type === TYPE_HEADERS) === inBlock) {
      // HEADERS inside a block, or CONTINUATION outside one: protocol error, nghttp2's to report.
      this.#toPipe(out);
      return;
    }
    this.#state = 'header';
    if (((frame[4] ?? 0) & FLAG_END_HEADERS) === 0) return;
    const frames = this.#blockFrames;
    this.#blockFrames = [];
    this.#blockBytes = 0;
    const block = headerBlockOf(frames);
    const rewritten = block === undefined ? undefined : this.#rewriter.rewrite(block);
    if (rewritten === undefined) {
      for (const f of frames) out.push(f);
      if (block === undefined || !this.#rewriter.active) this.#toPipe(out);
      return;
    }
    for (const f of reframe(frames[0] ?? Buffer.alloc(FRAME_HEADER_LENGTH), rewritten)) out.push(f);
  }

  /** Forwards whatever is held and stops interpreting the connection. */
  #toPipe(out: Buffer[]): void {
    for (const f of this.#blockFrames) out.push(f);
    for (const f of this.#frameParts) out.push(f);
    this.#blockFrames = [];
    this.#frameParts = [];
    this.#state = 'pipe';
  }
}

function isHeaderBlockFrame(h: Buffer): boolean {
  const type = h[3];
  return type === TYPE_HEADERS || type === TYPE_CONTINUATION;
}

/** The header block fragment of each frame, concatenated; undefined when padding is malformed. */
function headerBlockOf(frames: readonly Buffer[]): Buffer | undefined {
  const fragments: Buffer[] = [];
  for (const f of frames) {
    let start = FRAME_HEADER_LENGTH;
    let end = f.length;
    if (f[3] === TYPE_HEADERS) {
      const flags = f[4] ?? 0;
      if (flags & FLAG_PADDED) {
        const pad = f[start] ?? 0;
        start += 1;
        end -= pad;
      }
      if (flags & FLAG_PRIORITY) start += PRIORITY_LENGTH;
      if (start > end) return undefined;
    }
    fragments.push(f.subarray(start, end));
  }
  return fragments.length === 1 ? fragments[0] : Buffer.concat(fragments);
}

/** The rewritten block as a HEADERS frame (from `headers`' flags and stream) and CONTINUATIONs. */
function reframe(headers: Buffer, block: Buffer): Buffer[] {
  const flags = headers[4] ?? 0;
  const streamId = headers.readUInt32BE(5);
  const priority = flags & FLAG_PRIORITY ? headers.subarray(FRAME_HEADER_LENGTH + (flags & FLAG_PADDED ? 1 : 0), FRAME_HEADER_LENGTH + (flags & FLAG_PADDED ? 1 : 0) + PRIORITY_LENGTH) : undefined;
  const frames: Buffer[] = [];
  let p = 0;
  let first = true;
  do {
    const room = MAX_EMITTED_FRAME_PAYLOAD - (first && priority ? PRIORITY_LENGTH : 0);
    const take = Math.min(room, block.length - p);
    const last = p + take === block.length;
    const payloadLength = take + (first && priority ? PRIORITY_LENGTH : 0);
    const f = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + payloadLength);
    writeFrameHeader(f, 0, payloadLength, first ? TYPE_HEADERS : TYPE_CONTINUATION, (first ? flags & (FLAG_END_STREAM | FLAG_PRIORITY) : 0) | (last ? FLAG_END_HEADERS : 0), streamId);
    let o = FRAME_HEADER_LENGTH;
    if (first && priority) o += priority.copy(f, o);
    block.copy(f, o, p, p + take);
    frames.push(f);
    p += take;
    first = false;
  } while (p < block.length);
  return frames;
}
