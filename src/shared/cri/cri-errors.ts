/**
 * Typed CRI errors. gRPC status codes are translated into a {@link CriErrorCode} exactly once,
 * in the client (`cri-client.ts`); everything above tests codes via the predicates here, never
 * messages. Errors crossing a thread boundary travel as {@link WireError} and are rebuilt with
 * {@link criErrorFromWire}.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';

export type CriErrorCode =
  | 'ERR_CRI_NOT_FOUND'
  | 'ERR_CRI_ALREADY_EXISTS'
  | 'ERR_CRI_INVALID_ARGUMENT'
  | 'ERR_CRI_FAILED_PRECONDITION'
  | 'ERR_CRI_UNAVAILABLE'
  | 'ERR_CRI_DEADLINE_EXCEEDED'
  | 'ERR_CRI_CANCELLED'
  | 'ERR_CRI_UNIMPLEMENTED'
  | 'ERR_CRI_RESOURCE_EXHAUSTED'
  | 'ERR_CRI_INTERNAL'
  | 'ERR_CRI_UNKNOWN';

export interface WireError {
  code: string;
  message: string;
}

export class CriError extends Error {
  override readonly name = 'CriError';
  readonly code: CriErrorCode;
  /** The CRI operation that failed, e.g. `RunPodSandbox`. */
  readonly operation: string;

  constructor(code: CriErrorCode, operation: string, message: string) {
    super(message);
    this.code = code;
    this.operation = operation;
  }

  toWire(): WireError {
    return { code: this.code, message: this.message };
  }
}

const FROM_GRPC: ReadonlyMap<number, CriErrorCode> = new Map([
  [GrpcStatus.NOT_FOUND, 'ERR_CRI_NOT_FOUND'],
  [GrpcStatus.ALREADY_EXISTS, 'ERR_CRI_ALREADY_EXISTS'],
  [GrpcStatus.INVALID_ARGUMENT, 'ERR_CRI_INVALID_ARGUMENT'],
  [GrpcStatus.FAILED_PRECONDITION, 'ERR_CRI_FAILED_PRECONDITION'],
  [GrpcStatus.UNAVAILABLE, 'ERR_CRI_UNAVAILABLE'],
  [GrpcStatus.DEADLINE_EXCEEDED, 'ERR_CRI_DEADLINE_EXCEEDED'],
  [GrpcStatus.CANCELLED, 'ERR_CRI_CANCELLED'],
  [GrpcStatus.UNIMPLEMENTED, 'ERR_CRI_UNIMPLEMENTED'],
  [GrpcStatus.RESOURCE_EXHAUSTED, 'ERR_CRI_RESOURCE_EXHAUSTED'],
  [GrpcStatus.INTERNAL, 'ERR_CRI_INTERNAL'],
]);

/** The gRPC status a CRI error code stands for (used by servers such as the simulated runtime). */
export function grpcStatusOf(code: CriErrorCode): number {
  for (const [grpcCode, criCode] of FROM_GRPC) if (criCode === code) return grpcCode;
  return GrpcStatus.UNKNOWN;
}

/** Translate a gRPC ServiceError (or anything thrown by a call) into a CriError. */
export function criErrorFromGrpc(operation: string, err: unknown): CriError {
  if (err instanceof CriError) return err;
  const e = err as { code?: unknown; details?: unknown; message?: unknown } | null;
  const grpcCode = typeof e?.code === 'number' ? e.code : GrpcStatus.UNKNOWN;
  const code = FROM_GRPC.get(grpcCode) ?? 'ERR_CRI_UNKNOWN';
  const detail = typeof e?.details === 'string' && e.details !== '' ? e.details : String(e?.message ?? err);
  return new CriError(code, operation, `${operation}: ${detail}`);
}

export function criErrorFromWire(w: WireError, operation = 'unknown'): CriError {
  const code = (isCriErrorCode(w.code) ? w.code : 'ERR_CRI_UNKNOWN');
  return new CriError(code, operation, w.message);
}

function isCriErrorCode(code: string): code is CriErrorCode {
  return code.startsWith('ERR_CRI_') && [...FROM_GRPC.values(), 'ERR_CRI_UNKNOWN'].includes(code as CriErrorCode);
}

function hasCode(err: unknown, code: CriErrorCode): boolean {
  return err instanceof CriError && err.code === code;
}

export const isNotFound = (err: unknown): boolean => hasCode(err, 'ERR_CRI_NOT_FOUND');
export const isAlreadyExists = (err: unknown): boolean => hasCode(err, 'ERR_CRI_ALREADY_EXISTS');
export const isUnavailable = (err: unknown): boolean => hasCode(err, 'ERR_CRI_UNAVAILABLE');
export const isDeadlineExceeded = (err: unknown): boolean => hasCode(err, 'ERR_CRI_DEADLINE_EXCEEDED');
export const isCancelled = (err: unknown): boolean => hasCode(err, 'ERR_CRI_CANCELLED');
