/**
 * gRPC status codes (grpc/doc/statuscodes.md) as the HTTP/2 transport produces them. The same
 * numbers as grpc-js's `status` enum, so `criErrorFromGrpc` translates both transports' errors
 * into the same CriError codes; kept here so the transport does not load grpc-js.
 */
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
