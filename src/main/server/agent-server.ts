/**
 * The agent's read-only HTTP server (the kubelet's read-only port, 10255): /metrics, /healthz,
 * /healthz/<check>, /pods. node:http, no framework. Bound to 127.0.0.1 unless told otherwise.
 *
 * Request hygiene: only GET and HEAD (else 405 with Allow); a request that carries a body is
 * refused with 413 before it is read; header size, header time and total request time are
 * capped (431 / 408 from node:http). Responses of /metrics and /pods are gzip-compressed when
 * the client accepts gzip (zlib runs on the libuv pool, off the main thread).
 *
 * Lifecycle: listen() once; close() stops accepting, ends idle keep-alive connections and
 * resolves when in-flight responses finished; destroy() drops every connection now. Both are
 * idempotent.
 */
import http from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logging/logger.js';
import { PROMETHEUS_TEXT_CONTENT_TYPE } from '../metrics/exposition-text.js';
import { aggregateHealthz, PING_CHECK, singleHealthz } from './healthz.js';
import { serverLifecycle, type ServerLifecycle } from './server-lifecycle.js';
import type { HealthSource, MetricsSource, PodListSource } from './server-sources.js';

const gzip = promisify(zlib.gzip);

export interface AgentServerOptions {
  address?: string;
  port?: number;
  metrics: MetricsSource;
  health: HealthSource;
  pods: PodListSource;
  logger: Logger;
  /** node:http maxHeaderSize (bytes). Default 16 KiB. */
  maxHeaderBytes?: number;
  /** node:http headersTimeout (ms). Default 10 s. */
  headersTimeoutMs?: number;
  /** node:http requestTimeout (ms). Default 30 s. */
  requestTimeoutMs?: number;
}

export const AGENT_SERVER_DEFAULTS = Object.freeze({
  address: '127.0.0.1',
  port: 10255,
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
});

/** listen() once, close() gracefully, destroy() now (server-lifecycle.ts). */
export type AgentServer = ServerLifecycle;

export type Reply = { status: number; type: string; body: string | Buffer; headers?: Record<string, string>; compressible?: boolean };

const TEXT = 'text/plain; charset=utf-8';

export function createAgentServer(opts: AgentServerOptions): AgentServer {
  for (const k of ['metrics', 'health', 'pods', 'logger'] as const) {
    if (opts[k] === undefined || opts[k] === null) throw new TypeError(`createAgentServer: ${k} is required`);
  }
  const o = { ...AGENT_SERVER_DEFAULTS, ...stripUndefined(opts) };
  const log = opts.logger;

  const route = readOnlyRoutes(opts);

  const server = http.createServer(
    { maxHeaderSize: o.maxHeaderBytes, headersTimeout: o.headersTimeoutMs, requestTimeout: o.requestTimeoutMs },
    (req, res) => {
      route(req)
        .catch((err: unknown): Reply => {
          log.error('http handler failed', { path: req.url ?? '', err: err instanceof Error ? err.message : String(err) });
          return { status: 500, type: TEXT, body: 'internal server error\n' };
        })
        .then((reply) => send(req, res, reply))
        .catch((err: unknown) => {
          log.error('http response failed', { path: req.url ?? '', err: err instanceof Error ? err.message : String(err) });
          res.destroy();
        });
    },
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // Oversized headers, header/request timeouts, malformed requests: answer if we still can.
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    if (socket.writable) socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    else socket.destroy();
  });

  return serverLifecycle(server, o.port, o.address, { onListening: (a) => log.info('agent server listening', { address: a.address, port: a.port }) });
}

export { send as sendReply };

async function send(req: http.IncomingMessage, res: http.ServerResponse, reply: Reply): Promise<void> {
  let body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
  const headers: Record<string, string> = { 'content-type': reply.type, ...reply.headers };
  if (reply.compressible) {
    headers['vary'] = 'Accept-Encoding';
    if (acceptsGzip(req.headers['accept-encoding'])) {
      // Level 1: a 1,000-pod exposition (1.8 MB) compresses in ~3.5 ms instead of ~14 ms at the
      // default level, for ~10% more bytes; the scrape is on loopback or a LAN.
      body = await gzip(body, { level: 1 });
      headers['content-encoding'] = 'gzip';
    }
  }
  headers['content-length'] = String(body.length);
  res.writeHead(reply.status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The sources the read-only routes read (also served on the secure port). */
export type ReadOnlySources = Pick<AgentServerOptions, 'metrics' | 'health' | 'pods'>;

/**
 * The read-only port's routes (/metrics, /healthz, /healthz/<check>, /pods), as a function of a
 * request to its reply; the secure port serves the same ones behind authentication.
 */
export function readOnlyRoutes(opts: ReadOnlySources): (req: http.IncomingMessage) => Promise<Reply> {
  return async (req: http.IncomingMessage): Promise<Reply> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    const known = path === '/metrics' || path === '/pods' || path === '/pods/' || path === '/healthz' || path.startsWith('/healthz/');
    if (!known) return { status: 404, type: TEXT, body: '404 page not found\n' };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return { status: 405, type: TEXT, body: 'method not allowed\n', headers: { allow: 'GET, HEAD' } };
    }
    // The unread body must not be parsed as the next request: close the connection after replying.
    if (hasBody(req)) return { status: 413, type: TEXT, body: 'request body not allowed\n', headers: { connection: 'close' } };
    if (path === '/metrics') {
      return { status: 200, type: PROMETHEUS_TEXT_CONTENT_TYPE, body: await opts.metrics.collect(), compressible: true };
    }
    if (path === '/pods' || path === '/pods/') {
      const body = podListJson(opts.pods.list());
      return { status: 200, type: 'application/json', body, compressible: true };
    }
    const checks = [PING_CHECK, ...opts.health.checks()];
    const r = path === '/healthz'
      ? aggregateHealthz(checks, { verbose: url.searchParams.has('verbose'), exclude: new Set(url.searchParams.getAll('exclude')) })
      : singleHealthz(checks, path.slice('/healthz/'.length));
    return { status: r.status, type: TEXT, body: r.body, headers: { 'x-content-type-options': 'nosniff' } };
  };
}

/**
 * Each /pods item's JSON, kept while the item object is current (PodListSource: items are
 * immutable). One cache for every server of the process: the read-only and the secure port list
 * the same items.
 */
const itemJson = new WeakMap<V1Pod, string>();

function podListJson(items: readonly V1Pod[]): string {
  const parts: string[] = [];
  for (const item of items) {
    let json = itemJson.get(item);
    if (json === undefined) {
      json = JSON.stringify(item);
      itemJson.set(item, json);
    }
    parts.push(json);
  }
  return `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[${parts.join(',')}]}`;
}

/** True for "gzip" with a non-zero q (e.g. "gzip, deflate", "gzip;q=0.5"); false for "gzip;q=0". */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().split(';').map((x) => x.trim());
    if (coding?.toLowerCase() !== 'gzip') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** A request carries a body when it declares a non-zero length or any transfer-encoding. */
function hasBody(req: http.IncomingMessage): boolean {
  const len = req.headers['content-length'];
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
