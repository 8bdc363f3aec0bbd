/**
 * The HTTP GET seam of the URL source: one small interface (so tests and other transports can
 * stand in) and its node:http/https implementation with a body size limit. The request timeout
 * is the caller's: it aborts `signal` from its injected clock.
 */
import http from 'node:http';
import https from 'node:https';
import { ConfigError } from '../../shared/manifest/config-errors.js';

export interface FetchedManifest {
  status: number;
  statusText: string;
  body: string;
}

export interface ManifestFetcher {
  /**
   * GETs `url`. Resolves with any HTTP status (the caller judges it); rejects with a ConfigError:
   * ERR_MANIFEST_FETCH (connect/abort/protocol error) or ERR_MANIFEST_TOO_LARGE (body over maxBytes).
   */
  get(url: string, opts: { signal: AbortSignal; maxBytes: number; headers: Readonly<Record<string, string>> }): Promise<FetchedManifest>;
}

export const nodeHttpFetcher: ManifestFetcher = Object.freeze({
  get(url: string, opts: { signal: AbortSignal; maxBytes: number; headers: Readonly<Record<string, string>> }): Promise<FetchedManifest> {
    return new Promise<FetchedManifest>((resolve, reject) => {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        reject(new ConfigError('ERR_MANIFEST_FETCH', url, 'invalid URL'));
        return;
      }
      const mod = parsed.protocol === 'https:' ? https : parsed.protocol === 'http:' ? http : undefined;
      if (mod === undefined) {
        reject(new ConfigError('ERR_MANIFEST_FETCH', url, `unsupported URL scheme ${parsed.protocol}`));
        return;
      }
      const fail = (e: unknown): void => {
        const why = opts.signal.aborted ? 'request timed out or was cancelled' : e instanceof Error ? e.message : String(e);
        reject(e instanceof ConfigError ? e : new ConfigError('ERR_MANIFEST_FETCH', url, why));
      };
      const req = mod.get(parsed, { signal: opts.signal, headers: { ...opts.headers } }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > opts.maxBytes) {
            res.destroy();
            req.destroy();
            fail(new ConfigError('ERR_MANIFEST_TOO_LARGE', url, `response body exceeds ${opts.maxBytes} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('error', fail);
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', body: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.on('error', fail);
    });
  },
});
