/**
 * Authorization modes of the secure port (--authorization-mode): `AlwaysAllow`, and `Webhook`,
 * which asks the API server with a SubjectAccessReview per distinct (user, attributes) and
 * caches the answer as the kubelet does (--authorization-webhook-cache-authorized-ttl 5m,
 * --authorization-webhook-cache-unauthorized-ttl 30s). A failed review is not cached and makes
 * that request 500 ("Authorization error (...)").
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { ReviewCreator } from '../apiserver/api-reviews.js';
import { TtlCache } from './auth-ttl-cache.js';
import type { Authorizer, AuthzDecision, RequestAttributes } from './auth-types.js';

export const SAR_DEFAULTS = Object.freeze({ authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000, maxEntries: 10_000 });

export const alwaysAllow: Authorizer = Object.freeze({ authorize: async (): Promise<AuthzDecision> => ({ kind: 'allow' }) });

export class SubjectAccessReviewAuthorizer implements Authorizer {
  readonly #reviews: ReviewCreator;
  readonly #cache: TtlCache<AuthzDecision>;
  readonly #authorizedTtlMs: number;
  readonly #unauthorizedTtlMs: number;

  constructor(opts: { reviews: ReviewCreator; clock: Clock; authorizedTtlMs?: number; unauthorizedTtlMs?: number; maxEntries?: number }) {
    if (!opts?.reviews || !opts.clock) throw new TypeError('SubjectAccessReviewAuthorizer: reviews and clock are required');
    this.#reviews = opts.reviews;
    this.#authorizedTtlMs = opts.authorizedTtlMs ?? SAR_DEFAULTS.authorizedTtlMs;
    this.#unauthorizedTtlMs = opts.unauthorizedTtlMs ?? SAR_DEFAULTS.unauthorizedTtlMs;
    this.#cache = new TtlCache({ clock: opts.clock, maxEntries: opts.maxEntries ?? SAR_DEFAULTS.maxEntries });
  }

  async authorize(a: RequestAttributes): Promise<AuthzDecision> {
    const spec = {
      user: a.user.name,
      uid: a.user.uid,
      groups: [...a.user.groups],
      extra: a.user.extra,
      resourceAttributes: { namespace: a.namespace, verb: a.verb, group: a.apiGroup, version: a.apiVersion, resource: a.resource, subresource: a.subresource, name: a.name },
    };
    const key = JSON.stringify(spec);
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    let status: Record<string, unknown>;
    try {
      status = await this.#reviews.createReview('SubjectAccessReview', spec);
    } catch (err) {
      return { kind: 'error', reason: `subject access review failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    const reason = typeof status['reason'] === 'string' ? status['reason'].slice(0, 500) : '';
    if (status['allowed'] === true) {
      const d: AuthzDecision = { kind: 'allow' };
      this.#cache.set(key, d, this.#authorizedTtlMs);
      return d;
    }
    const d: AuthzDecision = { kind: 'deny', reason };
    this.#cache.set(key, d, this.#unauthorizedTtlMs);
    return d;
  }
}
