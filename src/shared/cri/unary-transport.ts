/**
 * The seam between CriClient and the wire for unary calls: 'h2' (unary-transport-h2.ts) and
 * 'grpc-js' (unary-transport-grpc-js.ts) both satisfy it with the same semantics — a deadline
 * per call, AbortSignal cancellation, gRPC status translated into CriError by
 * `criErrorFromGrpc`, and the operation hook told of every call exactly once.
 */
import type { CriError } from './cri-errors.js';
import type { UnaryMethod } from './cri-methods.js';
import type { CallOptions } from './runtime-service.js';

/** Reports one finished call to the operation hook (CriClient owns the hook). */
export type UnaryReport = (operation: string, start: number, err: CriError | undefined) => void;

export interface UnaryTransport {
  /**
   * One call of `m` with the serialized request `body`. Settles exactly once: with the deserialized reply, or with a
   * CriError (the same codes on both transports). `timeoutMs` is already clamped.
   */
  unary<Res>(m: UnaryMethod, body: Buffer, opts: CallOptions | undefined, timeoutMs: number, start: number): Promise<Res>;
  /** Resolves once connected; rejects with ERR_CRI_UNAVAILABLE after `timeoutMs`. */
  waitForReady(timeoutMs: number): Promise<void>;
  /** Stops: calls in flight fail (UNAVAILABLE/CANCELLED), later calls fail UNAVAILABLE. Idempotent. */
  close(): void;
}
