/**
 * The agent's {@link ManifestDecoder}: decodes manifests on a thread of its own, so untrusted
 * text never blocks the main thread (the sync loop, the HTTP server) for longer than it takes to
 * post the text and receive the pods.
 *
 * Bounds, per call: `timeoutMs` of the injected clock (default 10 s) and the thread's heap
 * (`maxHeapMb`, default 512 MiB, a worker_threads resource limit). A call that exceeds either,
 * or whose reply cannot be deserialized here ('messageerror'; the decode bounds nesting so this
 * should not happen), resolves with ERR_MANIFEST_TOO_LARGE naming the origin; the thread is terminated and a fresh
 * one is started for the next call. Decoding is already bounded by the decode budget
 * (manifest-decode.ts); these limits catch what a budget cannot (a YAML merge-key bomb is
 * quadratic in the parser itself).
 *
 * Up to MAX_IN_FLIGHT calls are sent ahead (the thread answers them in order), so a directory of
 * a thousand small files is not a thousand round trips in series. The time limit runs for the
 * oldest unanswered call only, from when it became the oldest (when the thread started on it);
 * on a new thread, from when the thread answered `ready()` (its modules loaded), bounded apart by
 * `startupTimeoutMs`, so a slow thread start on a loaded machine is not blamed on (and does not
 * fail) the first manifest, which a source would then not read again until it changes.
 * On a breach that call alone fails; the calls sent after it are resent to a fresh thread. The
 * thread is unref'd while idle, so an idle decoder never keeps the process alive.
 *
 * Idle exit (issue 15): an isolate with the decoder's modules loaded costs ~24 MiB of RSS, and
 * the sources decode only changed text (a steady node decodes nothing). So the thread is
 * terminated after `idleExitMs` (injected clock) without a call, and the next call starts a new
 * one: what the first manifest after start-up always paid (a thread boot, ~0.1–0.3 s), paid again
 * only after a quiet spell. Decoding never moves to the main thread. The spell is 60 s, not a
 * few: a new thread boots cold (modules loaded, JIT unwarmed) and competes for the cores with the
 * pods it decodes; with a 5 s exit a 50 pods/s churn starting after 10 s of quiet took 185–260 ms
 * from config.seen to Running at p50 instead of 53 ms (bench, w=2, 1,000 pods, same run series).
 *
 * Lifecycle: none ──decode──► busy ──all answered──► idle ──decode──► busy;
 * idle ──idleExitMs──► (terminate) none; busy ──timeout / thread died──►
 * (terminate, blame the oldest call, resend the rest) ──► busy on a new thread;
 * close() ──► (drain) closed: later calls resolve with an error.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { wrap, releaseProxy, type Remote } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { ConfigError } from '../../shared/manifest/config-errors.js';
import { fileResultFromTransfer, fromTransfer, type ManifestDecoder } from '../../shared/manifest/manifest-decoder.js';
import type { FileDecodeRequest, FileDecodeResult } from '../../shared/manifest/manifest-file-read.js';
import type { ManifestDecodeApi } from '../../shared/protocol/manifest-decode-protocol.js';
import type { ManifestContext, ManifestResult } from '../../shared/manifest/manifest-pods.js';

export interface ThreadManifestDecoderOptions {
  clock: Clock;
  logger: Logger;
  /** Longest one decode may take on the injected clock (default 10 s). */
  timeoutMs?: number;
  /** Longest a new thread may take to load its modules, on the injected clock (default 30 s). */
  startupTimeoutMs?: number;
  /** Heap limit of the decoder thread in MiB (default 512). */
  maxHeapMb?: number;
  /** An idle thread exits after this long without a call, on the injected clock (default 60 s). */
  idleExitMs?: number;
  /** The thread's entry file (default: the built workers/manifest-decode-thread.js). */
  threadFile?: string;
}

export const THREAD_DECODER_DEFAULTS = Object.freeze({
  timeoutMs: 10_000,
  startupTimeoutMs: 30_000,
  maxHeapMb: 512,
  idleExitMs: 60_000,
  threadFile: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../workers/manifest-decode-thread.js'),
});

interface DecoderThread {
  worker: Worker;
  api: Remote<ManifestDecodeApi>;
  /** Settles when the thread exits or fails (out of memory, crash), with the reason. */
  died: Promise<string>;
  /** The thread answered `ready()`: the call time limit runs; before, the start-up limit does. */
  ready: boolean;
}

/** One call to the thread: a text to decode, or a file to read and decode. */
interface Job {
  /** The file or URL the call is about (named in errors). */
  origin: string;
  /** Makes the call on `api`; resolves with what settles the caller (not yet run). */
  send(api: Remote<ManifestDecodeApi>): Promise<() => void>;
  /** Settles the caller with an error: the thread broke a limit on this call, or the decoder is closed. */
  fail(error: ConfigError): void;
  /** The thread the job was last sent to (answers from an older thread are ignored). */
  thread?: DecoderThread;
}

/** The decoder thread's young-generation limit in MiB (tests tell its Worker apart by it). */
export const DECODER_THREAD_YOUNG_MB = 32;

/** Calls sent to the thread before earlier ones are answered (hides the round trip). */
const MAX_IN_FLIGHT = 16;

export class ThreadManifestDecoder implements ManifestDecoder {
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #timeoutMs: number;
  readonly #startupTimeoutMs: number;
  readonly #maxHeapMb: number;
  readonly #threadFile: string;
  #thread: DecoderThread | undefined;
  /** Calls not yet sent, in order. */
  readonly #waiting: Job[] = [];
  /** Calls sent to #thread and not answered, in send order (the thread answers in that order). */
  readonly #inflight: Job[] = [];
  /** The time limit of the oldest in-flight call (the one the thread is working on). */
  #timer: TimerHandle | undefined;
  #closed = false;
  #idle: Array<() => void> = [];
  /** Termination of threads stopped after a breach (awaited by close(), not by the call). */
  #terminations: Promise<unknown>[] = [];
  /** Threads replaced after a timeout or a death (tests and logs). */
  #replaced = 0;
  readonly #idleExitMs: number;
  /** Terminates the idle thread when it fires (armed while a thread exists and nothing is queued). */
  #idleTimer: TimerHandle | undefined;
  #started = 0;
  #idleExits = 0;

  constructor(opts: ThreadManifestDecoderOptions) {
    if (!opts?.clock || !opts.logger) throw new ConfigError('ERR_CONFIG_OPTION', '', 'manifest decoder: clock and logger are required');
    this.#clock = opts.clock;
    this.#log = opts.logger.with({ component: 'manifest-decoder' });
    this.#timeoutMs = opts.timeoutMs ?? THREAD_DECODER_DEFAULTS.timeoutMs;
    this.#startupTimeoutMs = opts.startupTimeoutMs ?? THREAD_DECODER_DEFAULTS.startupTimeoutMs;
    this.#maxHeapMb = opts.maxHeapMb ?? THREAD_DECODER_DEFAULTS.maxHeapMb;
    this.#threadFile = opts.threadFile ?? THREAD_DECODER_DEFAULTS.threadFile;
    this.#idleExitMs = opts.idleExitMs ?? THREAD_DECODER_DEFAULTS.idleExitMs;
    if (!(this.#timeoutMs > 0) || !(this.#maxHeapMb >= 16) || !(this.#idleExitMs > 0)) {
      throw new ConfigError('ERR_CONFIG_OPTION', '', 'manifest decoder: timeoutMs and idleExitMs must be > 0 and maxHeapMb >= 16');
    }
  }

  /** Threads started so far (the first call starts one; so does the first call after an idle exit). */
  get startedThreads(): number {
    return this.#started;
  }

  /** Threads terminated for being idle `idleExitMs`. */
  get idleExits(): number {
    return this.#idleExits;
  }

  /** Whether a decoder thread exists now. */
  get threadRunning(): boolean {
    return this.#thread !== undefined;
  }

  /** How many times a thread was replaced after exceeding a limit or dying. */
  get replacedThreads(): number {
    return this.#replaced;
  }

  decode(text: string, ctx: ManifestContext): Promise<ManifestResult> {
    return new Promise<ManifestResult>((resolve) => {
      this.#enqueue({
        origin: ctx.origin,
        send: async (api) => {
          const r = fromTransfer(await api.decode(text, ctx));
          return () => resolve(r);
        },
        fail: (error) => resolve({ ok: false, error }),
      });
    });
  }

  decodeFile(req: FileDecodeRequest): Promise<FileDecodeResult> {
    return new Promise<FileDecodeResult>((resolve) => {
      this.#enqueue({
        origin: req.file,
        send: async (api) => {
          const r = fileResultFromTransfer(await api.decodeFile(req));
          return () => resolve(r);
        },
        fail: (error) => resolve({ kind: 'rejected', error }),
      });
    });
  }

  #enqueue(job: Job): void {
    if (this.#closed) {
      job.fail(new ConfigError('ERR_MANIFEST_PARSE', job.origin, 'manifest decoder is closed'));
      return;
    }
    this.#waiting.push(job);
    this.#pump();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#waiting.length + this.#inflight.length > 0) await new Promise<void>((r) => this.#idle.push(r));
    this.#idleTimer?.cancel();
    this.#idleTimer = undefined;
    this.#terminations.push(this.#stop());
    await Promise.allSettled(this.#terminations);
  }

  #start(): DecoderThread {
    this.#started++;
    const worker = new Worker(this.#threadFile, {
      resourceLimits: { maxOldGenerationSizeMb: this.#maxHeapMb, maxYoungGenerationSizeMb: DECODER_THREAD_YOUNG_MB, stackSizeMb: 4 },
    });
    const died = new Promise<string>((resolve) => {
      worker.once('error', (e: unknown) => resolve(e instanceof Error ? `${String(Reflect.get(e, 'code') ?? e.name)}: ${e.message}` : String(e)));
      worker.once('exit', (code) => resolve(`decoder thread exited with code ${code}`));
    });
    const t: DecoderThread = { worker, api: wrap<ManifestDecodeApi>(nodeEndpoint(worker)), died, ready: false };
    void died.then((why) => this.#breach(t, `decoding failed: ${why}`));
    // Sent before any decode (the thread answers in order): from its answer on, the oldest
    // call's own time limit runs (#arm).
    void t.api.ready().then(
      () => {
        t.ready = true;
        if (t === this.#thread) this.#arm();
      },
      () => {}, // the thread died first: 'error'/'exit' settle its calls
    );
    // A reply the main thread cannot deserialize never reaches comlink: without this the call
    // would wait out the time limit. The thread answers in order, so it was the oldest call's.
    worker.on('messageerror', (e: unknown) => this.#breach(t, `the decoder thread's reply could not be deserialized (${e instanceof Error ? e.message : String(e)})`));
    return t;
  }

  /** Stops the current thread (returns when it is gone); the next call starts a new one. */
  #stop(): Promise<unknown> {
    const t = this.#thread;
    this.#thread = undefined;
    if (t === undefined) return Promise.resolve();
    t.api[releaseProxy]();
    return t.worker.terminate();
  }

  #pump(): void {
    while (this.#inflight.length < MAX_IN_FLIGHT && this.#waiting.length > 0) {
      const job = this.#waiting.shift();
      if (job === undefined) break;
      const t = (this.#thread ??= this.#start());
      job.thread = t;
      this.#inflight.push(job);
      if (this.#inflight.length === 1) this.#arm();
      job.send(t.api).then(
        (settle) => this.#answer(job, t, settle),
        // A reply that arrived but cannot be used (not a decode result): that call fails now.
        // (A thread that died is settled by its 'error'/'exit' handler; #breach ignores repeats.)
        (err: unknown) => this.#breach(t, `the decoder thread's reply could not be used (${err instanceof Error ? err.message : String(err)})`),
      );
    }
    const busy = this.#inflight.length > 0;
    if (busy) this.#thread?.worker.ref();
    else this.#thread?.worker.unref();
    this.#idleTimer?.cancel();
    this.#idleTimer = undefined;
    if (!busy && this.#waiting.length === 0) {
      for (const r of this.#idle.splice(0)) r();
      if (this.#thread !== undefined && !this.#closed) this.#idleTimer = this.#clock.setTimer(this.#idleExitMs, () => this.#exitIdle(), { unref: true });
    }
  }

  /** The idle timer fired: stop the thread if it is still idle (the next call starts a new one). */
  #exitIdle(): void {
    this.#idleTimer = undefined;
    if (this.#thread === undefined || this.#inflight.length + this.#waiting.length > 0) return;
    this.#idleExits++;
    this.#log.v(2).info('Manifest decoder thread idle; stopping it until the next manifest', { idleMs: this.#idleExitMs });
    const stopped = this.#stop();
    this.#terminations.push(stopped);
    void stopped.finally(() => this.#terminations.splice(this.#terminations.indexOf(stopped) >>> 0, 1));
  }

  #arm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    const head = this.#inflight[0];
    const t = this.#thread;
    if (head === undefined || t === undefined) return;
    if (!t.ready) {
      const limit = this.#startupTimeoutMs + this.#timeoutMs;
      this.#timer = this.#clock.setTimer(limit, () => this.#breach(t, `the decoder thread did not start and answer within ${limit} ms`));
      return;
    }
    this.#timer = this.#clock.setTimer(this.#timeoutMs, () => this.#breach(t, `decoding took longer than ${this.#timeoutMs} ms`));
  }

  #answer(job: Job, t: DecoderThread, settle: () => void): void {
    if (t !== this.#thread || job.thread !== t) return; // a stale answer from a replaced thread
    const i = this.#inflight.indexOf(job);
    if (i < 0) return;
    this.#inflight.splice(i, 1);
    settle();
    if (i === 0) this.#arm();
    this.#pump();
  }

  /**
   * Thread `t` exceeded a limit or died. The thread works on its oldest unanswered call: that
   * call gets the error; the others were not started and go back to the front of the queue for
   * a fresh thread.
   */
  #breach(t: DecoderThread, why: string): void {
    if (t !== this.#thread) return;
    this.#timer?.cancel();
    this.#timer = undefined;
    const [culprit, ...innocent] = this.#inflight.splice(0);
    this.#waiting.unshift(...innocent);
    this.#terminations.push(this.#stop());
    if (culprit !== undefined) {
      this.#replaced++;
      this.#log.error('Manifest decoder thread stopped; a new one takes the next manifest', { origin: culprit.origin, reason: why });
      culprit.fail(new ConfigError('ERR_MANIFEST_TOO_LARGE', culprit.origin, `${why} (limits: ${this.#timeoutMs} ms, ${this.#maxHeapMb} MiB heap)`));
    }
    this.#pump();
  }
}
