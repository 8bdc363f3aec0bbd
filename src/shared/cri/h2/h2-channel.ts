/**
 * The CRI client's HTTP/2 channel: at most one current connection (h2-connection.ts) to the
 * runtime's unix socket, plus connections draining after a GOAWAY, with grpc-js's channel
 * semantics for unary calls without wait-for-ready:
 *   - idle (no connection): the next call dials; calls made while dialling wait for it (up to
 *     their own deadline);
 *   - a dial that fails (socket error, closed before the peer's SETTINGS, no SETTINGS within
 *     CONNECT_TIMEOUT_MS) fails the calls waiting for it with UNAVAILABLE and starts a backoff
 *     (CRI_RECONNECT_BACKOFF: 100 ms × 1.6^k ± 20%, at most 3 s, as the kubelet dials);
 *     calls made during the backoff fail at once with UNAVAILABLE (grpc-js: TRANSIENT_FAILURE
 *     fails calls without wait-for-ready); the first call after it dials again (lazily);
 *   - a ready connection that closes fails its open calls with UNAVAILABLE; the next call
 *     dials at once (the backoff only grows with failed dials and resets on ready);
 *   - GOAWAY / stream ids used up: the connection drains and new calls go to a new one; calls
 *     the peer refused unprocessed are sent once more (grpc-js's transparent retry).
 * `waitForReady` keeps dialling through the backoff until the channel is ready or its time is up.
 */
import type { Clock, Random, TimerHandle } from '../../clock/clock.js';
import { jitteredMs, nextBackoffMs } from '../../backoff/exponential-backoff.js';
import { GrpcCode } from '../grpc-wire.js';
import { H2Connection } from './h2-connection.js';
import type { H2ConnectionEvents } from './h2-connection.js';
import type { H2UnaryCall } from './h2-unary-call.js';

export interface H2ChannelOptions {
  /** Unix socket path. */
  path: string;
  /** Flow-control window advertised per stream and connection. */
  recvWindow: number;
  backoff: { readonly initialMs: number; readonly maxMs: number };
  clock: Clock;
  random: Random;
  /** Tests: the highest stream id a connection uses before it drains. */
  maxStreamId?: number;
}

/** How long a dial may take to reach `ready` (grpc-js: 20 s minimum connect timeout). */
export const CONNECT_TIMEOUT_MS = 20_000;
const BACKOFF_MULTIPLIER = 1.6;
const BACKOFF_JITTER = 0.2;

interface ReadyWaiter {
  resolve(): void;
  reject(err: Error): void;
  timer: TimerHandle;
}

export class H2Channel implements H2ConnectionEvents {
  readonly #opts: H2ChannelOptions;
  /** The connection new calls go to (connecting or ready), or null (idle / backing off). */
  #conn: H2Connection | null = null;
  /** Connections finishing their streams after GOAWAY; destroyed by `close`. */
  readonly #draining = new Set<H2Connection>();
  #connectTimer: TimerHandle | null = null;
  /** Monotonic ms before which no dial starts (backoff after a failed dial). */
  #retryAt = 0;
  #backoffMs: number;
  #lastError = '';
  #waiters: ReadyWaiter[] = [];
  #kickTimer: TimerHandle | null = null;
  #closed = false;
  /** Dials made (tests count reconnect attempts). */
  dials = 0;

  constructor(opts: H2ChannelOptions) {
    this.#opts = opts;
    this.#backoffMs = opts.backoff.initialMs;
  }

  /** Sends `call` on the current connection, dialling one if none; fails it fast while backing off. */
  start(call: H2UnaryCall): void {
    if (call.done) return;
    if (this.#closed) {
      call.complete(GrpcCode.UNAVAILABLE, 'Channel has been shut down');
      return;
    }
    let conn = this.#conn;
    if (conn === null) {
      if (this.#opts.clock.monotonic() < this.#retryAt) {
        call.complete(GrpcCode.UNAVAILABLE, `No connection established to the runtime: ${this.#lastError}`);
        return;
      }
      conn = this.#dial();
    }
    conn.start(call);
  }

  /** Resolves once a connection is ready; rejects (UNAVAILABLE-worthy Error) after `timeoutMs` or on close. */
  waitForReady(timeoutMs: number): Promise<void> {
    if (this.#conn?.state === 'ready') return Promise.resolve();
    if (this.#closed) return Promise.reject(new Error('Channel has been shut down'));
    return new Promise<void>((resolve, reject) => {
      const waiter: ReadyWaiter = {
        resolve,
        reject,
        timer: this.#opts.clock.setTimer(timeoutMs, () => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          reject(new Error(`Failed to connect before the deadline${this.#lastError === '' ? '' : `: ${this.#lastError}`}`));
        }),
      };
      this.#waiters.push(waiter);
      this.#kick();
    });
  }

  /** Stops now: every call in flight fails UNAVAILABLE, waiters reject. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#kickTimer?.cancel();
    this.#kickTimer = null;
    this.#connectTimer?.cancel();
    this.#connectTimer = null;
    const conns = [...this.#draining];
    if (this.#conn !== null) conns.push(this.#conn);
    this.#conn = null;
    for (const c of conns) c.destroy('Channel has been shut down');
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) {
      w.timer.cancel();
      w.reject(new Error('Channel has been shut down'));
    }
  }

  #dial(): H2Connection {
    this.dials++;
    const o = this.#opts;
    const conn = new H2Connection({
      path: o.path,
      events: this,
      recvWindow: o.recvWindow,
      monotonic: () => o.clock.monotonic(),
      setTimer: (ms, fn) => o.clock.setTimer(ms, fn, { unref: true }),
      ...(o.maxStreamId === undefined ? {} : { maxStreamId: o.maxStreamId }),
    });
    this.#conn = conn;
    this.#connectTimer?.cancel();
    this.#connectTimer = o.clock.setTimer(CONNECT_TIMEOUT_MS, () => {
      this.#connectTimer = null;
      if (conn.state === 'connecting') conn.destroy(`no HTTP/2 SETTINGS from the runtime within ${CONNECT_TIMEOUT_MS} ms`);
    }, { unref: true });
    return conn;
  }

  /** Keeps dialling (through the backoff) while someone waits for ready. */
  #kick(): void {
    if (this.#closed || this.#waiters.length === 0 || this.#conn !== null || this.#kickTimer !== null) return;
    const wait = this.#retryAt - this.#opts.clock.monotonic();
    if (wait > 0) {
      this.#kickTimer = this.#opts.clock.setTimer(wait, () => {
        this.#kickTimer = null;
        this.#kick();
      });
      return;
    }
    this.#dial();
  }

  // ---- H2ConnectionEvents ----------------------------------------------------------------

  onReady(conn: H2Connection): void {
    if (conn !== this.#conn) return;
    this.#connectTimer?.cancel();
    this.#connectTimer = null;
    this.#backoffMs = this.#opts.backoff.initialMs;
    this.#retryAt = 0;
    this.#lastError = '';
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) {
      w.timer.cancel();
      w.resolve();
    }
  }

  onDrain(conn: H2Connection, requeue: H2UnaryCall[]): void {
    if (conn === this.#conn) {
      this.#conn = null;
      this.#connectTimer?.cancel();
      this.#connectTimer = null;
    }
    this.#draining.add(conn);
    for (const c of requeue) this.start(c);
  }

  onClosed(conn: H2Connection, wasReady: boolean, reason: string, queued: H2UnaryCall[]): void {
    this.#draining.delete(conn);
    if (conn === this.#conn) {
      this.#conn = null;
      this.#connectTimer?.cancel();
      this.#connectTimer = null;
    }
    if (!wasReady) {
      // A failed dial: back off; the calls that waited for it fail like grpc-js's in TRANSIENT_FAILURE.
      this.#lastError = reason;
      this.#retryAt = this.#opts.clock.monotonic() + jitteredMs(this.#backoffMs, BACKOFF_JITTER, this.#opts.random);
      this.#backoffMs = nextBackoffMs(this.#backoffMs, { factor: BACKOFF_MULTIPLIER, maxMs: this.#opts.backoff.maxMs });
      for (const c of queued) c.complete(GrpcCode.UNAVAILABLE, `No connection established to the runtime: ${reason}`);
      this.#kick();
      return;
    }
    // A connection that worked: calls that never reached the peer go to a fresh one.
    this.#lastError = reason;
    for (const c of queued) this.start(c);
    this.#kick();
  }

  onRetry(call: H2UnaryCall): void {
    call.retried = true;
    this.start(call);
  }
}
