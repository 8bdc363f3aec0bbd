/**
 * {@link ApiTransport} over node:https (or http for an insecure test server), configured from a
 * kubeconfig with @kubernetes/client-node's KubeConfig: the current context's server, CA,
 * client certificate/key or bearer token (and tlsServerName / insecure-skip-tls-verify).
 *
 * One keep-alive agent serves every request of the client: a status PATCH reuses a warm TLS
 * connection (the library's generated API clients build a new agent, so a new TLS handshake,
 * per request, which at 50 QPS costs more CPU than the requests themselves).
 *
 * Bounds (hostile or broken servers are normal): every body is read with a byte limit, every
 * exchange with a deadline, watch lines with a per-line limit; credentials are read once, at
 * construction (a rotated token file needs a restart — documented limitation).
 */
import http from 'node:http';
import https from 'node:https';
import { ApiError } from './api-errors.js';
import type { ApiRequest, ApiResponse, ApiTransport } from './api-transport.js';

/** Bound on the body of an error answer (a metav1.Status is a few hundred bytes). */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface HttpsTransportOptions {
  kubeconfigPath: string;
  /** Concurrent connections to the server (default 16). */
  maxSockets?: number;
}

export class HttpsTransport implements ApiTransport {
  readonly #base: URL;
  readonly #agent: http.Agent;
  readonly #headers: Record<string, string>;
  readonly #mod: typeof http | typeof https;

  private constructor(base: URL, agent: http.Agent, headers: Record<string, string>) {
    this.#base = base;
    this.#agent = agent;
    this.#headers = headers;
    this.#mod = base.protocol === 'http:' ? http : https;
  }

  /** Reads the kubeconfig; throws ApiError ERR_API_KUBECONFIG naming what is wrong. */
  static async fromKubeconfig(opts: HttpsTransportOptions): Promise<HttpsTransport> {
    // Loaded here, not at module load: client-node's config module pulls in most of the client
    // (~25 MiB of main-thread heap), which a standalone agent never needs.
    const { KubeConfig } = await import('@kubernetes/client-node/dist/config.js');
    const kc = new KubeConfig();
    try {
      kc.loadFromFile(opts.kubeconfigPath);
    } catch (err) {
      throw new ApiError('ERR_API_KUBECONFIG', `kubeconfig ${opts.kubeconfigPath}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new ApiError('ERR_API_KUBECONFIG', `kubeconfig ${opts.kubeconfigPath}: no current cluster`);
    let base: URL;
    try {
      base = new URL(cluster.server);
    } catch {
      throw new ApiError('ERR_API_KUBECONFIG', `kubeconfig ${opts.kubeconfigPath}: cluster.server ${JSON.stringify(cluster.server)} is not a URL`);
    }
    if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new ApiError('ERR_API_KUBECONFIG', `kubeconfig ${opts.kubeconfigPath}: cluster.server must be https://, got ${base.protocol}`);
    const tls: https.RequestOptions = {};
    try {
      await kc.applyToHTTPSOptions(tls);
    } catch (err) {
      throw new ApiError('ERR_API_KUBECONFIG', `kubeconfig ${opts.kubeconfigPath}: credentials: ${err instanceof Error ? err.message : String(err)}`);
    }
    // applyToHTTPSOptions builds an agent per call; keep only the TLS material and headers.
    (tls.agent as http.Agent | undefined)?.destroy();
    const agentOpts: https.AgentOptions = { keepAlive: true, maxSockets: opts.maxSockets ?? 16, scheduling: 'lifo' };
    if (tls.ca !== undefined) agentOpts.ca = tls.ca;
    if (tls.cert !== undefined) agentOpts.cert = tls.cert;
    if (tls.key !== undefined) agentOpts.key = tls.key;
    if (tls.rejectUnauthorized !== undefined) agentOpts.rejectUnauthorized = tls.rejectUnauthorized;
    if (tls.servername !== undefined) agentOpts.servername = tls.servername;
    const agent = base.protocol === 'http:' ? new http.Agent({ keepAlive: true, maxSockets: agentOpts.maxSockets ?? 16 }) : new https.Agent(agentOpts);
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'shardlet' };
    for (const [k, v] of Object.entries(tls.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    if (tls.auth) headers['Authorization'] = `Basic ${Buffer.from(tls.auth).toString('base64')}`;
    return new HttpsTransport(base, agent, headers);
  }

  /** The server's base URL (for logs). */
  get server(): string {
    return this.#base.origin;
  }

  request(req: ApiRequest): Promise<ApiResponse> {
    return this.#exchange(req, undefined);
  }

  watch(req: ApiRequest, onObject: (obj: Record<string, unknown>) => void): Promise<ApiResponse> {
    return this.#exchange(req, onObject);
  }

  close(): void {
    this.#agent.destroy();
  }

  #exchange(req: ApiRequest, onObject: ((obj: Record<string, unknown>) => void) | undefined): Promise<ApiResponse> {
    return new Promise<ApiResponse>((resolve, reject) => {
      if (req.signal?.aborted) return reject(new ApiError('ERR_API_ABORTED', 'request aborted'));
      const url = new URL(req.path, this.#base);
      for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
      const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
      const headers: Record<string, string> = { ...this.#headers };
      if (payload) {
        headers['Content-Type'] = req.contentType ?? 'application/json';
        headers['Content-Length'] = String(payload.length);
      }
      let settled = false;
      const done = (err: ApiError | undefined, res?: ApiResponse): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        if (err) {
          r.destroy();
          reject(err);
        } else resolve(res!);
      };
      const onAbort = (): void => done(new ApiError('ERR_API_ABORTED', 'request aborted'));
      const timer = setTimeout(() => done(new ApiError('ERR_API_UNREACHABLE', `${req.method} ${req.path}: no complete answer within ${req.timeoutMs} ms`)), req.timeoutMs);
      const r = this.#mod.request(url, { method: req.method, headers, agent: this.#agent }, (res) => {
        const status = res.statusCode ?? 0;
        const retryAfter = Number(res.headers['retry-after']);
        const base: ApiResponse = { status, body: undefined, ...(Number.isFinite(retryAfter) && retryAfter >= 0 && retryAfter <= 3600 ? { retryAfterMs: retryAfter * 1000 } : {}) };
        const ok = status >= 200 && status < 300;
        if (ok && onObject) return this.#readLines(res, req.maxBodyBytes, onObject, () => done(undefined, base), (e) => done(e));
        const limit = ok ? req.maxBodyBytes : MAX_ERROR_BODY_BYTES;
        const parse = ok ? req.parseBody : true;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > limit) {
            if (!ok) return; // an oversized error body: keep the status, drop the body
            done(new ApiError('ERR_API_TOO_LARGE', `${req.method} ${req.path}: response body over ${limit} bytes`));
            return;
          }
          if (parse) chunks.push(c);
        });
        res.on('end', () => {
          if (!parse || size > limit) return done(undefined, base);
          let body: unknown;
          try {
            body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            if (ok) return done(new ApiError('ERR_API_DECODE', `${req.method} ${req.path}: response is not JSON`));
          }
          done(undefined, { ...base, body });
        });
        res.on('error', (e) => done(new ApiError('ERR_API_UNREACHABLE', `${req.method} ${req.path}: ${e.message}`)));
      });
      r.on('error', (e) => done(new ApiError('ERR_API_UNREACHABLE', `${req.method} ${req.path}: ${e.message}`)));
      req.signal?.addEventListener('abort', onAbort, { once: true });
      r.end(payload);
    });
  }

  /** Splits a watch stream into lines (each at most `maxLine` bytes) and hands on JSON objects. */
  #readLines(res: http.IncomingMessage, maxLine: number, onObject: (obj: Record<string, unknown>) => void, onEnd: () => void, onError: (e: ApiError) => void): void {
    let pending: Buffer[] = [];
    let pendingSize = 0;
    const emit = (line: Buffer): void => {
      if (line.length === 0) return;
      let obj: unknown;
      try {
        obj = JSON.parse(line.toString('utf8'));
      } catch {
        return;
      }
      if (typeof obj === 'object' && obj !== null && !Array.isArray(obj)) onObject(obj as Record<string, unknown>);
    };
    res.on('data', (chunk: Buffer) => {
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
        const part = chunk.subarray(start, nl);
        start = nl + 1;
        if (pendingSize + part.length > maxLine) return onError(new ApiError('ERR_API_TOO_LARGE', `watch event over ${maxLine} bytes`));
        if (pending.length > 0) {
          pending.push(part);
          emit(Buffer.concat(pending));
          pending = [];
          pendingSize = 0;
        } else emit(part);
      }
      const rest = chunk.subarray(start);
      if (rest.length > 0) {
        pendingSize += rest.length;
        if (pendingSize > maxLine) return onError(new ApiError('ERR_API_TOO_LARGE', `watch event over ${maxLine} bytes`));
        pending.push(Buffer.from(rest));
      }
    });
    res.on('end', () => {
      if (pending.length > 0) emit(Buffer.concat(pending));
      onEnd();
    });
    res.on('error', (e) => onError(new ApiError('ERR_API_UNREACHABLE', `watch: ${e.message}`)));
    res.on('close', () => {
      if (!res.complete) onError(new ApiError('ERR_API_UNREACHABLE', 'watch: connection closed mid-stream'));
    });
  }
}
