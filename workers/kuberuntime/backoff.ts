/**
 * Per-key exponential backoff: the kubelet's flowcontrol.Backoff (pkg/util/flowcontrol/backoff.go)
 * as used for CrashLoopBackOff and image pulls: initial 10 s, doubling on each failure, capped at
 * 5 min; an entry whose last failure is older than 2 × max (10 min) is forgotten, so the next
 * failure starts again at the initial delay. Jitter is `random() × jitterFactor × delay` (the
 * kubelet uses factor 0).
 *
 * Event times (container finishedAt) come from the runtime's wall clock, so elapsed time since
 * an event is wall-clock now − event. Unlike the kubelet, a wall-clock step cannot freeze a
 * backoff: elapsed time is also measured on the injected Clock's monotonic time since this
 * process first saw the event (or since the last `next()`), and the larger of the two counts.
 * After a step back of an hour the wall-clock difference is an hour short, but the monotonic one
 * still lets the container restart when its delay is over (the kubelet would wait the hour).
 */
import type { Clock, Random } from '../../src/shared/clock/clock.js';
import { nextBackoffMs } from '../../src/shared/backoff/exponential-backoff.js';

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  jitterFactor?: number;
  clock: Clock;
  random?: Random;
}

interface Entry {
  /** The current delay. */
  backoffMs: number;
  /** When `next()` last ran for this key (clock.now()). */
  lastUpdateMs: number;
  /** The same moment on clock.monotonic(). */
  lastUpdateMono: number;
  /** The last event asked about, and when (monotonic) it was first asked about. */
  seen?: { eventMs: number; monoMs: number };
}

export class Backoff {
  readonly #opts: Required<Omit<BackoffOptions, 'random'>> & { random: Random };
  readonly #entries = new Map<string, Entry>();

  constructor(opts: BackoffOptions) {
    if (!(opts.initialMs > 0)) throw new RangeError(`Backoff: initialMs must be > 0, got ${opts.initialMs}`);
    if (!(opts.maxMs >= opts.initialMs)) throw new RangeError(`Backoff: maxMs must be >= initialMs, got ${opts.maxMs}`);
    this.#opts = { jitterFactor: 0, random: () => 0, ...opts };
  }

  /** The current delay for `key` (0 when none). */
  get(key: string): number {
    return this.#entries.get(key)?.backoffMs ?? 0;
  }

  /** Record a failure at `eventMs`: start at the initial delay, or double (capped). */
  next(key: string, eventMs: number): void {
    const { initialMs, maxMs, clock } = this.#opts;
    const e = this.#entries.get(key);
    if (!e || this.#hasExpired(eventMs, e)) {
      this.#entries.set(key, { backoffMs: initialMs + this.#jitter(initialMs), lastUpdateMs: clock.now(), lastUpdateMono: clock.monotonic() });
    } else {
      e.backoffMs = nextBackoffMs(e.backoffMs, { maxMs, extraMs: this.#jitter(e.backoffMs) });
      e.lastUpdateMs = clock.now();
      e.lastUpdateMono = clock.monotonic();
    }
  }

  /** Record a failure that happens now (image pulls: the kubelet passes Clock.Now()). */
  nextNow(key: string): void {
    this.next(key, this.#opts.clock.now());
  }

  /** Whether `key` is still backing off from a failure that happened at `eventMs` (IsInBackOffSince). */
  isInBackOffSince(key: string, eventMs: number): boolean {
    return this.remainingSince(key, eventMs) > 0;
  }

  /** Ms left until the backoff from the failure at `eventMs` expires (0 when not backing off). */
  remainingSince(key: string, eventMs: number): number {
    const e = this.#entries.get(key);
    if (!e || this.#hasExpired(eventMs, e)) return 0;
    const mono = this.#opts.clock.monotonic();
    if (e.seen?.eventMs !== eventMs) e.seen = { eventMs, monoMs: mono };
    const elapsed = Math.max(this.#opts.clock.now() - eventMs, mono - e.seen.monoMs);
    return Math.max(0, e.backoffMs - elapsed);
  }

  /** IsInBackOffSinceUpdate: backing off counted from the last `next()` (image pulls). */
  isInBackOffSinceUpdate(key: string): boolean {
    return this.remainingSinceUpdate(key) > 0;
  }

  remainingSinceUpdate(key: string): number {
    const e = this.#entries.get(key);
    if (!e || this.#hasExpired(this.#opts.clock.now(), e)) return 0;
    return Math.max(0, e.backoffMs - this.#sinceUpdate(e));
  }

  /** Forget entries whose last failure is older than 2 × max (the kubelet's GC). */
  gc(): void {
    const now = this.#opts.clock.now();
    for (const [k, e] of this.#entries) if (this.#hasExpired(now, e)) this.#entries.delete(k);
  }

  /** Forget every key starting with `prefix` (a pod's entries when it is cleaned up). */
  forgetPrefix(prefix: string): void {
    for (const k of this.#entries.keys()) if (k.startsWith(prefix)) this.#entries.delete(k);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Time since the last `next()`: the larger of the wall-clock and the monotonic measure. */
  #sinceUpdate(e: Entry): number {
    return Math.max(this.#opts.clock.now() - e.lastUpdateMs, this.#opts.clock.monotonic() - e.lastUpdateMono);
  }

  /** The entry is stale at `eventMs` (wall) — or by monotonic time since its last update. */
  #hasExpired(eventMs: number, e: Entry): boolean {
    return eventMs - e.lastUpdateMs > this.#opts.maxMs * 2 || this.#opts.clock.monotonic() - e.lastUpdateMono > this.#opts.maxMs * 2;
  }

  #jitter(delayMs: number): number {
    return this.#opts.jitterFactor > 0 ? this.#opts.random() * this.#opts.jitterFactor * delayMs : 0;
  }
}

export { formatGoDuration } from '../../src/shared/clock/go-duration.js';
