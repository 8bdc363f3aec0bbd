/**
 * The transport seam of the API client: one HTTP exchange, or one watch stream, with bounds.
 * `https-transport.ts` implements it over node:https with the kubeconfig's credentials; unit
 * tests implement it in memory. Nothing here knows about rate limits or retries (api-client.ts).
 *
 * Contract for implementations:
 * - A server answer of any status resolves (never throws); only transport failures throw, as
 *   ApiError ERR_API_UNREACHABLE (connect/TLS/reset/timeout), ERR_API_TOO_LARGE (a body or watch
 *   line past its bound) or ERR_API_ABORTED (the caller's signal).
 * - Bodies are parsed as JSON only for 2xx answers with `parseBody`, and for error answers (a
 *   bounded metav1.Status); otherwise they are drained and dropped.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiRequest {
  method: HttpMethod;
  /** Absolute API path, e.g. `/api/v1/namespaces/ns/pods/name/status` (already escaped). */
  path: string;
  query?: Readonly<Record<string, string>>;
  /** Serialised as JSON. */
  body?: unknown;
  contentType?: string;
  /** Bound on the whole exchange (or, for a watch, on the whole stream). */
  timeoutMs: number;
  /** Bound on the response body (for a watch: on each line). */
  maxBodyBytes: number;
  /** Parse a 2xx body as JSON (false: drain it unread). */
  parseBody: boolean;
  signal?: AbortSignal;
}

export interface ApiResponse {
  status: number;
  /** The parsed JSON body (2xx with parseBody, or an error Status), else undefined. */
  body: unknown;
  /** The Retry-After header in ms, when present and sane. */
  retryAfterMs?: number;
}

export interface ApiTransport {
  request(req: ApiRequest): Promise<ApiResponse>;
  /**
   * A watch stream: each newline-delimited JSON object of a 200 answer goes to `onObject` (lines
   * that are not JSON objects are skipped). Resolves when the stream ends — with the 200, or with
   * the non-200 answer the server gave instead of a stream.
   */
  watch(req: ApiRequest, onObject: (obj: Record<string, unknown>) => void): Promise<ApiResponse>;
  /** Closes idle connections; in-flight requests are not affected. Idempotent. */
  close(): void;
}
