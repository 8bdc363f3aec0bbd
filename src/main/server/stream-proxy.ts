/**
 * Non-redirecting streaming, as the kubelet does it since 1.14 (pkg/kubelet/server/server.go
 * proxyStream → apimachinery's UpgradeAwareHandler): the client's upgrade request (exec,
 * attach, port-forward) is sent on to the runtime's streaming URL with the client's headers —
 * Connection, Upgrade, X-Stream-Protocol-Version, Sec-WebSocket-* — and from then on both
 * sockets are piped byte for byte, the runtime's own response (101 or an error) included. No
 * byte is parsed or re-framed here, so shardlet speaks neither SPDY nor WebSocket itself.
 *
 * Not forwarded: Host (the runtime's), Authorization and Proxy-Authorization (the client's
 * credentials were checked by the secure port and are not the runtime's business).
 *
 * Bounds: at most `maxStreams` proxied connections at once (more answer 429 before any runtime
 * connection is made); a connection with no bytes in either direction for `idleTimeoutMs`
 * (--streaming-connection-idle-timeout) is closed; the runtime must accept within
 * `connectTimeoutMs`. Either side's error, end or close closes both. All of it is socket
 * events and one clock timer per connection: nothing per byte but Node's own piping, nothing
 * that blocks the main thread.
 *
 * Lifecycle: `close()` / `destroy()` drop every proxied connection now (streams have nothing
 * to drain gracefully); both idempotent.
 */
import type http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { writeRawReply } from './raw-reply.js';

export interface StreamProxyOptions {
  clock: Clock;
  logger: Logger;
  idleTimeoutMs: number;
  maxStreams?: number;
  connectTimeoutMs?: number;
}

export const STREAM_PROXY_DEFAULTS = Object.freeze({ maxStreams: 1024, connectTimeoutMs: 30_000 });

const NOT_FORWARDED = new Set(['host', 'authorization', 'proxy-authorization']);

export class StreamProxyError extends Error {
  readonly code = 'ERR_STREAM_PROXY_TARGET';
}

/** The runtime's streaming URL as a dial target; throws StreamProxyError when unusable. */
export function parseStreamingUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new StreamProxyError(`runtime returned an invalid streaming URL ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new StreamProxyError(`runtime returned a streaming URL with unsupported scheme ${JSON.stringify(u.protocol)}`);
  if (u.hostname === '') throw new StreamProxyError('runtime returned a streaming URL without a host');
  return u;
}

interface Proxied {
  client: net.Socket;
  backend: net.Socket;
  timer: TimerHandle | undefined;
}

export class StreamProxy {
  readonly #o: Required<StreamProxyOptions>;
  readonly #open = new Set<Proxied>();
  #closed = false;

  constructor(o: StreamProxyOptions) {
    if (!(o.idleTimeoutMs > 0)) throw new TypeError('StreamProxy: idleTimeoutMs must be > 0');
    this.#o = { maxStreams: STREAM_PROXY_DEFAULTS.maxStreams, connectTimeoutMs: STREAM_PROXY_DEFAULTS.connectTimeoutMs, ...o };
    if (!Number.isInteger(this.#o.maxStreams) || this.#o.maxStreams < 1) throw new TypeError('StreamProxy: maxStreams must be a positive integer');
  }

  /** Proxied connections open now. */
  get active(): number {
    return this.#open.size;
  }

  /** Whether one more connection would be accepted. */
  get hasRoom(): boolean {
    return !this.#closed && this.#open.size < this.#o.maxStreams;
  }

  /**
   * Takes ownership of the client's upgraded socket (`head`: bytes already read past the
   * request) and joins it to `target`. Answers the client itself on every failure.
   */
  proxy(req: http.IncomingMessage, client: net.Socket, head: Buffer, target: URL): void {
    if (!this.hasRoom) {
      writeRawReply(client, 429, 'too many streaming connections, try again later\n', [['Retry-After', '1']]);
      return;
    }
    const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const backend = target.protocol === 'https:' ? tls.connect({ host, port, servername: net.isIP(host) === 0 ? host : undefined }) : net.connect({ host, port });
    const p: Proxied = { client, backend, timer: undefined };
    this.#open.add(p);
    let last = this.#o.clock.monotonic();
    const touch = (): void => {
      last = this.#o.clock.monotonic();
    };
    const arm = (ms: number): void => {
      p.timer = this.#o.clock.setTimer(ms, () => {
        const idle = this.#o.clock.monotonic() - last;
        if (idle >= this.#o.idleTimeoutMs) {
          this.#o.logger.v(2).info('streaming connection idle; closing', { idleMs: Math.round(idle), target: `${target.host}${target.pathname}` });
          this.#end(p);
        } else arm(this.#o.idleTimeoutMs - idle);
      }, { unref: true });
    };
    let connected = false;
    const connectTimer = this.#o.clock.setTimer(this.#o.connectTimeoutMs, () => {
      if (connected) return;
      backend.destroy();
      writeRawReply(client, 500, `error dialing the runtime's streaming server: timed out after ${this.#o.connectTimeoutMs} ms\n`);
      this.#forget(p);
    }, { unref: true });
    backend.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      connected = true;
      connectTimer.cancel();
      backend.write(requestHead(req, target));
      if (head.length > 0) backend.write(head);
      backend.pipe(client);
      client.pipe(backend);
      client.on('data', touch);
      backend.on('data', touch);
      arm(this.#o.idleTimeoutMs);
    });
    backend.on('error', (err) => {
      if (!connected) {
        connectTimer.cancel();
        // Go's responder: 500 with the error's text.
        writeRawReply(client, 500, `error dialing the runtime's streaming server: ${err.message}\n`);
        this.#forget(p);
        return;
      }
      this.#end(p);
    });
    client.on('error', () => this.#end(p));
    backend.on('close', () => {
      if (connected) this.#end(p);
    });
    client.on('close', () => this.#end(p));
  }

  #end(p: Proxied): void {
    if (!this.#open.has(p)) return;
    this.#forget(p);
    p.backend.destroy();
    // What the runtime sent last (a GOAWAY, a status) may still be queued: end, then drop.
    if (!p.client.destroyed) p.client.end(() => p.client.destroy());
  }

  #forget(p: Proxied): void {
    p.timer?.cancel();
    this.#open.delete(p);
  }

  /** Drops every proxied connection. Idempotent. */
  destroy(): void {
    this.#closed = true;
    for (const p of [...this.#open]) {
      this.#forget(p);
      p.backend.destroy();
      p.client.destroy();
    }
  }

  /** Same as destroy(): a stream has nothing to drain. */
  close(): void {
    this.destroy();
  }
}

/** The request line and headers for the runtime: the client's, re-targeted. */
export function requestHead(req: http.IncomingMessage, target: URL): string {
  const lines = [`${req.method ?? 'GET'} ${target.pathname}${target.search} HTTP/1.1`, `Host: ${target.host}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (NOT_FORWARDED.has(name.toLowerCase())) continue;
    lines.push(`${name}: ${raw[i + 1]!}`);
  }
  return lines.join('\r\n') + '\r\n\r\n';
}
