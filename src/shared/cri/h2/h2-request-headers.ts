/**
 * The HPACK header block of a unary gRPC request (gRPC over HTTP/2, "Requests"), built once per
 * method: only `grpc-timeout` varies per call. Encoded statelessly — static-table indexes and
 * literals without indexing (RFC 7541 §6.1, §6.2.2), no Huffman, never a dynamic table entry —
 * so the peer's SETTINGS_HEADER_TABLE_SIZE (even 0) never matters to this side.
 */
import { writeHpackInteger } from '../../hpack/hpack-primitives.js';
import { grpcTimeoutValue } from '../grpc-wire.js';

function hpackString(out: number[], s: string): void {
  const bytes = Buffer.from(s, 'latin1');
  writeHpackInteger(out, 0, 7, bytes.length);
  for (const b of bytes) out.push(b);
}

/** Literal without indexing, name from the static table (4-bit prefix index). */
function literalIndexedName(out: number[], nameIndex: number, value: string): void {
  writeHpackInteger(out, 0x00, 4, nameIndex);
  hpackString(out, value);
}

/** Literal without indexing, new name. */
function literalNewName(out: number[], name: string, value: string): void {
  out.push(0x00);
  hpackString(out, name);
  hpackString(out, value);
}

/**
 * Every header of a request to `path` except grpc-timeout:
 * `:method POST` (static 3), `:scheme http` (static 6), `:path` (name 4), `:authority localhost`
 * (name 1), `content-type application/grpc` (name 31), `te trailers`.
 */
export function requestHeaderPrefix(path: string, authority = 'localhost'): Buffer {
  const out: number[] = [0x83, 0x86];
  literalIndexedName(out, 4, path);
  literalIndexedName(out, 1, authority);
  literalIndexedName(out, 31, 'application/grpc');
  literalNewName(out, 'te', 'trailers');
  return Buffer.from(out);
}

/** `grpc-timeout` as a literal without indexing, new name: 0x00, len, name, then the value. */
const TIMEOUT_NAME = (() => {
  const out: number[] = [0x00];
  hpackString(out, 'grpc-timeout');
  return Buffer.from(out);
})();

/** Longest encoded grpc-timeout field: name part + 1 length octet + 8 digits + unit. */
export const MAX_TIMEOUT_FIELD_BYTES = TIMEOUT_NAME.length + 1 + 9;



/** Writes the grpc-timeout field at `off`; returns the new offset. */
export function writeTimeoutField(buf: Buffer, off: number, ms: number): number {
  off += TIMEOUT_NAME.copy(buf, off);
  const value = grpcTimeoutValue(ms);
  buf[off++] = value.length; // ≤ 9 < 127: one octet, H = 0.
  off += buf.write(value, off, 'latin1');
  return off;
}
