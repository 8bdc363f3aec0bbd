/**
 * TokenReview and SubjectAccessReview creation for the secure port's delegated authn/authz
 * (the kubelet's webhook authenticator and authorizer talk to the API server the same way:
 * POST authentication.k8s.io/v1 tokenreviews, authorization.k8s.io/v1 subjectaccessreviews).
 * Each review takes a token from the main client's throttle, as the kubelet's do. One attempt:
 * the callers cache answers and turn failures into 401/500 for that request only.
 */
import { ApiError, apiErrorCodeOfStatus } from './api-errors.js';
import type { ApiTransport } from './api-transport.js';
import type { RequestThrottle } from './token-bucket.js';

/** Role interface the authenticator/authorizer hold; fakes implement it in tests. */
export interface ReviewCreator {
  /** POSTs the review object; resolves with the returned object's `status` (an object). */
  createReview(kind: 'TokenReview' | 'SubjectAccessReview', spec: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>>;
}

const PATHS = Object.freeze({
  TokenReview: { path: '/apis/authentication.k8s.io/v1/tokenreviews', apiVersion: 'authentication.k8s.io/v1' },
  SubjectAccessReview: { path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', apiVersion: 'authorization.k8s.io/v1' },
});

export class ApiReviewCreator implements ReviewCreator {
  readonly #transport: ApiTransport;
  readonly #throttle: RequestThrottle;
  readonly #timeoutMs: number;

  constructor(opts: { transport: ApiTransport; throttle: RequestThrottle; timeoutMs?: number }) {
    if (!opts?.transport || !opts.throttle) throw new TypeError('ApiReviewCreator: transport and throttle are required');
    this.#transport = opts.transport;
    this.#throttle = opts.throttle;
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
  }

  async createReview(kind: 'TokenReview' | 'SubjectAccessReview', spec: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const p = PATHS[kind];
    await this.#throttle.acquire('high', signal);
    const res = await this.#transport.request({
      method: 'POST',
      path: p.path,
      body: { apiVersion: p.apiVersion, kind, spec },
      timeoutMs: this.#timeoutMs,
      maxBodyBytes: 1024 * 1024,
      parseBody: true,
      ...(signal ? { signal } : {}),
    });
    if (res.status < 200 || res.status >= 300) throw new ApiError(apiErrorCodeOfStatus(res.status), `create ${kind}: ${res.status}`, res.status);
    const status = (res.body as { status?: unknown } | undefined)?.status;
    return typeof status === 'object' && status !== null ? (status as Record<string, unknown>) : {};
  }
}
