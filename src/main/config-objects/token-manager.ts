/**
 * Projected service-account tokens (the kubelet's token manager, pkg/kubelet/token): one
 * TokenRequest per (pod, audience, expirationSeconds), bound to the pod, through the main API
 * client (its QPS budget is shared with pod status writes), refreshed when 80% of its lifetime
 * has passed or a day after it was issued, whichever is first (the kubelet's requiresRefresh,
 * without its jitter), and forgotten when the pod lets go of it.
 *
 * Per token, a small state machine:
 *   requesting ─ok─▶ valid ─(80% of lifetime, timer on the injected Clock)─▶ refreshing ─ok─▶ valid
 *       │fail                                                                    │fail
 *       ▼                                                                        ▼
 *   retry after backoff (1 s doubling to 30 s)            valid (old token kept while it lasts), retry
 * Every change of the token handed out calls `onChange(podUID)` (the pod is resynced with it).
 * Lifetime = expirationTimestamp − the time the request was sent (the server may grant more
 * than asked for, e.g. its extended kube-api-access tokens).
 */
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { apiErrorMessage } from '../apiserver/api-errors.js';
import type { TokenIssuer } from '../apiserver/api-roles.js';
import type { ObjectLookup, ServiceAccountToken } from '../../shared/protocol/api-object-snapshot.js';
import { tokenKey } from '../../shared/protocol/api-object-snapshot.js';
import { nextBackoffMs } from '../../shared/backoff/exponential-backoff.js';

export const TOKEN_DEFAULTS = Object.freeze({
  /** Refresh once this share of the lifetime has passed (the kubelet's 80%). */
  refreshAtFraction: 0.8,
  /** ... and at the latest a day after it was issued (the kubelet's maxTTL: extended tokens live a year). */
  maxRefreshMs: 24 * 3600_000,
  retryInitialMs: 1_000,
  retryMaxMs: 30_000,
});

export interface TokenPodRef {
  uid: string;
  name: string;
  namespace: string;
  serviceAccountName: string;
}

export interface TokenManagerOptions {
  issuer: TokenIssuer;
  clock: Clock;
  logger: Logger;
  onChange(podUID: string): void;
}

interface TokenEntry {
  pod: TokenPodRef;
  audience: string;
  expirationSeconds: number;
  lookup: ObjectLookup<ServiceAccountToken>;
  timer: TimerHandle | undefined;
  inFlight: boolean;
  retryMs: number;
  abort: AbortController;
}

export class TokenManager {
  readonly #o: TokenManagerOptions;
  /** podUID → tokenKey → entry. */
  readonly #pods = new Map<string, Map<string, TokenEntry>>();
  #closed = false;

  constructor(opts: TokenManagerOptions) {
    if (!opts?.issuer || !opts.clock || !opts.logger || typeof opts.onChange !== 'function') throw new TypeError('TokenManager: issuer, clock, logger and onChange are required');
    this.#o = opts;
  }

  /** Tokens held (all pods). */
  get size(): number {
    let n = 0;
    for (const m of this.#pods.values()) n += m.size;
    return n;
  }

  /**
   * The pod needs exactly these tokens (by tokenKey): new ones are requested, ones it no longer
   * refers to are dropped.
   */
  setPodTokens(pod: TokenPodRef, wanted: ReadonlyMap<string, { audience: string; expirationSeconds: number }>): void {
    if (this.#closed) return;
    let mine = this.#pods.get(pod.uid);
    if (!mine) this.#pods.set(pod.uid, (mine = new Map()));
    for (const [key, e] of mine) {
      if (!wanted.has(key)) {
        this.#drop(e);
        mine.delete(key);
      }
    }
    for (const [key, ref] of wanted) {
      if (mine.has(key)) continue;
      const e: TokenEntry = { pod, audience: ref.audience, expirationSeconds: ref.expirationSeconds, lookup: { state: 'pending' }, timer: undefined, inFlight: false, retryMs: TOKEN_DEFAULTS.retryInitialMs, abort: new AbortController() };
      mine.set(key, e);
      void this.#request(e);
    }
    if (mine.size === 0) this.#pods.delete(pod.uid);
  }

  /** Drops every token of the pod (it was killed or removed). */
  releasePod(uid: string): void {
    const mine = this.#pods.get(uid);
    if (!mine) return;
    for (const e of mine.values()) this.#drop(e);
    this.#pods.delete(uid);
  }

  lookup(uid: string, key: string): ObjectLookup<ServiceAccountToken> {
    return this.#pods.get(uid)?.get(key)?.lookup ?? { state: 'pending' };
  }

  /** Stops every timer and request. Idempotent. */
  close(): void {
    this.#closed = true;
    for (const uid of [...this.#pods.keys()]) this.releasePod(uid);
  }

  #drop(e: TokenEntry): void {
    e.timer?.cancel();
    e.timer = undefined;
    e.abort.abort();
  }

  #schedule(e: TokenEntry, ms: number): void {
    e.timer?.cancel();
    e.timer = this.#o.clock.setTimer(ms, () => {
      e.timer = undefined;
      void this.#request(e);
    }, { unref: true });
  }

  async #request(e: TokenEntry): Promise<void> {
    if (e.inFlight || e.abort.signal.aborted) return;
    e.inFlight = true;
    const sentAt = this.#o.clock.now();
    try {
      const t = await this.#o.issuer.createServiceAccountToken(
        { namespace: e.pod.namespace, serviceAccountName: e.pod.serviceAccountName, audience: e.audience, expirationSeconds: e.expirationSeconds, pod: { name: e.pod.name, uid: e.pod.uid } },
        { signal: e.abort.signal },
      );
      if (e.abort.signal.aborted) return;
      const exp = Date.parse(t.expirationTimestamp);
      const lifetime = Number.isFinite(exp) ? exp - sentAt : e.expirationSeconds * 1000;
      e.lookup = { state: 'found', object: t };
      e.retryMs = TOKEN_DEFAULTS.retryInitialMs;
      this.#schedule(e, Math.max(1_000, Math.min(lifetime * TOKEN_DEFAULTS.refreshAtFraction, TOKEN_DEFAULTS.maxRefreshMs)));
      this.#o.logger.v(2).info('service account token issued', { podUID: e.pod.uid, serviceAccount: e.pod.serviceAccountName, audience: e.audience, expirationTimestamp: t.expirationTimestamp });
      this.#o.onChange(e.pod.uid);
    } catch (err) {
      if (e.abort.signal.aborted) return;
      const message = apiErrorMessage(err);
      this.#o.logger.error('TokenRequest failed', { podUID: e.pod.uid, serviceAccount: e.pod.serviceAccountName, error: message, retryMs: e.retryMs });
      // A valid token stays in use while the refresh is retried; without one the pod waits.
      if (e.lookup.state !== 'found') {
        e.lookup = { state: 'error', message };
        this.#o.onChange(e.pod.uid);
      }
      this.#schedule(e, e.retryMs);
      e.retryMs = nextBackoffMs(e.retryMs, { maxMs: TOKEN_DEFAULTS.retryMaxMs });
    } finally {
      e.inFlight = false;
    }
  }
}

export { tokenKey };
