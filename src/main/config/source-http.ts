/**
 * The manifest URL source (kubelet --manifest-url; pkg/kubelet/config/http.go). Polls the URL
 * and accepts a single Pod, a PodList / List, or multi-document YAML of Pods, with the static-pod
 * conventions (source "http"; the uid hashes the URL and the pod, not the node name).
 *
 * Timeline: start() ──► GET ──► (pollMs after it finished) ──► GET ──► ...
 *
 * Per response:
 * - transport error, timeout, non-200, body over maxBytes: reported, state kept (never drop pods
 *   because the server blipped). Repeated failures are logged at error level 3 times, then at
 *   v(4), as the kubelet does.
 * - 200 with an empty body: an empty SET (the kubelet's behaviour: "no pods").
 * - body identical to the previous one (same digest): nothing to do (the SET it produced stands);
 *   a body is decoded at most once however often it is served.
 * - decoding runs on the injected {@link ManifestDecoder} (the agent's own decoder thread, with
 *   time and memory limits), never on the main thread.
 * - body that fails to parse or validate: reported, the last valid SET stands.
 * - otherwise: a SET of the body's pods.
 * No SET is delivered after close() resolves.
 */
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { ConfigError, isConfigError, type ConfigErrorHandler } from '../../shared/manifest/config-errors.js';
import { nodeHttpFetcher, type ManifestFetcher } from './manifest-fetch.js';
import { inlineManifestDecoder, type ManifestDecoder } from '../../shared/manifest/manifest-decoder.js';
import { manifestDigest } from '../../shared/manifest/manifest-digest.js';
import { HttpSource, type PodSetSink, type PodSource } from '../../shared/manifest/pod-update.js';

export interface HttpSourceOptions {
  url: string;
  nodeName: string;
  sink: PodSetSink;
  clock: Clock;
  logger: Logger;
  onError?: ConfigErrorHandler;
  /** Poll period (kubelet --http-check-frequency, default 20 s). */
  pollMs?: number;
  /** Per-request timeout (the kubelet's client uses 10 s). */
  timeoutMs?: number;
  maxBytes?: number;
  /** Extra request headers (kubelet --manifest-url-header). */
  headers?: Readonly<Record<string, string>>;
  fetcher?: ManifestFetcher;
  /** Where bodies are decoded (default: inline; the agent passes its decoder thread). */
  decoder?: ManifestDecoder;
}

export const HTTP_SOURCE_DEFAULTS = Object.freeze({
  pollMs: 20_000,
  timeoutMs: 10_000,
  maxBytes: 10 * 1024 * 1024,
});

export class HttpSourceImpl implements PodSource {
  readonly name = HttpSource;
  readonly #url: string;
  readonly #nodeName: string;
  readonly #sink: PodSetSink;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #onError: ConfigErrorHandler;
  readonly #pollMs: number;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #fetcher: ManifestFetcher;
  readonly #decoder: ManifestDecoder;
  #started = false;
  #closed = false;
  #timer: TimerHandle | undefined;
  #inflight: AbortController | undefined;
  #running: Promise<void> | undefined;
  /** Digest of the last body received with status 200 (decoded or not); undefined before the first. */
  #lastDigest: string | undefined;
  #failureLogs = 0;

  constructor(opts: HttpSourceOptions) {
    if (!opts?.url || !opts.nodeName || !opts.sink || !opts.clock || !opts.logger) {
      throw new ConfigError('ERR_CONFIG_OPTION', '', 'http source: url, nodeName, sink, clock and logger are required');
    }
    this.#url = opts.url;
    this.#nodeName = opts.nodeName;
    this.#sink = opts.sink;
    this.#clock = opts.clock;
    this.#log = opts.logger.with({ source: HttpSource });
    this.#onError = opts.onError ?? (() => {});
    this.#pollMs = opts.pollMs ?? HTTP_SOURCE_DEFAULTS.pollMs;
    this.#timeoutMs = opts.timeoutMs ?? HTTP_SOURCE_DEFAULTS.timeoutMs;
    this.#maxBytes = opts.maxBytes ?? HTTP_SOURCE_DEFAULTS.maxBytes;
    this.#headers = opts.headers ?? {};
    this.#fetcher = opts.fetcher ?? nodeHttpFetcher;
    this.#decoder = opts.decoder ?? inlineManifestDecoder;
    if (!(this.#pollMs > 0) || !(this.#timeoutMs > 0) || !(this.#maxBytes > 0)) {
      throw new ConfigError('ERR_CONFIG_OPTION', '', 'http source: pollMs, timeoutMs and maxBytes must be > 0');
    }
  }

  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#log.v(1).info('Watching URL', { url: this.#url });
    void this.pollNow();
  }

  /** Polls now (or joins the poll in progress); resolves when it is done. */
  pollNow(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#running) return this.#running;
    this.#timer?.cancel();
    const run = this.#poll().finally(() => {
      this.#running = undefined;
      if (!this.#closed) this.#timer = this.#clock.setTimer(this.#pollMs, () => void this.pollNow(), { unref: true });
    });
    this.#running = run;
    return run;
  }

  async close(): Promise<void> {
    if (this.#closed) return this.#running;
    this.#closed = true;
    this.#timer?.cancel();
    this.#inflight?.abort(new ConfigError('ERR_MANIFEST_FETCH', this.#url, 'source closed'));
    await this.#running;
  }

  async #poll(): Promise<void> {
    const ac = new AbortController();
    this.#inflight = ac;
    const timeout = this.#clock.setTimer(this.#timeoutMs, () => ac.abort(new ConfigError('ERR_MANIFEST_FETCH', this.#url, `request timed out after ${this.#timeoutMs} ms`)));
    try {
      const res = await this.#fetcher.get(this.#url, { signal: ac.signal, maxBytes: this.#maxBytes, headers: this.#headers });
      if (this.#closed) return;
      if (res.status !== 200) throw new ConfigError('ERR_MANIFEST_FETCH', this.#url, `${res.status} ${res.statusText}`.trim());
      await this.#handleBody(res.body);
      if (this.#failureLogs > 0) this.#log.info('Successfully read pods from URL', { url: this.#url });
      this.#failureLogs = 0;
    } catch (e) {
      if (this.#closed) return;
      const err = isConfigError(e) ? e : new ConfigError('ERR_MANIFEST_FETCH', this.#url, e instanceof Error ? e.message : String(e));
      this.#reportFailure(err);
    } finally {
      timeout.cancel();
      this.#inflight = undefined;
    }
  }

  async #handleBody(body: string): Promise<void> {
    const digest = manifestDigest(body);
    if (body.length === 0) {
      this.#lastDigest = digest;
      this.#sink.set([]);
      this.#log.v(2).info('Zero-length manifest received, no pods', { url: this.#url });
      return;
    }
    if (digest === this.#lastDigest) return;
    this.#lastDigest = digest;
    const r = await this.#decoder.decode(body, { source: HttpSource, origin: this.#url, nodeName: this.#nodeName, allowLists: true });
    if (this.#closed) return;
    if (!r.ok) {
      // Parsed-but-unusable content is a manifest problem, not a transport blip: always reported.
      this.#log.error('Cannot use manifest', { error: r.error.message, code: r.error.code, origin: this.#url });
      this.#onError(r.error);
      return;
    }
    this.#sink.set(r.pods);
  }

  #reportFailure(err: ConfigError): void {
    if (this.#failureLogs < 3) this.#log.error('Failed to read pods from URL', { error: err.message, code: err.code });
    else if (this.#failureLogs === 3) this.#log.error('Failed to read pods from URL; further failures are logged at v(4)', { error: err.message, code: err.code });
    else this.#log.v(4).info('Failed to read pods from URL', { error: err.message, code: err.code });
    this.#failureLogs++;
    this.#onError(err);
  }
}

export function createHttpSource(opts: HttpSourceOptions): HttpSourceImpl {
  return new HttpSourceImpl(opts);
}
