/**
 * The kubelet's main API client (the one with --kube-api-qps / --kube-api-burst): every request
 * takes a token from one {@link RequestThrottle} first, including each retry; answers 429 and
 * 5xx are retried with exponential backoff (200 ms doubling to 5 s, or the server's
 * Retry-After, capped at 10 s) up to `maxRetries` times, then fail as ApiError. Transport
 * failures (server down) are not retried here: the callers (reflector, status manager) own
 * their backoff, so nothing loops hot while the server is away.
 *
 * HTTP statuses become ApiError codes here, once (api-errors.ts). Each request is reported to
 * `onRequest` (verb, resource, status code or "error") for shardlet_api_requests_total.
 */
import type { Clock } from '../../shared/clock/clock.js';
import { ApiError, apiErrorCodeOfStatus, isRetriableStatus } from './api-errors.js';
import type { ObjectListWatchers, ServiceListWatchers, TokenIssuer, IssuedToken, NamespacedObjectResource, PodDeleter, PodList, PodListWatcher, PodRef, PodStatusWriter, RequestOptions, TokenRequestSpec, WatchEnd, WatchEvent } from './api-roles.js';
import type { ApiRequest, ApiResponse, ApiTransport } from './api-transport.js';
import type { RequestThrottle } from './token-bucket.js';
import { nextBackoffMs } from '../../shared/backoff/exponential-backoff.js';

export interface ApiClientOptions {
  transport: ApiTransport;
  throttle: RequestThrottle;
  clock: Clock;
  nodeName: string;
  /** Observer of every request sent: verb (list, watch, patch, delete), resource (pods, pods/status), code ("200", "error"). */
  onRequest?: (verb: string, resource: string, code: string) => void;
  maxRetries?: number;
  requestTimeoutMs?: number;
  /** Bound on a pod list body (default {@link API_CLIENT_DEFAULTS}.maxListBytes). */
  maxListBytes?: number;
  /** Bound on one watch event (etcd's object limit is 1.5 MiB). */
  maxWatchEventBytes?: number;
}

export const API_CLIENT_DEFAULTS = Object.freeze({
  maxRetries: 5,
  requestTimeoutMs: 30_000,
  /**
   * Bound on the pod list body, which is parsed in one JSON.parse on the main thread (the sync
   * loop waits meanwhile). 32 MiB holds ~8,000 API-defaulted pods of 4 KiB (a dense node's whole
   * set, terminal pods included) and parses in ~0.3–1 s on a 2-core VM (~30 ms/MiB measured with
   * 1.5 KiB pods). A larger list fails as ERR_API_TOO_LARGE and the reflector backs off and
   * retries (800 ms → 30 s): the node keeps its pods, never blocks for many seconds.
   */
  maxListBytes: 32 * 1024 * 1024,
  maxWatchEventBytes: 4 * 1024 * 1024,
  retryInitialMs: 200,
  retryMaxMs: 5_000,
  retryAfterCapMs: 10_000,
  /** Bound on the answer of a PATCH/DELETE (the server returns the whole pod; we drop it unread). */
  maxWriteAnswerBytes: 16 * 1024 * 1024,
});

const STRATEGIC_MERGE = 'application/strategic-merge-patch+json';

function encodeSegment(s: string): string {
  return encodeURIComponent(s);
}

export class ApiClient implements PodListWatcher, PodStatusWriter, PodDeleter, ObjectListWatchers, ServiceListWatchers, TokenIssuer {
  readonly #o: ApiClientOptions;
  readonly #maxRetries: number;
  readonly #timeoutMs: number;

  constructor(opts: ApiClientOptions) {
    if (!opts?.transport || !opts.throttle || !opts.clock) throw new TypeError('ApiClient: transport, throttle and clock are required');
    if (typeof opts.nodeName !== 'string' || opts.nodeName === '') throw new TypeError('ApiClient: nodeName is required');
    this.#o = opts;
    this.#maxRetries = opts.maxRetries ?? API_CLIENT_DEFAULTS.maxRetries;
    this.#timeoutMs = opts.requestTimeoutMs ?? API_CLIENT_DEFAULTS.requestTimeoutMs;
  }

  get throttle(): RequestThrottle {
    return this.#o.throttle;
  }

  async listPods(resourceVersion: string, signal?: AbortSignal): Promise<PodList> {
    return this.#list('pods', '/api/v1/pods', `spec.nodeName=${this.#o.nodeName}`, resourceVersion, signal);
  }

  watchPods(resourceVersion: string, timeoutSeconds: number, onEvent: (ev: WatchEvent) => void, signal?: AbortSignal): Promise<WatchEnd> {
    return this.#watch('pods', '/api/v1/pods', `spec.nodeName=${this.#o.nodeName}`, resourceVersion, timeoutSeconds, onEvent, signal);
  }

  /**
   * A list-watcher of ONE configMap or secret (fieldSelector metadata.name, as the kubelet's
   * watch-based managers do: the Node authorizer allows exactly the objects its pods refer to).
   */
  objectListWatcher(resource: NamespacedObjectResource, namespace: string, name: string): PodListWatcher {
    const path = `/api/v1/namespaces/${encodeSegment(namespace)}/${resource}`;
    const selector = `metadata.name=${name}`;
    return {
      listPods: (rv, signal) => this.#list(resource, path, selector, rv, signal),
      watchPods: (rv, timeoutSeconds, onEvent, signal) => this.#watch(resource, path, selector, rv, timeoutSeconds, onEvent, signal),
    };
  }

  /** A list-watcher of every Service, all namespaces (the kubelet's service informer: no selector). */
  serviceListWatcher(): PodListWatcher {
    return {
      listPods: (rv, signal) => this.#list('services', '/api/v1/services', '', rv, signal),
      watchPods: (rv, timeoutSeconds, onEvent, signal) => this.#watch('services', '/api/v1/services', '', rv, timeoutSeconds, onEvent, signal),
    };
  }

  /** POST serviceaccounts/NAME/token (TokenRequest), bound to a pod; returns the token and its expiry. */
  async createServiceAccountToken(req: TokenRequestSpec, opts: RequestOptions = {}): Promise<IssuedToken> {
    const res = await this.#send('create', 'serviceaccounts/token', {
      method: 'POST',
      path: `/api/v1/namespaces/${encodeSegment(req.namespace)}/serviceaccounts/${encodeSegment(req.serviceAccountName)}/token`,
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          audiences: req.audience === '' ? [] : [req.audience],
          expirationSeconds: req.expirationSeconds,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: req.pod.name, uid: req.pod.uid },
        },
      },
      timeoutMs: this.#timeoutMs,
      maxBodyBytes: 1024 * 1024,
      parseBody: true,
      ...(opts.signal ? { signal: opts.signal } : {}),
    }, opts);
    const status = (res.body as { status?: { token?: unknown; expirationTimestamp?: unknown } } | undefined)?.status;
    if (typeof status?.token !== 'string' || typeof status.expirationTimestamp !== 'string') throw new ApiError('ERR_API_DECODE', 'TokenRequest: no status.token / expirationTimestamp');
    return { token: status.token, expirationTimestamp: status.expirationTimestamp };
  }

  async #list(resource: string, path: string, fieldSelector: string, resourceVersion: string, signal?: AbortSignal): Promise<PodList> {
    const res = await this.#send('list', resource, {
      method: 'GET',
      path,
      query: { fieldSelector, resourceVersion },
      timeoutMs: this.#timeoutMs * 2,
      maxBodyBytes: this.#o.maxListBytes ?? API_CLIENT_DEFAULTS.maxListBytes,
      parseBody: true,
      ...(signal ? { signal } : {}),
    }, {});
    const body = res.body as { items?: unknown; metadata?: { resourceVersion?: unknown } } | undefined;
    if (typeof body !== 'object' || body === null || !Array.isArray(body.items ?? [])) throw new ApiError('ERR_API_DECODE', `${resource} list: not a list`);
    const rv = body.metadata?.resourceVersion;
    if (typeof rv !== 'string' || rv === '') throw new ApiError('ERR_API_DECODE', `${resource} list: no metadata.resourceVersion`);
    return { items: (body.items ?? []) as unknown[], resourceVersion: rv };
  }

  async #watch(resource: string, path: string, fieldSelector: string, resourceVersion: string, timeoutSeconds: number, onEvent: (ev: WatchEvent) => void, signal?: AbortSignal): Promise<WatchEnd> {
    if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1) throw new RangeError(`watch timeoutSeconds must be a positive integer, got ${timeoutSeconds}`);
    await this.#o.throttle.acquire('normal', signal);
    const req: ApiRequest = {
      method: 'GET',
      path,
      query: { fieldSelector, resourceVersion, watch: 'true', allowWatchBookmarks: 'true', timeoutSeconds: String(timeoutSeconds) },
      // The server ends the stream at timeoutSeconds; the client bound only catches a dead peer.
      timeoutMs: timeoutSeconds * 1000 + this.#timeoutMs,
      maxBodyBytes: this.#o.maxWatchEventBytes ?? API_CLIENT_DEFAULTS.maxWatchEventBytes,
      parseBody: true,
      ...(signal ? { signal } : {}),
    };
    let res: ApiResponse;
    try {
      res = await this.#o.transport.watch(req, (obj) => {
        const type = obj['type'];
        const object = obj['object'];
        if ((type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED' || type === 'BOOKMARK' || type === 'ERROR') && typeof object === 'object' && object !== null) {
          onEvent({ type, object: object as Record<string, unknown> });
        }
      });
    } catch (err) {
      this.#o.onRequest?.('watch', resource, 'error');
      throw err;
    }
    this.#o.onRequest?.('watch', resource, String(res.status));
    return res.status === 200 ? { kind: 'closed' } : { kind: 'status', status: res.status };
  }

  async patchPodStatus(ref: PodRef, status: Record<string, unknown>, opts: RequestOptions = {}): Promise<void> {
    await this.#send('patch', 'pods/status', {
      method: 'PATCH',
      path: `/api/v1/namespaces/${encodeSegment(ref.namespace)}/pods/${encodeSegment(ref.name)}/status`,
      body: { metadata: { uid: ref.uid }, status },
      contentType: STRATEGIC_MERGE,
      timeoutMs: this.#timeoutMs,
      maxBodyBytes: API_CLIENT_DEFAULTS.maxWriteAnswerBytes,
      parseBody: false,
      ...(opts.signal ? { signal: opts.signal } : {}),
    }, opts);
  }

  async deletePod(ref: PodRef, opts: RequestOptions = {}): Promise<void> {
    await this.#send('delete', 'pods', {
      method: 'DELETE',
      path: `/api/v1/namespaces/${encodeSegment(ref.namespace)}/pods/${encodeSegment(ref.name)}`,
      body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: ref.uid } },
      timeoutMs: this.#timeoutMs,
      maxBodyBytes: API_CLIENT_DEFAULTS.maxWriteAnswerBytes,
      parseBody: false,
      ...(opts.signal ? { signal: opts.signal } : {}),
    }, opts);
  }

  /**
   * Throttle, send, retry 429/5xx with backoff; a final non-2xx becomes ApiError. Public for the
   * other object clients built on this one (object-api.ts: nodes, leases, mirror pods, events),
   * so every request of a client goes through its one throttle and retry policy.
   */
  send(verb: string, resource: string, req: ApiRequest, opts: RequestOptions = {}): Promise<ApiResponse> {
    return this.#send(verb, resource, req, opts);
  }

  async #send(verb: string, resource: string, req: ApiRequest, opts: RequestOptions): Promise<ApiResponse> {
    let delay: number = API_CLIENT_DEFAULTS.retryInitialMs;
    for (let attempt = 0; ; attempt++) {
      if (!(attempt === 0 && opts.tokenHeld)) await this.#o.throttle.acquire(opts.priority ?? 'normal', req.signal);
      let res: ApiResponse;
      try {
        res = await this.#o.transport.request(req);
      } catch (err) {
        this.#o.onRequest?.(verb, resource, 'error');
        throw err;
      }
      this.#o.onRequest?.(verb, resource, String(res.status));
      if (res.status >= 200 && res.status < 300) return res;
      if (isRetriableStatus(res.status) && attempt < this.#maxRetries) {
        const wait = res.retryAfterMs !== undefined ? Math.min(res.retryAfterMs, API_CLIENT_DEFAULTS.retryAfterCapMs) : delay;
        delay = nextBackoffMs(delay, { maxMs: API_CLIENT_DEFAULTS.retryMaxMs });
        try {
          await this.#o.clock.sleep(wait, req.signal);
        } catch {
          throw new ApiError('ERR_API_ABORTED', `${req.method} ${req.path}: aborted during retry backoff`);
        }
        continue;
      }
      const msg = statusMessage(res.body);
      throw new ApiError(apiErrorCodeOfStatus(res.status), `${req.method} ${req.path}: ${res.status}${msg ? `: ${msg}` : ''}`, res.status);
    }
  }
}

/** The message of a metav1.Status body, bounded. */
function statusMessage(body: unknown): string {
  const m = (body as { message?: unknown } | undefined)?.message;
  return typeof m === 'string' ? m.slice(0, 500) : '';
}
