/**
 * The streaming server's request cache (the kubelet's pkg/kubelet/cri/streaming/request_cache.go):
 * CRI Exec/Attach/PortForward store their request under a random single-use token that the
 * returned URL carries; the upgrade consumes it. Tokens expire after `ttlMs` (1 minute), and at
 * most `maxInFlight` (1000) may wait at once — past that, Exec/Attach/PortForward fail
 * RESOURCE_EXHAUSTED, as the kubelet's cache does ("maximum number of in-flight requests
 * exceeded"), so a client that asks for URLs and never uses them cannot grow memory.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock/clock.js';
import { CriError } from '../shared/cri/cri-errors.js';

export type StreamRequest =
  | { readonly kind: 'exec'; readonly containerId: string; readonly cmd: readonly string[]; readonly tty: boolean; readonly stdin: boolean; readonly stdout: boolean; readonly stderr: boolean }
  | { readonly kind: 'attach'; readonly containerId: string; readonly tty: boolean; readonly stdin: boolean; readonly stdout: boolean; readonly stderr: boolean }
  | { readonly kind: 'portforward'; readonly sandboxId: string; readonly ports: readonly number[] };

export const STREAM_TOKEN_DEFAULTS = Object.freeze({ ttlMs: 60_000, maxInFlight: 1000 });

export class StreamTokenCache {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #max: number;
  /** token → request and its expiry (monotonic ms); insertion order = expiry order. */
  readonly #entries = new Map<string, { req: StreamRequest; expiresAt: number }>();

  constructor(o: { clock: Clock; ttlMs?: number; maxInFlight?: number }) {
    this.#clock = o.clock;
    this.#ttlMs = o.ttlMs ?? STREAM_TOKEN_DEFAULTS.ttlMs;
    this.#max = o.maxInFlight ?? STREAM_TOKEN_DEFAULTS.maxInFlight;
  }

  get size(): number {
    this.#evict();
    return this.#entries.size;
  }

  /** Stores `req`; answers its token. Throws CriError RESOURCE_EXHAUSTED when full. */
  insert(req: StreamRequest, method: string): string {
    this.#evict();
    if (this.#entries.size >= this.#max) throw new CriError('ERR_CRI_RESOURCE_EXHAUSTED', method, 'maximum number of in-flight requests exceeded');
    let token: string;
    do token = randomBytes(6).toString('base64url');
    while (this.#entries.has(token));
    this.#entries.set(token, { req, expiresAt: this.#clock.monotonic() + this.#ttlMs });
    return token;
  }

  /** The request behind `token`, removing it; undefined when unknown or expired. */
  consume(token: string): StreamRequest | undefined {
    this.#evict();
    const e = this.#entries.get(token);
    if (e === undefined) return undefined;
    this.#entries.delete(token);
    return e.req;
  }

  #evict(): void {
    const now = this.#clock.monotonic();
    for (const [t, e] of this.#entries) {
      if (e.expiresAt > now) break;
      this.#entries.delete(t);
    }
  }
}
