/**
 * The secure port's routes, reached only after authentication and authorization
 * (secure-server.ts): everything the read-only port serves (/metrics, /healthz, /pods), plus
 * /runningpods/, /metrics/probes, /metrics/resource, /stats/summary, and
 * /containerLogs/{namespace}/{pod}/{container} streamed from the CRI log file, and the streaming
 * endpoints /exec, /attach, /portForward and /run (stream-request.ts): an upgrade request is
 * handed to `kubeletApiUpgrades` by the server's 'upgrade' event and proxied to the runtime's
 * streaming URL (stream-proxy.ts); a plain request gets the kubelet's refusal, /run its output.
 *
 * Path segments come from the client: they are only compared with pod and container names,
 * never joined into a file path (the log path comes from the runtime).
 */
import type http from 'node:http';
import type net from 'node:net';
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { PROMETHEUS_TEXT_CONTENT_TYPE } from '../metrics/exposition-text.js';
import { readOnlyRoutes, sendReply, type ReadOnlySources, type Reply } from './agent-server.js';
import { parseLogOptions } from './container-logs-options.js';
import { openRegularLogFile } from './container-logs-open.js';
import { readContainerLog } from './container-logs-reader.js';
import { filterFamilies } from './metrics-probes.js';
import type { ContainerLogSource, PodByNameSource, RunningPodsSource, StatsSource } from './secure-sources.js';
import { writeRawReply } from './raw-reply.js';
import { resolveStreamRequest, streamKindOf, type StreamOutcome, type StreamRuntime } from './stream-request.js';
import { parseStreamingUrl, StreamProxyError, type StreamProxy } from './stream-proxy.js';

const TEXT = 'text/plain; charset=utf-8';

export interface KubeletApiRoutesOptions extends ReadOnlySources {
  podsByName: PodByNameSource;
  runningPods: RunningPodsSource;
  logs: ContainerLogSource;
  stats: StatsSource;
  clock: Clock;
  logger: Logger;
  /** Follow-mode poll interval of the log reader (default 100 ms). */
  logPollMs?: number;
  /** Exec/Attach/PortForward/ExecSync and the lookups before them. */
  streamRuntime: StreamRuntime;
  /** Joins upgraded connections to the runtime's streaming URLs. */
  streamProxy: StreamProxy;
}

export type RouteHandler = (req: http.IncomingMessage, res: http.ServerResponse, signal: AbortSignal) => Promise<void>;

export function kubeletApiRoutes(o: KubeletApiRoutesOptions): RouteHandler {
  const readOnly = readOnlyRoutes(o);
  return async (req, res, signal) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (streamKindOf(path) !== undefined) {
      const outcome = await resolveStreamRequest({ podsByName: o.podsByName, runtime: o.streamRuntime }, req, false);
      return sendReply(req, res, replyOf(outcome));
    }
    const get = req.method === 'GET' || req.method === 'HEAD';
    if (path.startsWith('/containerLogs/')) {
      if (!get) return sendReply(req, res, { status: 405, type: TEXT, body: 'method not allowed\n', headers: { allow: 'GET' } });
      return containerLogs(o, req, res, url, signal);
    }
    const reply = await (async (): Promise<Reply | undefined> => {
      if (path === '/runningpods/' || path === '/runningpods') {
        return { status: 200, type: 'application/json', body: JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: await o.runningPods.list() }), compressible: true };
      }
      if (path === '/metrics/probes') {
        return { status: 200, type: PROMETHEUS_TEXT_CONTENT_TYPE, body: filterFamilies(await o.metrics.collect(), 'prober_'), compressible: true };
      }
      if (path === '/metrics/resource') {
        return { status: 200, type: PROMETHEUS_TEXT_CONTENT_TYPE, body: await o.stats.resourceMetrics(), compressible: true };
      }
      if (path === '/stats/summary' || path === '/stats/summary/') {
        return { status: 200, type: 'application/json', body: JSON.stringify(await o.stats.summary()), compressible: true };
      }
      return undefined;
    })();
    if (reply !== undefined) {
      if (!get) return sendReply(req, res, { status: 405, type: TEXT, body: 'method not allowed\n', headers: { allow: 'GET, HEAD' } });
      return sendReply(req, res, reply);
    }
    return sendReply(req, res, await readOnly(req));
  };
}

export type UpgradeHandler = (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => Promise<void>;

/**
 * Upgrade requests (already authenticated and authorized): the streaming endpoints are proxied
 * to the runtime; anything else is refused (no other endpoint upgrades). Owns `socket`.
 */
export function kubeletApiUpgrades(o: KubeletApiRoutesOptions): UpgradeHandler {
  return async (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (streamKindOf(path) === undefined) return writeRawReply(socket, 404, '404 page not found\n');
    // Full: refuse before the runtime mints a URL nobody will use.
    if (!o.streamProxy.hasRoom) return writeRawReply(socket, 429, 'too many streaming connections, try again later\n', [['Retry-After', '1']]);
    const outcome = await resolveStreamRequest({ podsByName: o.podsByName, runtime: o.streamRuntime }, req, true);
    if (socket.destroyed) return;
    if (outcome.kind !== 'proxy') {
      const r = replyOf(outcome);
      return writeRawReply(socket, r.status, r.body.toString(), Object.entries(r.headers ?? {}));
    }
    let target: URL;
    try {
      target = parseStreamingUrl(outcome.url);
    } catch (err) {
      if (!(err instanceof StreamProxyError)) throw err;
      o.logger.error('runtime streaming URL refused', { err: err.message });
      return writeRawReply(socket, 500, `${err.message}\n`);
    }
    o.streamProxy.proxy(req, socket, head, target);
  };
}

function replyOf(outcome: StreamOutcome): Reply {
  switch (outcome.kind) {
    case 'refused':
      return { status: outcome.status, type: TEXT, body: outcome.body, ...(outcome.headers !== undefined ? { headers: Object.fromEntries(outcome.headers) } : {}) };
    case 'output':
      return { status: 200, type: 'application/json', body: outcome.body };
    case 'proxy':
      // Only an upgrade is proxied; a plain request never gets this far (resolveStreamRequest).
      return { status: 500, type: TEXT, body: 'Upgrade request required\n' };
    default: {
      const never: never = outcome;
      throw new Error(`unreachable ${String(never)}`);
    }
  }
}

async function containerLogs(o: KubeletApiRoutesOptions, req: http.IncomingMessage, res: http.ServerResponse, url: URL, signal: AbortSignal): Promise<void> {
  const parts = url.pathname.slice('/containerLogs/'.length).split('/').map(safeDecode);
  const [namespace, podName, container] = parts;
  const text = (status: number, body: string): Promise<void> => sendReply(req, res, { status, type: TEXT, body });
  if (parts.length !== 3 || namespace === undefined || podName === undefined || container === undefined || parts.some((p) => p === undefined)) {
    return text(404, '404 page not found\n');
  }
  if (podName === '') return text(400, '{"message": "Missing podID."}');
  if (container === '') return text(400, '{"message": "Missing container name."}');
  const parsed = parseLogOptions(url.searchParams, o.clock.now());
  if (!parsed.ok) return text(parsed.status, parsed.message);
  const pod = o.podsByName.byName(namespace, podName);
  if (pod === undefined) return text(404, `pod "${podName}" does not exist`);
  const spec = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []), ...(pod.spec?.ephemeralContainers ?? [])];
  if (!spec.some((c) => c.name === container)) return text(404, `container "${container}" not found in pod "${podName}"`);
  const found = await o.logs.locate(pod, container, parsed.options.previous);
  if (!found.ok) return text(400, found.message);
  // Regular files only, opened without blocking (container-logs-open.ts), before the 200.
  const opened = await openRegularLogFile(found.logPath);
  if (!opened.ok) return text(400, opened.message);

  res.writeHead(200, { 'content-type': TEXT, 'transfer-encoding': 'chunked', 'x-content-type-options': 'nosniff' });
  if (req.method === 'HEAD') {
    await opened.file.close().catch(() => {});
    res.end();
    return;
  }
  const sink = {
    write: (chunk: Buffer): Promise<boolean> =>
      new Promise<boolean>((resolve) => {
        if (res.destroyed || signal.aborted) return resolve(false);
        if (res.write(chunk)) return resolve(true);
        const done = (ok: boolean): void => {
          res.off('drain', onDrain);
          res.off('close', onClose);
          resolve(ok);
        };
        const onDrain = (): void => done(true);
        const onClose = (): void => done(false);
        res.once('drain', onDrain);
        res.once('close', onClose);
      }),
  };
  try {
    await readContainerLog({
      path: found.logPath,
      opened,
      options: parsed.options,
      clock: o.clock,
      sink,
      signal,
      stillRunning: () => o.logs.isRunning(found.containerId),
      ...(o.logPollMs !== undefined ? { pollMs: o.logPollMs } : {}),
    });
  } catch (err) {
    // Headers are out: the kubelet too can only end the stream here.
    o.logger.error('container log stream failed', { pod: `${namespace}/${podName}`, container, err: err instanceof Error ? err.message : String(err) });
  }
  res.end();
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}
