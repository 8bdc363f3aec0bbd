/**
 * Header-block framing on the receive side (RFC 9113 §4.3, §6.2, §6.10): padding and priority
 * fields stripped from HEADERS, CONTINUATION fragments gathered into one block, bounded.
 *
 * Invariants: at most one block is open at a time (a frame of any other kind or stream while
 * it is open is a connection error the caller raises: see `open`); the gathered fragments never
 * exceed `maxBlockBytes` (the caller's error past it), so a peer cannot grow memory with an
 * endless CONTINUATION chain.
 */
import { Flag, H2Error } from './h2-frames.js';

/** A framing violation: the caller turns it into a connection error with `code`. */
export interface FramingError {
  readonly code: number;
  readonly message: string;
}

/** A complete header block of one stream. */
export interface HeaderBlock {
  readonly streamId: number;
  readonly endStream: boolean;
  readonly block: Buffer;
}

/**
 * The payload of a DATA or HEADERS frame without its padding (and `extraHead` octets of
 * priority fields after the pad length), or a framing error.
 */
export function unpad(flags: number, payload: Buffer, extraHead: number): Buffer | FramingError {
  let start = extraHead;
  let end = payload.length;
  if (flags & Flag.PADDED) {
    if (payload.length < 1) return { code: H2Error.FRAME_SIZE_ERROR, message: 'padded frame without pad length' };
    start += 1;
    end -= payload[0] ?? 0;
  }
  if (end < start) return { code: H2Error.PROTOCOL_ERROR, message: 'padding longer than the frame' };
  return payload.subarray(start, end);
}

export function isFramingError(v: unknown): v is FramingError {
  return typeof v === 'object' && v !== null && !Buffer.isBuffer(v) && 'code' in v;
}

export class HeaderBlockAssembler {
  readonly #maxBlockBytes: number;
  /** Stream of the block being gathered, 0 when none. */
  #streamId = 0;
  #endStream = false;
  #parts: Buffer[] = [];
  #bytes = 0;

  constructor(maxBlockBytes: number) {
    this.#maxBlockBytes = maxBlockBytes;
  }

  /** Whether a block waits for CONTINUATION (every other frame is then a connection error). */
  get open(): boolean {
    return this.#streamId !== 0;
  }

  /** A HEADERS frame: the complete block, null while CONTINUATION must follow, or a framing error. */
  headers(flags: number, streamId: number, payload: Buffer): HeaderBlock | null | FramingError {
    const fragment = unpad(flags, payload, flags & Flag.PRIORITY ? 5 : 0);
    if (isFramingError(fragment)) return fragment;
    const endStream = (flags & Flag.END_STREAM) !== 0;
    if (flags & Flag.END_HEADERS) return { streamId, endStream, block: fragment };
    if (fragment.length > this.#maxBlockBytes) return this.#tooBig();
    this.#streamId = streamId;
    this.#endStream = endStream;
    // Copied: the socket chunk it aliases is not kept past this frame.
    this.#parts = [Buffer.from(fragment)];
    this.#bytes = fragment.length;
    return null;
  }

  /** A CONTINUATION frame: the complete block, null while more must follow, or a framing error. */
  continuation(flags: number, streamId: number, payload: Buffer): HeaderBlock | null | FramingError {
    if (this.#streamId === 0 || streamId !== this.#streamId) return { code: H2Error.PROTOCOL_ERROR, message: 'unexpected CONTINUATION' };
    this.#bytes += payload.length;
    if (this.#bytes > this.#maxBlockBytes) return this.#tooBig();
    this.#parts.push(Buffer.from(payload));
    if ((flags & Flag.END_HEADERS) === 0) return null;
    const done: HeaderBlock = { streamId, endStream: this.#endStream, block: Buffer.concat(this.#parts) };
    this.#streamId = 0;
    this.#parts = [];
    this.#bytes = 0;
    return done;
  }

  #tooBig(): FramingError {
    this.#streamId = 0;
    this.#parts = [];
    this.#bytes = 0;
    return { code: H2Error.ENHANCE_YOUR_CALM, message: `header block above ${this.#maxBlockBytes} bytes` };
  }
}
