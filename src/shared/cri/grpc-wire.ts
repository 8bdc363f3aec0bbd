/**
 * gRPC over HTTP/2 (grpc/doc/PROTOCOL-HTTP2.md), the parts every HTTP/2 transport of the CRI
 * client shares: status codes (grpc/doc/statuscodes.md; the same numbers as grpc-js's `status`
 * enum, so `criErrorFromGrpc` translates every transport's errors into the same CriError codes,
 * kept here so a transport need not load grpc-js), grpc-timeout values, grpc-message decoding,
 * and the mappings of an HTTP status and of a RST_STREAM code to a gRPC code.
 */
import { MAX_WIRE_TIMEOUT_MS } from './unary-transport.js';
export const GrpcCode = Object.freeze({
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
});

/** The longest grpc-timeout sent, in seconds (see MAX_WIRE_TIMEOUT_MS); the local timer keeps the exact deadline. */
const MAX_TIMEOUT_SECONDS = MAX_WIRE_TIMEOUT_MS / 1000;

/**
 * gRPC's TimeoutValue: at most 8 digits and a unit. Milliseconds up to 99,999,999 (27.7 h),
 * then seconds rounded up, at most MAX_TIMEOUT_SECONDS.
 */
export function grpcTimeoutValue(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 100_000_000) return `${whole}m`;
  return `${Math.min(MAX_TIMEOUT_SECONDS, Math.ceil(whole / 1000))}S`;
}

/** Percent-decodes grpc-message (gRPC over HTTP/2: "percent-encoded UTF-8"); malformed escapes stay as they are. */
export function decodeGrpcMessage(s: string): string {
  if (!s.includes('%')) return s;
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25 && i + 2 < s.length + 0 && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(c & 0xff);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** gRPC over HTTP/2: an HTTP status without grpc-status maps to this gRPC code. */
export function codeOfHttpStatus(status: string): number {
  switch (status) {
    case '400': return GrpcCode.INTERNAL;
    case '401': return GrpcCode.UNAUTHENTICATED;
    case '403': return GrpcCode.PERMISSION_DENIED;
    case '404': return GrpcCode.UNIMPLEMENTED;
    case '429': case '502': case '503': case '504': return GrpcCode.UNAVAILABLE;
    default: return GrpcCode.UNKNOWN;
  }
}

/** gRPC over HTTP/2's mapping of a received RST_STREAM error code. */
export function grpcCodeOfRst(code: number): number {
  switch (code) {
    case 0x7 /* REFUSED_STREAM */: return GrpcCode.UNAVAILABLE;
    case 0x8 /* CANCEL */: return GrpcCode.CANCELLED;
    case 0xb /* ENHANCE_YOUR_CALM */: return GrpcCode.RESOURCE_EXHAUSTED;
    case 0xc /* INADEQUATE_SECURITY */: return GrpcCode.PERMISSION_DENIED;
    default: return GrpcCode.INTERNAL;
  }
}
