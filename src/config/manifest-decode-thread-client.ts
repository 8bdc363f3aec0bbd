/**
 * The agent's {@link ManifestDecoder}: decodes manifests on a thread of its own, so untrusted
 * text never blocks the main thread (the sync loop, the HTTP server) for longer than it takes to
 * post the text and receive the pods.
 *
 * Bounds, per call: `timeoutMs` of the injected clock (default 10 s) and the thread's heap
 * (`maxHeapMb`, default 512 MiB, a worker_threads resource limit). A call that exceeds either
 * resolves with ERR_MANIFEST_TOO_LARGE naming the origin; the thread is terminated and a fresh
 * one is started for the next call. Decoding is already bounded by the decode budget
 * (manifest-decode.ts); these limits catch what a budget cannot (a YAML merge-key bomb is
 * quadratic in the parser itself).
 *
 * Calls run one at a time, in order (a timeout must only fail the call that caused it). The
 * thread is unref'd while idle, so an idle decoder never keeps the process alive.
 *
 * Lifecycle: idle ──decode──► busy ──result──► idle; busy ──timeout / thread died──► (terminate)
 * ──► no thread (the next call starts one); close() ──► closed (calls resolve with an error).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { wrap, releaseProxy, type Remote } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { Clock } from '../clock/clock.js';
import type { Logger } from '../logging/logger.js';
import { ConfigError } from './config-errors.js';
import { fromTransfer, type ManifestDecoder } from './manifest-decoder.js';
import type { ManifestDecodeApi } from './manifest-decode-protocol.js';
import type { ManifestContext, ManifestResult } from './manifest-pods.js';

export interface ThreadManifestDecoderOptions {
  clock: Clock;
  logger: Logger;
  /** Longest one decode may take on the injected clock (default 10 s). */
  timeoutMs?: number;
  /** Heap limit of the decoder thread in MiB (default 512). */
  maxHeapMb?: number;
  /** The thread's entry file (default: the built workers/manifest-decode-thread.js). */
  threadFile?: string;
}

export const THREAD_DECODER_DEFAULTS = Object.freeze({
  timeoutMs: 10_000,
  maxHeapMb: 512,
  threadFile: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../workers/manifest-decode-thread.js'),
});

interface DecoderThread {
  worker: Worker;
  api: Remote<ManifestDecodeApi>;
  /** Settles when the thread exits or fails (out of memory, crash), with the reason. */
  died: Promise<string>;
}

export class ThreadManifestDecoder implements ManifestDecoder {
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #timeoutMs: number;
  readonly #maxHeapMb: number;
  readonly #threadFile: string;
  #thread: DecoderThread | undefined;
  #tail: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Termination of threads stopped after a breach (awaited by close(), not by the call). */
  #terminations: Promise<unknown>[] = [];
  /** Threads replaced after a timeout or a death (tests and logs). */
  #replaced = 0;

  constructor(opts: ThreadManifestDecoderOptions) {
    if (!opts?.clock || !opts.logger) throw new ConfigError('ERR_CONFIG_OPTION', '', 'manifest decoder: clock and logger are required');
    this.#clock = opts.clock;
    this.#log = opts.logger.with({ component: 'manifest-decoder' });
    this.#timeoutMs = opts.timeoutMs ?? THREAD_DECODER_DEFAULTS.timeoutMs;
    this.#maxHeapMb = opts.maxHeapMb ?? THREAD_DECODER_DEFAULTS.maxHeapMb;
    this.#threadFile = opts.threadFile ?? THREAD_DECODER_DEFAULTS.threadFile;
    if (!(this.#timeoutMs > 0) || !(this.#maxHeapMb >= 16)) {
      throw new ConfigError('ERR_CONFIG_OPTION', '', 'manifest decoder: timeoutMs must be > 0 and maxHeapMb >= 16');
    }
  }

  /** How many times a thread was replaced after exceeding a limit or dying. */
  get replacedThreads(): number {
    return this.#replaced;
  }

  decode(text: string, ctx: ManifestContext): Promise<ManifestResult> {
    const run = this.#tail.then(() => this.#run(text, ctx));
    this.#tail = run;
    return run;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail;
    await this.#stop();
    await Promise.allSettled(this.#terminations);
  }

  #start(): DecoderThread {
    const worker = new Worker(this.#threadFile, {
      resourceLimits: { maxOldGenerationSizeMb: this.#maxHeapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    });
    const died = new Promise<string>((resolve) => {
      worker.once('error', (e: unknown) => resolve(e instanceof Error ? `${Reflect.get(e, 'code') ?? e.name}: ${e.message}` : String(e)));
      worker.once('exit', (code) => resolve(`decoder thread exited with code ${code}`));
    });
    worker.unref();
    return { worker, api: wrap<ManifestDecodeApi>(nodeEndpoint(worker)), died };
  }

  async #stop(): Promise<void> {
    const t = this.#thread;
    this.#thread = undefined;
    if (t === undefined) return;
    t.api[releaseProxy]();
    await t.worker.terminate();
  }

  async #run(text: string, ctx: ManifestContext): Promise<ManifestResult> {
    if (this.#closed) return { ok: false, error: new ConfigError('ERR_MANIFEST_PARSE', ctx.origin, 'manifest decoder is closed') };
    const t = (this.#thread ??= this.#start());
    t.worker.ref();
    let timer: { cancel(): void } | undefined;
    try {
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = this.#clock.setTimer(this.#timeoutMs, () => resolve('timeout'));
      });
      const outcome = await Promise.race([
        Promise.resolve(t.api.decode(text, ctx)).then((r) => ({ r }), (e: unknown) => ({ died: e instanceof Error ? e.message : String(e) })),
        t.died.then((why) => ({ died: why })),
        timeout,
      ]);
      if (outcome !== 'timeout' && 'r' in outcome) return fromTransfer(outcome.r);
      const why = outcome === 'timeout' ? `decoding took longer than ${this.#timeoutMs} ms` : `decoding failed: ${outcome.died}`;
      this.#replaced++;
      this.#log.error('Manifest decoder thread stopped; a new one will take the next manifest', { origin: ctx.origin, reason: why });
      // Answer now; the thread may take a moment to die (close() waits for it).
      this.#terminations.push(this.#stop());
      return { ok: false, error: new ConfigError('ERR_MANIFEST_TOO_LARGE', ctx.origin, `${why} (limits: ${this.#timeoutMs} ms, ${this.#maxHeapMb} MiB heap)`) };
    } finally {
      timer?.cancel();
      if (this.#thread === t) t.worker.unref();
    }
  }
}
