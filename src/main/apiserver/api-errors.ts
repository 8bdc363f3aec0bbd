/**
 * Typed errors of the API-server client. HTTP statuses and transport failures are translated into
 * an {@link ApiErrorCode} exactly once, in the client (`api-client.ts`, `https-transport.ts`);
 * everything above tests codes through the predicates here, never messages.
 */

export type ApiErrorCode =
  /** 404: the object does not exist (any more). */
  | 'ERR_API_NOT_FOUND'
  /** 409: conflict, e.g. a DELETE whose UID precondition no longer holds. */
  | 'ERR_API_CONFLICT'
  /** 410: the requested resourceVersion is too old (compacted): relist. */
  | 'ERR_API_GONE'
  /** 422: invalid; for a status PATCH carrying metadata.uid, the pod has another UID now. */
  | 'ERR_API_INVALID'
  /** 429 after the client's retries. */
  | 'ERR_API_THROTTLED'
  /** 5xx after the client's retries. */
  | 'ERR_API_SERVER'
  /** 401/403. */
  | 'ERR_API_FORBIDDEN'
  /** Any other non-2xx status. */
  | 'ERR_API_STATUS'
  /** Connection refused/reset, TLS failure, request timeout: nothing was answered. */
  | 'ERR_API_UNREACHABLE'
  /** A response body or watch line larger than the configured bound. */
  | 'ERR_API_TOO_LARGE'
  /** A response that is not the JSON object expected. */
  | 'ERR_API_DECODE'
  /** The kubeconfig is missing, unreadable or has no usable cluster/credentials. */
  | 'ERR_API_KUBECONFIG'
  /** The caller aborted the request. */
  | 'ERR_API_ABORTED';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ApiErrorCode;
  /** The HTTP status, when the server answered. */
  readonly httpStatus: number | undefined;

  constructor(code: ApiErrorCode, message: string, httpStatus?: number) {
    super(message);
    this.code = code;
    this.httpStatus = httpStatus;
  }
}

/** The code for a final (not retried further) non-2xx HTTP status. */
export function apiErrorCodeOfStatus(status: number): ApiErrorCode {
  if (status === 404) return 'ERR_API_NOT_FOUND';
  if (status === 409) return 'ERR_API_CONFLICT';
  if (status === 410) return 'ERR_API_GONE';
  if (status === 422) return 'ERR_API_INVALID';
  if (status === 429) return 'ERR_API_THROTTLED';
  if (status === 401 || status === 403) return 'ERR_API_FORBIDDEN';
  if (status >= 500) return 'ERR_API_SERVER';
  return 'ERR_API_STATUS';
}

/** 429 and 5xx: the server is overloaded or failing; the same request may succeed later. */
export function isRetriableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

function codeOf(err: unknown): ApiErrorCode | undefined {
  return err instanceof ApiError ? err.code : undefined;
}

export const isGone = (err: unknown): boolean => codeOf(err) === 'ERR_API_GONE';
export const isNotFound = (err: unknown): boolean => codeOf(err) === 'ERR_API_NOT_FOUND';
export const isConflict = (err: unknown): boolean => codeOf(err) === 'ERR_API_CONFLICT';
export const isInvalid = (err: unknown): boolean => codeOf(err) === 'ERR_API_INVALID';
export const isAborted = (err: unknown): boolean => codeOf(err) === 'ERR_API_ABORTED';

/** A one-line description of any error, for logs. */
export function apiErrorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
