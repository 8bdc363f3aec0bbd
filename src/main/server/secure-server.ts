/**
 * The kubelet API on the secure port (the kubelet's --port, 10250): HTTPS with the serving pair
 * of serving-cert.ts, client certificates requested (verified against --client-ca-file when
 * given) but not required, and every request authenticated and authorized (auth-chain.ts)
 * before any route (kubelet-api-routes.ts) sees it. No endpoint is reachable without both.
 *
 * Request hygiene: header size capped; headers and request bodies timed
 * (secure-request-timeouts.ts: a followed log stream is a complete GET and is never cut; the
 * seam for request streams is `isRequestStream`); connections capped per client address and in
 * total (secure-connection-limits.ts); the TLS handshake timed. A refused request (401, 403)
 * is answered with `Connection: close` and its socket ended once the answer is written, so an
 * unauthenticated client cannot keep a connection by dripping the body it announced. Each
 * request's handler gets an AbortSignal that fires when the client goes away (ends a followed
 * log stream).
 *
 * Upgrade requests (exec, attach, port-forward) arrive on the 'upgrade' event with the raw
 * socket: they are authenticated and authorized the same way (nodes/proxy), refused with a raw
 * HTTP answer, or handed to `upgrades` (kubelet-api-routes.ts), which then owns the socket.
 *
 * Lifecycle: listen() once; close() stops accepting, ends idle connections and aborts open
 * streams so it resolves promptly; destroy() drops every connection now. Both idempotent.
 */
import https from 'node:https';
import type net from 'node:net';
import type { TLSSocket } from 'node:tls';
import { realClock, type Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { refusalOf, type RequestAuth } from './auth-chain.js';
import type { PeerCertificate, RequestCredentials } from './auth-types.js';
import type { RouteHandler, UpgradeHandler } from './kubelet-api-routes.js';
import { writeRawReply } from './raw-reply.js';
import { CONNECTION_LIMIT_DEFAULTS, enforceConnectionLimits, validateConnectionLimits, type ConnectionLimits } from './secure-connection-limits.js';
import { armRequestBodyTimer, noRequestStreams, REQUEST_TIMEOUT_DEFAULTS, type RequestStreamPolicy } from './secure-request-timeouts.js';
import { serverLifecycle, type ServerLifecycle } from './server-lifecycle.js';

export interface SecureServerOptions {
  address: string;
  port: number;
  cert: Buffer;
  key: Buffer;
  /** PEM bundle of --client-ca-file; undefined = x509 client authentication off. */
  clientCA: Buffer | undefined;
  auth: RequestAuth;
  routes: RouteHandler;
  /** Authorized upgrade requests; absent: every upgrade is refused with 404. */
  upgrades?: UpgradeHandler;
  /** Streams to drop when the server closes (the stream proxy). */
  onClose?: () => void;
  logger: Logger;
  maxHeaderBytes?: number;
  headersTimeoutMs?: number;
  /** From the end of a request's headers to the end of its body (secure-request-timeouts.ts). */
  requestBodyTimeoutMs?: number;
  /** How often node:http checks the header timer. */
  connectionsCheckingIntervalMs?: number;
  /** Longest TLS handshake. */
  handshakeTimeoutMs?: number;
  /** Connection caps (secure-connection-limits.ts). */
  limits?: Partial<ConnectionLimits>;
  /** Requests exempt from the body timer (exec streams, later); default none. */
  isRequestStream?: RequestStreamPolicy;
  /** Clock of the body timer (default the real one). */
  clock?: Clock;
}

export const SECURE_SERVER_DEFAULTS = Object.freeze({ maxHeaderBytes: 16 * 1024, ...REQUEST_TIMEOUT_DEFAULTS, handshakeTimeoutMs: 10_000 });

/** listen() once, close() gracefully, destroy() now (server-lifecycle.ts). */
export type SecureServer = ServerLifecycle;

export function credentialsOf(socket: TLSSocket, authorization: string | undefined): RequestCredentials {
  const peer = socket.getPeerCertificate?.();
  const has = peer !== undefined && peer !== null && Object.keys(peer).length > 0;
  return {
    peerCertificate: has ? (peer as unknown as PeerCertificate) : undefined,
    peerVerified: socket.authorized === true,
    peerVerifyError: socket.authorizationError instanceof Error ? socket.authorizationError.message : socket.authorizationError ? String(socket.authorizationError) : undefined,
    authorization,
  };
}

export function createSecureServer(o: SecureServerOptions): SecureServer {
  for (const k of ['cert', 'key', 'auth', 'routes', 'logger'] as const) {
    if (o[k] === undefined || o[k] === null) throw new TypeError(`createSecureServer: ${k} is required`);
  }
  const log = o.logger;
  const limits = validateConnectionLimits({ ...CONNECTION_LIMIT_DEFAULTS, ...o.limits });
  const clock = o.clock ?? realClock;
  const bodyTimeoutMs = o.requestBodyTimeoutMs ?? SECURE_SERVER_DEFAULTS.requestBodyTimeoutMs;
  const isRequestStream = o.isRequestStream ?? noRequestStreams;
  const streams = new Set<AbortController>();
  const server = https.createServer(
    {
      cert: o.cert,
      key: o.key,
      minVersion: 'TLSv1.2',
      requestCert: o.clientCA !== undefined,
      rejectUnauthorized: false,
      ...(o.clientCA !== undefined ? { ca: o.clientCA } : {}),
      maxHeaderSize: o.maxHeaderBytes ?? SECURE_SERVER_DEFAULTS.maxHeaderBytes,
      headersTimeout: o.headersTimeoutMs ?? SECURE_SERVER_DEFAULTS.headersTimeoutMs,
      connectionsCheckingInterval: o.connectionsCheckingIntervalMs ?? SECURE_SERVER_DEFAULTS.connectionsCheckingIntervalMs,
      handshakeTimeout: o.handshakeTimeoutMs ?? SECURE_SERVER_DEFAULTS.handshakeTimeoutMs,
      // node:http's requestTimeout has no per-request exemption; the body timer below has one.
      requestTimeout: 0,
    },
    (req, res) => {
      armRequestBodyTimer(req, {
        clock,
        timeoutMs: bodyTimeoutMs,
        isStream: isRequestStream,
        onExpired: () => {
          log.v(2).info('secure port: request body not received in time; closing the connection', { timeoutMs: bodyTimeoutMs });
          req.socket.destroy();
        },
      });
      const ac = new AbortController();
      streams.add(ac);
      res.once('close', () => {
        ac.abort();
        streams.delete(ac);
      });
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      const creds = credentialsOf(req.socket as TLSSocket, req.headers.authorization);
      o.auth
        .check(creds, req.method ?? 'GET', path)
        .then(async (outcome) => {
          if (outcome.kind !== 'allowed') {
            const r = refusalOf(outcome);
            if (outcome.kind === 'unauthenticated') log.v(2).info('unauthenticated request', { path, reason: outcome.reason });
            else log.v(2).info(outcome.kind === 'forbidden' ? 'Forbidden' : 'Authorization error', { path, user: outcome.attrs.user.name, verb: outcome.attrs.verb, subresource: outcome.attrs.subresource, reason: outcome.reason });
            // The unread body must not hold the connection: close it once the answer is out.
            res.writeHead(r.status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(r.body)), 'x-content-type-options': 'nosniff', connection: 'close' });
            res.end(r.body, () => req.socket.destroySoon());
            return;
          }
          await o.routes(req, res, ac.signal);
        })
        .catch((err: unknown) => {
          log.error('secure port handler failed', { path, err: err instanceof Error ? err.message : String(err) });
          if (!res.headersSent) {
            res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
            res.end('internal server error\n');
          } else res.destroy();
        });
    },
  );
  server.on('upgrade', (req: import('node:http').IncomingMessage, socket: net.Socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const creds = credentialsOf(socket as TLSSocket, req.headers.authorization);
    o.auth
      .check(creds, req.method ?? 'GET', path)
      .then(async (outcome) => {
        if (outcome.kind !== 'allowed') {
          const r = refusalOf(outcome);
          log.v(2).info(outcome.kind === 'unauthenticated' ? 'unauthenticated upgrade request' : 'upgrade request refused', { path, status: r.status });
          return writeRawReply(socket, r.status, r.body);
        }
        if (o.upgrades === undefined) return writeRawReply(socket, 404, '404 page not found\n');
        await o.upgrades(req, socket, head);
      })
      .catch((err: unknown) => {
        log.error('secure port upgrade handler failed', { path, err: err instanceof Error ? err.message : String(err) });
        writeRawReply(socket, 500, 'internal server error\n');
      });
  });
  server.on('clientError', (err: Error & { code?: string }, socket) => {
    // A request line or headers past maxHeaderSize (a 1 MB command, 10,000 query parameters):
    // say so, as Go's server does, instead of dropping the connection silently.
    if (err.code === 'HPE_HEADER_OVERFLOW') writeRawReply(socket, 431, 'Request Header Fields Too Large\n');
    else socket.destroy();
  });
  server.on('tlsClientError', () => {});
  enforceConnectionLimits(server, limits, (address, why) => log.v(2).info('secure port: connection refused over the cap', { address, cap: why, maxConnectionsPerClient: limits.maxConnectionsPerClient, maxConnections: limits.maxConnections }));

  return serverLifecycle(server, o.port, o.address, {
    abortStreams: () => {
      for (const st of streams) st.abort();
      o.onClose?.();
    },
  });
}
