/**
 * Plain HTTP(S) GETs the control-plane harness makes itself (etcd /health, apiserver /readyz and
 * /metrics): bounded in time and in body size, so a wedged or chatty server fails the caller with
 * a clear error instead of hanging it or filling memory.
 */
import http from 'node:http';
import https from 'node:https';

export interface ClientTls {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

export interface GetResult {
  readonly status: number;
  readonly body: string;
}

export interface GetOptions {
  readonly timeoutMs: number;
  /** Bodies larger than this fail the request (default 64 MiB). */
  readonly maxBytes?: number;
  /** For https URLs: CA to trust and the client certificate to present. */
  readonly tls?: ClientTls;
}

export class HttpGetError extends Error {
  override readonly name = 'HttpGetError';
  readonly code: 'ERR_HARNESS_HTTP_TIMEOUT' | 'ERR_HARNESS_HTTP_TOO_LARGE' | 'ERR_HARNESS_HTTP';
  constructor(code: HttpGetError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

export function httpGet(url: string, opts: GetOptions): Promise<GetResult> {
  const maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) {
          req.destroy(new HttpGetError('ERR_HARNESS_HTTP_TOO_LARGE', `GET ${url}: body over ${maxBytes} bytes`));
          return;
        }
        chunks.push(c);
      });
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.once('error', (err) => reject(err));
    };
    const req =
      u.protocol === 'https:'
        ? https.get(u, { ...(opts.tls ? { ca: opts.tls.ca, cert: opts.tls.cert, key: opts.tls.key } : {}), agent: false }, onResponse)
        : http.get(u, { agent: false }, onResponse);
    req.setTimeout(opts.timeoutMs, () => req.destroy(new HttpGetError('ERR_HARNESS_HTTP_TIMEOUT', `GET ${url}: no answer within ${opts.timeoutMs} ms`)));
    req.once('error', (err) => reject(err instanceof HttpGetError ? err : new HttpGetError('ERR_HARNESS_HTTP', `GET ${url}: ${err.message}`)));
  });
}
