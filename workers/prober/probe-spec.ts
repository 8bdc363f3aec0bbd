/**
 * A container probe (V1Probe) normalised once, when the probe worker is created: API defaults
 * applied, the handler reduced to one tagged variant, HTTP headers pre-built. Probe workers read
 * only this frozen value on the hot path, never the V1Probe again.
 *
 * Defaults are the API server's (SetDefaults_Probe): timeout 1 s, period 10 s, success 1,
 * failure 3, initial delay 0. A zero or negative value counts as unset, as API defaulting does.
 * The API rejects successThreshold != 1 for liveness and startup; pods that bypass validation
 * (static pods from files) are normalised to 1 here rather than rejected.
 */
import type { IntOrString, V1Probe } from '@kubernetes/client-node';
import type { ProbeType } from '../../src/shared/protocol/probe-update.js';

/** What the kubelet sends as User-Agent (`kube-probe/<major>.<minor>`) unless a probe header sets one. */
export const DEFAULT_PROBE_USER_AGENT = 'kube-probe/1.31';

export const PROBE_DEFAULTS = Object.freeze({
  initialDelaySeconds: 0,
  timeoutSeconds: 1,
  periodSeconds: 10,
  successThreshold: 1,
  failureThreshold: 3,
});

/** HTTP request headers as node:http takes them (lower-case names; repeated names as arrays). */
export type ProbeHttpHeaders = Readonly<Record<string, string | string[]>>;

export type ProbeHandler =
  | { readonly kind: 'exec'; readonly command: readonly string[] }
  | {
      readonly kind: 'httpGet';
      readonly scheme: 'http' | 'https';
      /** '' = the pod IP (host IP for host-network pods). */
      readonly host: string;
      readonly port: IntOrString;
      /** Always starts with '/'; may carry a query string. */
      readonly path: string;
      readonly headers: ProbeHttpHeaders;
    }
  | { readonly kind: 'tcpSocket'; readonly host: string; readonly port: IntOrString }
  | { readonly kind: 'grpc'; readonly port: number; readonly service: string }
  /** No handler set: the API forbids it; the prober reports an error (the result is discarded). */
  | { readonly kind: 'none' };

export interface ProbeSpec {
  readonly handler: ProbeHandler;
  readonly initialDelaySeconds: number;
  readonly timeoutSeconds: number;
  readonly periodSeconds: number;
  readonly successThreshold: number;
  readonly failureThreshold: number;
}

function positiveOr(v: number | undefined, dflt: number): number {
  return v !== undefined && Number.isFinite(v) && v > 0 ? Math.floor(v) : dflt;
}

/** Normalise a V1Probe for `type`; `userAgent` is the default User-Agent for HTTP probes. */
export function normalizeProbe(probe: V1Probe, type: ProbeType, userAgent = DEFAULT_PROBE_USER_AGENT): ProbeSpec {
  const successThreshold = type === 'readiness' ? positiveOr(probe.successThreshold, PROBE_DEFAULTS.successThreshold) : 1;
  return Object.freeze({
    handler: normalizeHandler(probe, userAgent),
    initialDelaySeconds: Math.max(0, Math.floor(probe.initialDelaySeconds ?? 0)),
    timeoutSeconds: positiveOr(probe.timeoutSeconds, PROBE_DEFAULTS.timeoutSeconds),
    periodSeconds: positiveOr(probe.periodSeconds, PROBE_DEFAULTS.periodSeconds),
    successThreshold,
    failureThreshold: positiveOr(probe.failureThreshold, PROBE_DEFAULTS.failureThreshold),
  });
}

function normalizeHandler(probe: V1Probe, userAgent: string): ProbeHandler {
  if (probe.exec) return Object.freeze({ kind: 'exec', command: Object.freeze([...(probe.exec.command ?? [])]) });
  if (probe.httpGet) {
    const g = probe.httpGet;
    return Object.freeze({
      kind: 'httpGet',
      scheme: (g.scheme ?? 'HTTP').toLowerCase() === 'https' ? 'https' : 'http',
      host: g.host ?? '',
      port: g.port,
      path: normalizePath(g.path ?? ''),
      headers: buildHeaders(g.httpHeaders ?? [], userAgent),
    });
  }
  if (probe.tcpSocket) return Object.freeze({ kind: 'tcpSocket', host: probe.tcpSocket.host ?? '', port: probe.tcpSocket.port });
  if (probe.grpc) return Object.freeze({ kind: 'grpc', port: probe.grpc.port, service: probe.grpc.service ?? '' });
  return Object.freeze({ kind: 'none' });
}

function normalizePath(path: string): string {
  if (path === '') return '/';
  return path.startsWith('/') ? path : `/${path}`;
}

/**
 * The kubelet's header rules: every httpHeaders entry is added (repeats become a list; a `Host`
 * entry sets the request host); User-Agent defaults to kube-probe/x.y and Accept to `*\/*` unless
 * the probe sets them; an Accept header set to '' removes Accept altogether.
 */
export function buildHeaders(list: ReadonlyArray<{ name: string; value: string }>, userAgent: string): ProbeHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (const { name, value } of list) {
    const key = name.toLowerCase();
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else if (key === 'host') out[key] = value;
    else out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  if (out['user-agent'] === undefined) out['user-agent'] = userAgent;
  const accept = out['accept'];
  if (accept === undefined) out['accept'] = '*/*';
  else if (accept === '' || (Array.isArray(accept) && accept[0] === '')) delete out['accept'];
  return Object.freeze(out);
}
