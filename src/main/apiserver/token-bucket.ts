/**
 * The client-side rate limiter of the main API client (client-go's token bucket, `flowcontrol.
 * NewTokenBucketRateLimiter(qps, burst)`): the bucket starts full with `burst` tokens and refills
 * at `qps` tokens per second up to `burst`; every request takes one token, waiting until one is
 * available. `qps <= 0` disables limiting (every acquire is granted at once).
 *
 * Unlike client-go, waiters have a priority: when a token becomes available it goes to the oldest
 * 'high' waiter before any 'normal' one (the status manager uses this so that a pod's first
 * Running status is written before refreshes of pods already reported). Within a priority,
 * waiters are served in arrival order.
 *
 * Invariants: `tokens` is the balance at `#updatedMs` (monotonic clock), never above `burst`; at
 * most one timer is armed, for when the next token is due, and only while someone waits.
 */
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import { ApiError } from './api-errors.js';

export type RequestPriority = 'high' | 'normal';

export interface TokenBucketOptions {
  qps: number;
  burst: number;
  clock: Clock;
}

/** The role the client and the status manager hold: take one token. */
export interface RequestThrottle {
  /** Resolves when a token was taken; rejects with ERR_API_ABORTED when `signal` aborts first. */
  acquire(priority: RequestPriority, signal?: AbortSignal): Promise<void>;
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

export class TokenBucket implements RequestThrottle {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #updatedMs: number;
  readonly #waiters: Record<RequestPriority, Waiter[]> = { high: [], normal: [] };
  #timer: TimerHandle | undefined;

  constructor(opts: TokenBucketOptions) {
    if (!opts?.clock) throw new TypeError('TokenBucket: clock is required');
    if (!Number.isFinite(opts.qps)) throw new RangeError(`TokenBucket: qps must be a finite number, got ${opts.qps}`);
    if (opts.qps > 0 && (!Number.isInteger(opts.burst) || opts.burst < 1)) throw new RangeError(`TokenBucket: burst must be a positive integer, got ${opts.burst}`);
    this.#qps = opts.qps;
    this.#burst = Math.max(1, opts.burst);
    this.#clock = opts.clock;
    this.#tokens = this.#burst;
    this.#updatedMs = opts.clock.monotonic();
  }

  get unlimited(): boolean {
    return this.#qps <= 0;
  }

  /** Number of callers waiting for a token. */
  get waiting(): number {
    return this.#waiters.high.length + this.#waiters.normal.length;
  }

  /** Takes a token now if one is available and nobody is queued ahead; returns whether it did. */
  tryAcquire(): boolean {
    if (this.unlimited) return true;
    this.#refill();
    if (this.waiting > 0 || this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  acquire(priority: RequestPriority, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(new ApiError('ERR_API_ABORTED', 'request aborted while waiting for the rate limiter'));
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const q = this.#waiters[priority];
          const i = q.indexOf(w);
          if (i >= 0) q.splice(i, 1);
          reject(new ApiError('ERR_API_ABORTED', 'request aborted while waiting for the rate limiter'));
          if (this.waiting === 0) this.#disarm();
        },
      };
      signal?.addEventListener('abort', w.onAbort, { once: true });
      this.#waiters[priority].push(w);
      this.#arm();
    });
  }

  #refill(): void {
    const now = this.#clock.monotonic();
    const elapsed = Math.max(0, now - this.#updatedMs);
    this.#tokens = Math.min(this.#burst, this.#tokens + (elapsed * this.#qps) / 1000);
    this.#updatedMs = now;
  }

  /** Hands out every available token to waiters, high first; re-arms for the next one. */
  #serve(): void {
    this.#timer = undefined;
    this.#refill();
    while (this.#tokens >= 1) {
      const w = this.#waiters.high.shift() ?? this.#waiters.normal.shift();
      if (w === undefined) break;
      this.#tokens -= 1;
      w.signal?.removeEventListener('abort', w.onAbort);
      w.resolve();
    }
    this.#arm();
  }

  #arm(): void {
    if (this.#timer !== undefined || this.waiting === 0) return;
    this.#refill();
    const dueMs = this.#tokens >= 1 ? 0 : Math.ceil(((1 - this.#tokens) * 1000) / this.#qps);
    this.#timer = this.#clock.setTimer(dueMs, () => this.#serve());
  }

  #disarm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }
}
