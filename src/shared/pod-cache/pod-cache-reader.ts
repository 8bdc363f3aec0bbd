/**
 * PodCacheReader over the shared cache, including the blocking reads: getNewerThan waits with
 * Atomics.waitAsync on the NOTIFY word (writers Atomics.add + Atomics.notify it after every
 * publish and updateTime). One reader per thread keeps ONE pending waitAsync for all of that
 * thread's subscriptions and re-checks them on each wake, so thousands of pending
 * getNewerThan calls cost one waiter, not thousands (no thundering herd of V8 waiters).
 *
 * No lost wake-ups: a round reads the generation, then checks every subscription, then waits
 * for the generation to move; a publish after the read changes NOTIFY, so waitAsync returns
 * 'not-equal' at once.
 *
 * A pending Atomics.waitAsync does not keep a Node thread alive; while this thread has waits
 * pending, a ref'd MessagePort does (like a blocked Go GetNewerThan keeps its goroutine), so a
 * worker whose only work is waiting on the cache does not exit under its waiters.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { emptyPodStatus } from './runtime-pod-status.js';
import { CacheError } from './pod-cache-errors.js';
import { H } from './pod-cache-layout.js';
import type { CacheEntry, PodCacheReader, PodCacheStats } from './pod-cache.js';
import type { SharedPodCache } from './pod-cache-shared.js';

type WaitAsyncResult = { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
type WaitAsyncFn = (ta: Int32Array, index: number, value: number, timeout?: number) => WaitAsyncResult;

/** Atomics.waitAsync exists in every Node this project supports (>= 20.10); lib ES2023 lacks its type. */
function getWaitAsync(): WaitAsyncFn {
  const fn = (Atomics as unknown as { waitAsync?: WaitAsyncFn }).waitAsync;
  if (typeof fn !== 'function') {
    throw new CacheError('ERR_CACHE_INVALID_OPTION', 'Atomics.waitAsync is unavailable; shardlet needs Node >= 20.10');
  }
  return fn;
}

interface Subscription {
  uid: string;
  minTimestampMs: number;
  resolve: (e: CacheEntry) => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

export interface ReaderOptions {
  /** Monotonic ms for getNewerThanSync deadlines (default performance.now). */
  monotonicMs?: () => number;
}

export class SharedPodCacheReader implements PodCacheReader {
  readonly #cache: SharedPodCache;
  readonly #waitAsync: WaitAsyncFn;
  readonly #monotonicMs: () => number;
  readonly #subs = new Set<Subscription>();
  #looping = false;
  #keepAlive: MessagePort | undefined;

  constructor(cache: SharedPodCache, opts: ReaderOptions = {}) {
    this.#cache = cache;
    this.#waitAsync = getWaitAsync();
    this.#monotonicMs = opts.monotonicMs ?? (() => performance.now());
  }

  /** Ref'd only while waits are pending; created on first use. */
  #holdThread(hold: boolean): void {
    if (!this.#keepAlive) {
      if (!hold) return;
      this.#keepAlive = new MessageChannel().port1;
      this.#keepAlive.on('message', () => {});
    }
    if (hold) this.#keepAlive.ref();
    else this.#keepAlive.unref();
  }

  get(uid: string): CacheEntry | undefined {
    return this.#cache.get(uid);
  }

  uids(): string[] {
    return this.#cache.uids();
  }

  globalTimestampMs(): number | undefined {
    return this.#cache.globalTimestampMs();
  }

  stats(): PodCacheStats {
    return this.#cache.stats();
  }

  /** The pod's entry timestamp without decoding the entry, or undefined without one. */
  entryTimestamp(uid: string): number | undefined {
    return this.#cache.entryTimestamp(uid);
  }

  /**
   * A count of entry changes (set, delete, recovery) made by threads other than this one: equal
   * readings mean no other thread changed any entry in between (pod-cache-layout.ts ENTRY_WRITES).
   */
  foreignWrites(): number {
    return this.#cache.foreignWrites();
  }

  /** Number of dead-thread lock recoveries so far (moves when entries were repaired). */
  recoveries(): number {
    return this.#cache.recoveries();
  }

  /** Number of getNewerThan calls still waiting on this thread (for tests and metrics). */
  get pendingWaits(): number {
    return this.#subs.size;
  }

  getNewerThan(uid: string, minTimestampMs: number, signal?: AbortSignal): Promise<CacheEntry> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let ready: CacheEntry | undefined;
    try {
      ready = this.#newerThan(uid, minTimestampMs);
    } catch (err) {
      return Promise.reject(err);
    }
    if (ready) return Promise.resolve(ready);
    return new Promise<CacheEntry>((resolve, reject) => {
      const sub: Subscription = { uid, minTimestampMs, resolve, reject, signal, onAbort: undefined };
      if (signal) {
        sub.onAbort = () => {
          this.#settle(sub);
          reject(signal.reason);
        };
        signal.addEventListener('abort', sub.onAbort, { once: true });
      }
      this.#subs.add(sub);
      this.#holdThread(true);
      if (!this.#looping) void this.#loop();
    });
  }

  getNewerThanSync(uid: string, minTimestampMs: number, timeoutMs = Infinity): CacheEntry | undefined {
    const deadline = this.#monotonicMs() + timeoutMs;
    const i32 = this.#cache.int32;
    for (;;) {
      const gen = Atomics.load(i32, H.NOTIFY);
      const e = this.#newerThan(uid, minTimestampMs);
      if (e) return e;
      const left = deadline - this.#monotonicMs();
      if (left <= 0) return undefined;
      Atomics.wait(i32, H.NOTIFY, gen, left);
    }
  }

  /** The kubelet's getIfNewerThan: the entry (or an empty one) once the cache is newer than t. */
  #newerThan(uid: string, t: number): CacheEntry | undefined {
    // Global timestamp first: every entry read after it is at least as new (cache invariant).
    const g = this.#cache.globalTimestampMs();
    const globalNewer = g !== undefined && g > t;
    const ts = this.#cache.entryTimestamp(uid);
    if (ts !== undefined && (ts > t || globalNewer)) {
      const e = this.#cache.get(uid);
      if (e && (e.timestampMs > t || globalNewer)) return e;
    }
    if (globalNewer && this.#cache.entryTimestamp(uid) === undefined) {
      // Read after the global timestamp (updateTime stores UNSTORED before moving it).
      const unstored = this.#cache.unstored();
      const error = unstored > 0 ? { code: 'ERR_CACHE_FULL', message: `pod cache full: ${unstored} listed pods have no status; this pod's is unknown` } : null;
      return { status: emptyPodStatus(uid), error, timestampMs: g };
    }
    return undefined;
  }

  async #loop(): Promise<void> {
    this.#looping = true;
    const i32 = this.#cache.int32;
    try {
      while (this.#subs.size > 0) {
        const gen = Atomics.load(i32, H.NOTIFY);
        for (const sub of this.#subs) {
          let e: CacheEntry | undefined;
          try {
            e = this.#newerThan(sub.uid, sub.minTimestampMs);
          } catch (err) {
            this.#settle(sub);
            sub.reject(err);
            continue;
          }
          if (e) {
            this.#settle(sub);
            sub.resolve(e);
          }
        }
        if (this.#subs.size === 0) break;
        const r = this.#waitAsync(i32, H.NOTIFY, gen);
        if (r.async) await r.value;
      }
    } finally {
      this.#looping = false;
    }
  }

  #settle(sub: Subscription): void {
    this.#subs.delete(sub);
    if (sub.signal && sub.onAbort) sub.signal.removeEventListener('abort', sub.onAbort);
    // The loop may still sit in waitAsync until the next publish; that must not hold the thread.
    if (this.#subs.size === 0) this.#holdThread(false);
  }
}
