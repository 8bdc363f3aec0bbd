/**
 * The seam between CriClient and the wire for unary calls: 'h2' (unary-transport-h2.ts),
 * 'node-http2' (unary-transport-node-http2.ts) and 'grpc-js' (unary-transport-grpc-js.ts) all
 * satisfy it with the same semantics — a deadline
 * per call, AbortSignal cancellation, gRPC status translated into CriError by
 * `criErrorFromGrpc`, and the operation hook told of every call exactly once.
 */
import type { CriError } from './cri-errors.js';
import type { UnaryMethod } from './cri-methods.js';
import type { CallOptions } from './runtime-service.js';

/**
 * The longest deadline put on the wire (grpc-timeout), in ms: 2^31 - 1 ms rounded down to whole
 * seconds. grpc-js servers (the simulated runtime) read the header into an int32 of
 * milliseconds (`| 0`): 2,147,484 S overflows to a negative timeout and the call fails
 * DEADLINE_EXCEEDED at once. Only StopContainer and ExecSync with grace periods or timeouts of
 * 24.8 days and more reach it; shortening those by less than a second is harmless.
 */
export const MAX_WIRE_TIMEOUT_MS = Math.floor((2 ** 31 - 1) / 1000) * 1000;

/** Reports one finished call to the operation hook (CriClient owns the hook). */
export type UnaryReport = (operation: string, start: number, err: CriError | undefined) => void;

export interface UnaryTransport {
  /**
   * One call of `m` with the serialized request `body`. Settles exactly once: with the deserialized reply, or with a
   * CriError (the same codes on every transport). `timeoutMs` is already clamped.
   */
  unary<Res>(m: UnaryMethod, body: Buffer, opts: CallOptions | undefined, timeoutMs: number, start: number): Promise<Res>;
  /** Resolves once connected; rejects with ERR_CRI_UNAVAILABLE after `timeoutMs`. */
  waitForReady(timeoutMs: number): Promise<void>;
  /** Stops: calls in flight fail (UNAVAILABLE/CANCELLED), later calls fail UNAVAILABLE. Idempotent. */
  close(): void;
}
