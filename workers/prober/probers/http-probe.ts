/**
 * HTTP GET probes (the kubelet's pkg/probe/http). One new connection per probe (no keep-alive),
 * TLS without certificate verification, one deadline (the probe's timeout, on the injected Clock)
 * covering connect, redirects, headers and the body read.
 *
 * Result rules, as the kubelet:
 *   - status 200–299: success; 300–399 that is not followed: warning (counts as success);
 *     anything else: failure "HTTP probe failed with statuscode: N";
 *   - connection errors and the timeout: failure (not error);
 *   - redirects (301, 302, 303, 307, 308 with a Location) are followed only to the same host
 *     name (port and scheme may change), at most 10; a redirect to another host is not followed
 *     and its 3xx response is the result (warning → success); an 11th redirect is a failure;
 *   - the body is read up to 10 KiB (the rest is discarded, not an error) and becomes the output.
 *     A body read that breaks after the status arrived is an error (result discarded), as the
 *     kubelet returns its read error there.
 */
import http from 'node:http';
import https from 'node:https';
import type { Clock, TimerHandle } from '../../../src/shared/clock/clock.js';
import { ProbeError } from '../prober-errors.js';
import { joinHostPort } from '../probe-port.js';
import type { ProbeHttpHeaders } from '../probe-spec.js';
import { MAX_PROBE_OUTPUT_BYTES, PROBE_SUCCESS, probeErrored, probeFailure, probeWarning, type ProbeOutcome } from '../probe-outcome.js';

export const MAX_PROBE_REDIRECTS = 10;
const FOLLOWED_REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export interface HttpProbeRequest {
  scheme: 'http' | 'https';
  host: string;
  port: number;
  /** Path and optional query, starting with '/'. */
  path: string;
  headers: ProbeHttpHeaders;
  timeoutMs: number;
  signal: AbortSignal;
}

interface Target {
  scheme: 'http' | 'https';
  hostname: string;
  port: number;
  path: string;
}

function urlOf(t: Target): string {
  return `${t.scheme}://${joinHostPort(t.hostname, t.port)}${t.path}`;
}

export function httpProbe(clock: Clock, req: HttpProbeRequest): Promise<ProbeOutcome> {
  return new Promise<ProbeOutcome>((resolve) => {
    const first: Target = { scheme: req.scheme, hostname: req.host, port: req.port, path: req.path };
    let current: http.ClientRequest | undefined;
    let currentUrl = '';
    let done = false;
    let timer: TimerHandle | undefined;
    const finish = (o: ProbeOutcome): void => {
      if (done) return;
      done = true;
      timer?.cancel();
      req.signal.removeEventListener('abort', onAbort);
      current?.destroy();
      resolve(o);
    };
    const onAbort = (): void => finish(probeErrored(new ProbeError('ERR_PROBE_ABORTED', 'probe aborted')));
    if (req.signal.aborted) return onAbort();
    req.signal.addEventListener('abort', onAbort, { once: true });
    timer = clock.setTimer(req.timeoutMs, () =>
      finish(probeFailure(`Get "${currentUrl}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)),
    { unref: true });

    const send = (t: Target, redirects: number): void => {
      currentUrl = urlOf(t);
      const mod = t.scheme === 'https' ? https : http;
      const r = mod.request({
        method: 'GET',
        hostname: t.hostname,
        port: t.port,
        path: t.path,
        headers: req.headers,
        agent: false,
        rejectUnauthorized: false,
      }, (res) => onResponse(t, redirects, res));
      current = r;
      r.on('error', (e: Error) => finish(probeFailure(`Get "${urlOf(t)}": ${e.message}`)));
      r.end();
    };

    const onResponse = (t: Target, redirects: number, res: http.IncomingMessage): void => {
      if (done) return;
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (FOLLOWED_REDIRECTS.has(status) && location !== undefined) {
        const next = redirectTarget(t, location);
        if (next !== undefined && next.hostname === first.hostname) {
          res.resume();
          if (redirects >= MAX_PROBE_REDIRECTS) {
            finish(probeFailure(`Get "${urlOf(next)}": stopped after ${MAX_PROBE_REDIRECTS} redirects`));
            return;
          }
          send(next, redirects + 1);
          return;
        }
      }
      readBounded(res, (err, body) => {
        if (err) finish(probeErrored(new ProbeError('ERR_PROBE_BODY', `reading body of ${urlOf(t)}: ${err.message}`)));
        else finish(classify(status, body, urlOf(t)));
      });
    };

    send(first, 0);
  });
}

function classify(status: number, body: string, url: string): ProbeOutcome {
  if (status >= 200 && status < 300) return body === '' ? PROBE_SUCCESS : { kind: 'success', output: body };
  if (status >= 300 && status < 400) return probeWarning(`Probe terminated redirects, Response body: ${body}`);
  return probeFailure(`HTTP probe failed with statuscode: ${status} (${url})`);
}

/** Resolve a Location against the current target; undefined if it is not an http(s) URL. */
function redirectTarget(from: Target, location: string): Target | undefined {
  let u: URL;
  try {
    u = new URL(location, `${from.scheme}://${joinHostPort(from.hostname, from.port)}${from.path}`);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  const scheme = u.protocol === 'https:' ? 'https' : 'http';
  const hostname = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const port = u.port === '' ? (scheme === 'https' ? 443 : 80) : Number(u.port);
  return { scheme, hostname, port, path: `${u.pathname}${u.search}` };
}

/** Read at most MAX_PROBE_OUTPUT_BYTES of the body; the rest is dropped with the connection. */
function readBounded(res: http.IncomingMessage, cb: (err: Error | undefined, body: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const settle = (err: Error | undefined): void => {
    if (settled) return;
    settled = true;
    const body = chunks.length === 0 ? '' : Buffer.concat(chunks).subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8');
    cb(err, body);
  };
  res.on('data', (chunk: Buffer) => {
    if (settled) return;
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_PROBE_OUTPUT_BYTES) settle(undefined);
  });
  res.on('end', () => settle(undefined));
  res.on('error', (e: Error) => settle(e));
  res.on('close', () => {
    if (!res.complete) settle(new Error('connection closed before the body ended'));
  });
}
