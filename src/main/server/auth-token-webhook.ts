/**
 * Bearer-token authentication through the API server's TokenReview
 * (--authentication-token-webhook), with the kubelet's cache: an answer (authenticated or not)
 * is kept for `cacheTtlMs` (--authentication-token-webhook-cache-ttl, default 2m) keyed by the
 * token's SHA-256 (the token itself is never stored); a failed review is not cached.
 */
import crypto from 'node:crypto';
import type { Clock } from '../../shared/clock/clock.js';
import type { ReviewCreator } from '../apiserver/api-reviews.js';
import { TtlCache } from './auth-ttl-cache.js';
import type { Authenticator, AuthnResult, RequestCredentials, UserInfo } from './auth-types.js';

export const TOKEN_WEBHOOK_DEFAULTS = Object.freeze({ cacheTtlMs: 120_000, maxEntries: 10_000, maxTokenBytes: 16 * 1024 });

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

function stringArray(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export class TokenReviewAuthenticator implements Authenticator {
  readonly #reviews: ReviewCreator;
  readonly #cache: TtlCache<AuthnResult>;
  readonly #ttlMs: number;

  constructor(opts: { reviews: ReviewCreator; clock: Clock; cacheTtlMs?: number; maxEntries?: number }) {
    if (!opts?.reviews || !opts.clock) throw new TypeError('TokenReviewAuthenticator: reviews and clock are required');
    this.#reviews = opts.reviews;
    this.#ttlMs = opts.cacheTtlMs ?? TOKEN_WEBHOOK_DEFAULTS.cacheTtlMs;
    this.#cache = new TtlCache({ clock: opts.clock, maxEntries: opts.maxEntries ?? TOKEN_WEBHOOK_DEFAULTS.maxEntries });
  }

  async authenticate(creds: RequestCredentials): Promise<AuthnResult> {
    const token = bearerToken(creds.authorization);
    if (token === undefined) return { kind: 'none' };
    if (token.length > TOKEN_WEBHOOK_DEFAULTS.maxTokenBytes) return { kind: 'error', reason: 'token too long' };
    const key = crypto.createHash('sha256').update(token).digest('hex');
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    let status: Record<string, unknown>;
    try {
      status = await this.#reviews.createReview('TokenReview', { token });
    } catch (err) {
      return { kind: 'error', reason: `token review failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    const result = resultOf(status);
    this.#cache.set(key, result, this.#ttlMs);
    return result;
  }
}

function resultOf(status: Record<string, unknown>): AuthnResult {
  if (status['authenticated'] !== true) {
    const e = status['error'];
    return { kind: 'error', reason: typeof e === 'string' && e !== '' ? e.slice(0, 500) : 'token not authenticated' };
  }
  const u = (status['user'] ?? {}) as Record<string, unknown>;
  const name = typeof u['username'] === 'string' ? u['username'] : '';
  if (name === '') return { kind: 'error', reason: 'token review returned no user name' };
  const extra: Record<string, string[]> = {};
  if (typeof u['extra'] === 'object' && u['extra'] !== null) {
    for (const [k, v] of Object.entries(u['extra'] as Record<string, unknown>)) extra[k] = stringArray(v);
  }
  const user: UserInfo = { name, uid: typeof u['uid'] === 'string' ? u['uid'] : '', groups: stringArray(u['groups']), extra };
  return { kind: 'user', user };
}
