/**
 * httpGet lifecycle handlers (postStart / preStop), as the kubelet's handlerRunner.runHTTPHandler
 * (pkg/kubelet/lifecycle/handlers.go) with NewRequestForHTTPGetAction (pkg/probe/http/request.go):
 *   - host: `httpGet.host`, else the pod's IP (the first of the runtime status's IPs); a
 *     host-network pod without one in the runtime status uses the node's IP (what its API status
 *     shows as podIP; the kubelet would fail "failed to find networking container" there);
 *   - port: a number, or a named container port (ports[].name), or a number written as a string
 *     (probe-port.ts, shared with the prober); an empty string means 80;
 *   - scheme: HTTP or HTTPS (TLS without certificate verification); an HTTPS request answered in
 *     plain HTTP is retried once over HTTP without the Authorization header, with a Warning
 *     event LifecycleHTTPFallback;
 *   - headers: httpHeaders (repeats kept, a Host entry sets the host), User-Agent
 *     kube-lifecycle/<version> and Accept `*\/*` unless set (probe-spec.ts buildHeaders);
 *   - success is ANY HTTP response, whatever its status code (the kubelet only fails on
 *     transport errors); the body is discarded after at most 10 KiB (bounded read);
 *   - redirects are not followed (a 3xx is a response: success);
 *   - a timeout (`timeoutMs` > 0) on the injected clock; 0 = none (postStart, as the kubelet's
 *     client has none; a kill's abort still ends it). preStop is bounded by the grace period.
 * Hostile input: the host, path and header values come from the pod spec; Node's http client
 * rejects header values with control characters and the path is sent as given (no CRLF: an
 * invalid path is a failed hook, never a second request).
 */
import http from 'node:http';
import https from 'node:https';
import type { V1Container, V1HTTPGetAction } from '@kubernetes/client-node';
import type { Clock, TimerHandle } from '../../src/shared/clock/clock.js';
import { joinHostPort, resolveProbePort } from '../prober/probe-port.js';
import { buildHeaders, type ProbeHttpHeaders } from '../prober/probe-spec.js';

export const LIFECYCLE_USER_AGENT = 'kube-lifecycle/1.31';
/** The kubelet's maxRespBodyLength: at most this much of a hook's response body is read. */
export const MAX_HOOK_BODY_BYTES = 10 * 1024;

export interface HttpHookTarget {
  scheme: 'http' | 'https';
  host: string;
  port: number;
  /** Path and query as sent ('/' prefixed). */
  path: string;
  headers: ProbeHttpHeaders;
}

/** The request of an httpGet action, or the error message when it cannot be formed. */
export function httpHookTarget(action: V1HTTPGetAction, container: V1Container, podIPs: readonly string[], hostIP: string | undefined, hostNetwork: boolean): HttpHookTarget | { error: string } {
  let host = action.host ?? '';
  if (host === '') {
    const ip = podIPs[0] ?? (hostNetwork && hostIP ? hostIP : undefined);
    if (ip === undefined || ip === '') return { error: 'failed to find networking container: the pod has no IP' };
    host = ip;
  }
  let port: number;
  if (typeof action.port === 'string' && action.port === '') {
    port = 80;
  } else {
    const p = resolveProbePort(action.port, container);
    if (typeof p !== 'number') return { error: p.message };
    port = p;
  }
  const scheme = (action.scheme ?? 'HTTP').toLowerCase() === 'https' ? 'https' : 'http';
  const raw = action.path ?? '';
  const path = raw.startsWith('/') ? raw : `/${raw}`;
  if (/[\u0000-\u0020\u007f]/.test(path)) return { error: `invalid path ${JSON.stringify(path.slice(0, 200))}` };
  return { scheme, host, port, path, headers: buildHeaders(action.httpHeaders ?? [], LIFECYCLE_USER_AGENT) };
}

export function hookUrl(t: Pick<HttpHookTarget, 'scheme' | 'host' | 'port' | 'path'>): string {
  return `${t.scheme}://${joinHostPort(t.host, t.port)}${t.path}`;
}

export type HttpHookResult = { ok: true; fellBackToHttp: boolean } | { ok: false; error: string };

/**
 * One GET (plus the HTTPS → HTTP fallback). Resolves, never rejects; an abort of `signal`
 * resolves with an error too (the caller checks its signal).
 */
export async function runHttpHook(clock: Clock, target: HttpHookTarget, timeoutMs: number, signal: AbortSignal): Promise<HttpHookResult> {
  const first = await getOnce(clock, target, timeoutMs, signal);
  if (first.ok || target.scheme !== 'https' || !first.plainHttpAnswer) return first.ok ? { ok: true, fellBackToHttp: false } : { ok: false, error: first.error };
  const headers: Record<string, string | string[]> = { ...target.headers };
  delete headers['authorization'];
  const second = await getOnce(clock, { ...target, scheme: 'http', headers }, timeoutMs, signal);
  return second.ok ? { ok: true, fellBackToHttp: true } : { ok: false, error: first.error };
}

type Once = { ok: true } | { ok: false; error: string; plainHttpAnswer: boolean };

function getOnce(clock: Clock, t: HttpHookTarget, timeoutMs: number, signal: AbortSignal): Promise<Once> {
  return new Promise<Once>((resolve) => {
    const url = hookUrl(t);
    let done = false;
    let timer: TimerHandle | undefined;
    let req: http.ClientRequest | undefined;
    const finish = (o: Once): void => {
      if (done) return;
      done = true;
      timer?.cancel();
      signal.removeEventListener('abort', onAbort);
      req?.destroy();
      resolve(o);
    };
    const onAbort = (): void => finish({ ok: false, error: `Get "${url}": context canceled`, plainHttpAnswer: false });
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs > 0) {
      timer = clock.setTimer(timeoutMs, () => finish({ ok: false, error: `Get "${url}": context deadline exceeded`, plainHttpAnswer: false }), { unref: true });
    }
    const mod = t.scheme === 'https' ? https : http;
    try {
      req = mod.request({ method: 'GET', hostname: t.host, port: t.port, path: t.path, headers: t.headers, agent: false, rejectUnauthorized: false }, (res) => {
        // Any response is success; read at most MAX_HOOK_BODY_BYTES of the body, then let it go.
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size >= MAX_HOOK_BODY_BYTES) finish({ ok: true });
        });
        res.on('end', () => finish({ ok: true }));
        res.on('error', () => finish({ ok: true }));
        res.on('close', () => finish({ ok: true }));
      });
    } catch (err) {
      // Invalid header values from the spec (control characters): the hook fails, nothing is sent.
      finish({ ok: false, error: `Get "${url}": ${err instanceof Error ? err.message : String(err)}`, plainHttpAnswer: false });
      return;
    }
    req.on('error', (e: Error & { code?: string }) => {
      // Go: "http: server gave HTTP response to HTTPS client". Node's TLS sees the plain reply as
      // a malformed record: EPROTO.
      const plain = t.scheme === 'https' && e.code === 'EPROTO';
      finish({ ok: false, error: `Get "${url}": ${e.message}`, plainHttpAnswer: plain });
    });
    req.end();
  });
}
