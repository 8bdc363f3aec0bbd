/**
 * The static-pod directory source (kubelet --pod-manifest-path; pkg/kubelet/config/file.go and
 * file_linux.go). Reads every `*.yaml`, `*.yml` and `*.json` file (dotfiles skipped, no
 * recursion) and delivers the complete set of their pods as a SET after every read.
 *
 * Timeline:
 *   start() ──► full read ──► SET (the first SET marks the source ready, even when empty)
 *   fs.watch event for a name ──► (debounce window, ≤ debounceMs after the *first* event; later
 *     events join the same window) ──► re-read only the named files ──► SET
 *   every resyncMs ──► full read (readdir + a stat of every file; a file whose stat matches the
 *     last decode's is not read again, and unchanged text is not decoded) ──► SET
 *   a file with pods reads empty ──► pods kept, re-read after emptyGraceMs ──► still empty: no pods
 *
 * Invariants:
 * - At most one read runs at a time; events that arrive during a read are handled right after.
 * - No SET is delivered after close() resolves.
 * - Problems are reported (logger + onError) once per distinct problem per file and never
 *   change what other files contribute; see manifest-file-set.ts for the invalid-file and
 *   duplicate-name rules (a broken edit keeps the last valid version running).
 * - Reading and decoding run on the injected {@link ManifestDecoder} (the agent's runs on its
 *   own thread with time and memory limits), so a hostile file never blocks the main thread. A
 *   file the decoder gave up on is not sent to it again until the file changes (#pinRejected).
 * - An empty file is noted in the log (info) once per transition, never silently "no pods".
 * - A missing manifest path yields an empty SET (as the kubelet does), so sources become ready;
 *   the watch is retried on each resync until the directory exists.
 * - Skipping a read on the full resync (the kubelet reads every file every time; at 1,000
 *   static pods that was ~100 ms of CPU per resync, half of it open/read/close and the digest):
 *   only when the file's stat identity (device, inode, size, mtime, ctime) equals the one taken
 *   before the read that was last decoded, that decode left the file settled (not in its empty
 *   grace), and that file had not changed for RACY_MS before that read. A write within the
 *   file system's timestamp granularity of the read could leave mtime and ctime unchanged (the
 *   "racy" case git also guards against), so a file changed shortly before a read is read again
 *   at the next resync. fs.watch events and empty-file rechecks always read.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { ConfigError, type ConfigErrorHandler } from '../../shared/manifest/config-errors.js';
import type { ManifestResult } from '../../shared/manifest/manifest-pods.js';
import { ManifestFileSet } from './manifest-file-set.js';
import { inlineManifestDecoder, type ManifestDecoder } from '../../shared/manifest/manifest-decoder.js';
import { errnoOf, sameStamp, stampOf, type FileStamp, type FileDecodeResult } from '../../shared/manifest/manifest-file-read.js';
import { FileSource, type PodSetSink, type PodSource } from '../../shared/manifest/pod-update.js';

export interface FileSourceOptions {
  /** --pod-manifest-path: a directory (or a single manifest file). */
  path: string;
  nodeName: string;
  sink: PodSetSink;
  clock: Clock;
  logger: Logger;
  onError?: ConfigErrorHandler;
  /** Full re-read period (kubelet --file-check-frequency, default 20 s). */
  resyncMs?: number;
  /** Window that gathers a burst of fs.watch events into one read. */
  debounceMs?: number;
  /** Use fs.watch (default true). Tests of the periodic path turn it off and step a FakeClock. */
  watch?: boolean;
  /** Files larger than this are rejected with ERR_MANIFEST_TOO_LARGE. */
  maxFileBytes?: number;
  /** How long a file that had pods may read empty before its pods go (a rewrite in progress). */
  emptyGraceMs?: number;
  /** Where manifests are decoded (default: inline, on the calling thread; the agent passes its decoder thread). */
  decoder?: ManifestDecoder;
}

export const FILE_SOURCE_DEFAULTS = Object.freeze({
  resyncMs: 20_000,
  debounceMs: 50,
  watch: true,
  maxFileBytes: 10 * 1024 * 1024,
  emptyGraceMs: 5_000,
});

const MANIFEST_EXT = new Set(['.yaml', '.yml', '.json']);
/** A file changed less than this before it was read is read again at the next resync (see above). */
export const RACY_MS = 2_000;

/** Files read at once (each a call to the decoder, which reads and decodes it). */
export const READ_CONCURRENCY = 16;

export class FileSourceImpl implements PodSource {
  readonly name = FileSource;
  readonly #opts: Required<Omit<FileSourceOptions, 'onError'>> & { onError: ConfigErrorHandler };
  /** Re-reads scheduled to confirm an empty read, by file name. */
  readonly #emptyRechecks = new Map<string, TimerHandle>();
  /**
   * Per file: its stat before the read that was last decoded, kept only while a full resync may
   * skip the file (see "Skipping a read" above). Owned by #readOne.
   */
  readonly #stamps = new Map<string, FileStamp>();
  /** Per file the decoder gave up on: its stamp then (see #pinRejected). Owned by #readOne. */
  readonly #rejected = new Map<string, FileStamp>();
  /** Files whose "contains no pods" note was logged (cleared when they have pods again). */
  readonly #notedEmpty = new Set<string>();
  readonly #log: Logger;
  /** Directory watched and listed; in single-file mode, the file's parent. */
  #dir: string;
  /** Single-file mode: the only name considered. */
  #onlyName: string | undefined;
  #files: ManifestFileSet;
  #started = false;
  #closed = false;
  #watcher: fs.FSWatcher | undefined;
  #debounce: TimerHandle | undefined;
  #resyncTimer: TimerHandle | undefined;
  /** Names reported changed by fs.watch since the last read; `full` means re-list everything. */
  #dirty = new Set<string>();
  #full = false;
  #running: Promise<void> | undefined;
  #missingLogged = false;

  constructor(opts: FileSourceOptions) {
    if (!opts?.path || !opts.nodeName || !opts.sink || !opts.clock || !opts.logger) {
      throw new ConfigError('ERR_CONFIG_OPTION', '', 'file source: path, nodeName, sink, clock and logger are required');
    }
    const o = {
      path: opts.path,
      nodeName: opts.nodeName,
      sink: opts.sink,
      clock: opts.clock,
      logger: opts.logger,
      onError: opts.onError ?? (() => {}),
      resyncMs: opts.resyncMs ?? FILE_SOURCE_DEFAULTS.resyncMs,
      debounceMs: opts.debounceMs ?? FILE_SOURCE_DEFAULTS.debounceMs,
      watch: opts.watch ?? FILE_SOURCE_DEFAULTS.watch,
      maxFileBytes: opts.maxFileBytes ?? FILE_SOURCE_DEFAULTS.maxFileBytes,
      emptyGraceMs: opts.emptyGraceMs ?? FILE_SOURCE_DEFAULTS.emptyGraceMs,
      decoder: opts.decoder ?? inlineManifestDecoder,
    };
    if (!(o.resyncMs > 0) || !(o.debounceMs >= 0) || !(o.maxFileBytes > 0) || !(o.emptyGraceMs >= 0)) {
      throw new ConfigError('ERR_CONFIG_OPTION', '', 'file source: resyncMs and maxFileBytes must be > 0, debounceMs and emptyGraceMs >= 0');
    }
    this.#opts = o;
    this.#log = opts.logger.with({ source: FileSource });
    this.#dir = opts.path.replace(/\/+$/, '') || '/';
    this.#files = new ManifestFileSet({ dir: this.#dir, nodeName: opts.nodeName, emptyGraceMs: o.emptyGraceMs });
  }

  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#log.v(1).info('Watching path', { path: this.#opts.path });
    void this.syncNow();
  }

  /** A full read and SET now (what the resync timer does); resolves once the SET was delivered. */
  syncNow(): Promise<void> {
    this.#full = true;
    return this.#kick();
  }

  async close(): Promise<void> {
    if (this.#closed) return this.#running;
    this.#closed = true;
    this.#debounce?.cancel();
    this.#resyncTimer?.cancel();
    for (const t of this.#emptyRechecks.values()) t.cancel();
    this.#emptyRechecks.clear();
    this.#watcher?.close();
    this.#watcher = undefined;
    await this.#running;
  }

  /** Runs a read now, or right after the one in progress. */
  #kick(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#running) return this.#running.then(() => this.#kick());
    this.#debounce?.cancel();
    this.#debounce = undefined;
    const run = this.#readAndEmit()
      .catch((e: unknown) => this.#log.error('Manifest read failed unexpectedly', { path: this.#opts.path, error: String(e) }))
      .finally(() => {
      this.#running = undefined;
      if (!this.#closed && (this.#full || this.#dirty.size > 0) && this.#debounce === undefined) void this.#kick();
    });
    this.#running = run;
    return run;
  }

  #scheduleResync(): void {
    this.#resyncTimer?.cancel();
    if (this.#closed) return;
    this.#resyncTimer = this.#opts.clock.setTimer(this.#opts.resyncMs, () => void this.syncNow(), { unref: true });
  }

  /**
   * fs.watch named a file (null: it could not say which; everything is listed again). The named
   * files are read together once the debounce window closes, or right after a read in progress.
   */
  noteChanged(filename: string | Buffer | null): void {
    if (this.#closed) return;
    const name = filename === null ? undefined : filename.toString();
    if (name === undefined) this.#full = true;
    else if (this.#relevant(name)) this.#dirty.add(name);
    else return;
    if (this.#debounce !== undefined || this.#running !== undefined) return; // joins the open window / the next read
    this.#debounce = this.#opts.clock.setTimer(this.#opts.debounceMs, () => {
      this.#debounce = undefined;
      void this.#kick();
    });
  }

  #relevant(name: string): boolean {
    if (this.#onlyName !== undefined) return name === this.#onlyName;
    return !name.startsWith('.') && MANIFEST_EXT.has(path.extname(name).toLowerCase());
  }

  #ensureWatch(): void {
    if (!this.#opts.watch || this.#watcher !== undefined || this.#closed) return;
    try {
      const w = fs.watch(this.#dir, { persistent: false }, (_event, filename) => this.noteChanged(filename));
      w.on('error', (e: unknown) => {
        this.#log.error('Manifest path watch failed; will retry at next resync', { path: this.#dir, error: String(e) });
        w.close();
        if (this.#watcher === w) this.#watcher = undefined;
        this.noteChanged(null);
      });
      this.#watcher = w;
    } catch (e) {
      this.#log.v(2).info('Cannot watch manifest path yet', { path: this.#dir, error: String(e) });
    }
  }

  async #readAndEmit(): Promise<void> {
    const full = this.#full;
    const names = [...this.#dirty];
    this.#full = false;
    this.#dirty.clear();
    try {
      if (full) await this.#readAll();
      else await this.#readMany(names, false);
    } finally {
      if (full) this.#scheduleResync();
    }
    if (this.#closed) return;
    const { pods, newErrors } = this.#files.build();
    for (const err of newErrors) this.#report(err);
    this.#log.v(4).info('File source SET', { pods: pods.length, files: this.#files.names().length });
    this.#opts.sink.set(pods);
  }

  async #readAll(): Promise<void> {
    let names: string[];
    try {
      const st = await fsp.stat(this.#opts.path);
      if (st.isDirectory()) {
        this.#setMode(this.#opts.path.replace(/\/+$/, '') || '/', undefined);
        names = (await fsp.readdir(this.#dir)).filter((n) => this.#relevant(n));
      } else {
        this.#setMode(path.dirname(this.#opts.path), path.basename(this.#opts.path));
        names = [path.basename(this.#opts.path)];
      }
      this.#missingLogged = false;
      this.#ensureWatch();
    } catch (e) {
      if (errnoOf(e) !== 'ENOENT') {
        // Cannot list at all: keep what we have (like an unreadable file) and retry at resync.
        this.#report(new ConfigError('ERR_MANIFEST_READ', this.#opts.path, `cannot read manifest path: ${String(e)}`));
        return;
      }
      if (!this.#missingLogged) this.#log.error('Manifest path does not exist, ignoring', { path: this.#opts.path });
      this.#missingLogged = true;
      names = [];
    }
    const present = new Set(names);
    for (const n of this.#files.names()) if (!present.has(n)) this.#forget(n);
    await this.#readMany(names.sort(), true);
  }

  /**
   * Reads the named files, READ_CONCURRENCY at a time: thousands of small files on few cores.
   * The decoder reads each file where it decodes it (manifest-file-read.ts), so this thread
   * spends one message per file; with one file at a time both threads sat idle between files.
   */
  async #readMany(names: string[], mayskip: boolean): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < names.length) await this.#readOne(names[next++]!, mayskip);
    };
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, names.length) }, worker));
  }

  /** Directory vs single-file mode; switching (rare: the path was replaced) starts afresh. */
  #setMode(dir: string, onlyName: string | undefined): void {
    if (dir === this.#dir && onlyName === this.#onlyName) return;
    this.#dir = dir;
    this.#onlyName = onlyName;
    this.#files = new ManifestFileSet({ dir, nodeName: this.#opts.nodeName, emptyGraceMs: this.#opts.emptyGraceMs });
    this.#stamps.clear();
    this.#rejected.clear();
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  /** The file is gone: its pods and its stamps go with it. */
  #forget(name: string): void {
    this.#files.remove(name);
    this.#stamps.delete(name);
    this.#rejected.delete(name);
  }

  /**
   * Has the decoder read and decode one file. On a full resync (`mayskip`) the file is stat'ed
   * here first, as before the decoder read files: a file whose kept stamp is unchanged is not
   * read, and a directory or an oversized file is told apart without waking the decoder thread.
   * fs.watch names go straight to the decoder (it checks the same on the descriptor it reads).
   */
  async #readOne(name: string, mayskip: boolean): Promise<void> {
    const file = path.join(this.#dir, name);
    const rejected = this.#rejected.get(name);
    if (mayskip || rejected !== undefined) {
      let r: FileDecodeResult | undefined;
      try {
        const st = await fsp.stat(file);
        const stamp = stampOf(st);
        if (rejected !== undefined && sameStamp(rejected, stamp)) return; // the decoder gave up on these very bytes
        this.#rejected.delete(name);
        const last = this.#stamps.get(name);
        if (mayskip && last !== undefined && sameStamp(last, stamp)) return;
        if (!st.isFile()) r = { kind: 'not-file' };
        else if (st.size > this.#opts.maxFileBytes) r = { kind: 'too-large', size: st.size };
      } catch (e) {
        if (errnoOf(e) === 'ENOENT') r = { kind: 'missing' };
        // Any other failure: the decoder's read reports it.
      }
      if (r !== undefined) {
        this.#stamps.delete(name);
        this.#apply(name, file, r);
        return;
      }
    }
    this.#stamps.delete(name);
    const readAt = this.#opts.clock.now();
    const files = this.#files;
    const r = await this.#opts.decoder.decodeFile({ file, ctx: files.context(name), maxBytes: this.#opts.maxFileBytes, lastDigest: files.settledDigest(name) });
    if (this.#closed || files !== this.#files) return;
    const stamp = this.#apply(name, file, r);
    if (r.kind === 'rejected') await this.#pinRejected(name, file, readAt);
    // Settled and not racy: the next full resync may trust the stamp.
    if (stamp !== undefined && files.settledDigest(name) !== undefined && readAt - Math.max(stamp.mtimeMs, stamp.ctimeMs) >= RACY_MS) this.#stamps.set(name, stamp);
  }

  /**
   * The decoder gave up on a file (time or heap limit): its stamp now is pinned, so neither a
   * resync nor fs.watch sends those bytes again (each try costs the decoder its whole limit and
   * a new thread); any change to the file unpins it. Only a file that had not changed for
   * RACY_MS before the read began is pinned (as for stamps): a newer version is always read.
   */
  async #pinRejected(name: string, file: string, readAt: number): Promise<void> {
    try {
      const st = await fsp.stat(file);
      if (!this.#closed && readAt - Math.max(st.mtimeMs, st.ctimeMs) >= RACY_MS) this.#rejected.set(name, stampOf(st));
    } catch {
      // Gone or unreadable: the next read reports it.
    }
  }

  /** Records what the decoder made of a file; returns the stamp of the text it read, if any. */
  #apply(name: string, file: string, r: FileDecodeResult): FileStamp | undefined {
    switch (r.kind) {
      case 'missing':
        this.#forget(name);
        return undefined;
      case 'not-file':
        this.#log.v(2).info('Not a regular file, skipping', { file });
        this.#forget(name);
        return undefined;
      case 'too-large':
        this.#files.setReadError(name, new ConfigError('ERR_MANIFEST_TOO_LARGE', file, `file is ${r.size} bytes, limit is ${this.#opts.maxFileBytes}`));
        return undefined;
      case 'failed':
      case 'rejected':
        this.#files.setReadError(name, r.error);
        return undefined;
      case 'unchanged':
        return r.stamp;
      case 'decoded':
        this.#applyDecoded(name, r.digest, r.result);
        return r.stamp;
      default: {
        const never: never = r;
        return never;
      }
    }
  }

  /** Records freshly decoded text; handles the empty-read rule. */
  #applyDecoded(name: string, digest: string, r: ManifestResult): void {
    const files = this.#files;
    const empty = files.setResult(name, digest, r, this.#opts.clock.monotonic());
    const file = files.origin(name);
    switch (empty.kind) {
      case 'none':
        this.#notedEmpty.delete(name);
        return;
      case 'held':
        this.#log.info('Manifest file is empty; keeping its pods in case it is being rewritten', { file, recheckInMs: empty.recheckInMs });
        this.#emptyRechecks.get(name)?.cancel();
        this.#emptyRechecks.set(name, this.#opts.clock.setTimer(empty.recheckInMs, () => {
          this.#emptyRechecks.delete(name);
          if (this.#closed) return;
          this.#dirty.add(name);
          void this.#kick();
        }));
        return;
      case 'empty':
        if (!this.#notedEmpty.has(name)) this.#log.info('Manifest file contains no pods', { file });
        this.#notedEmpty.add(name);
        return;
      default: {
        const never: never = empty;
        return never;
      }
    }
  }

  #report(err: ConfigError): void {
    this.#log.error('Cannot use manifest', { error: err.message, code: err.code, origin: err.origin });
    this.#opts.onError(err);
  }
}

/** Creates the file source; call start() to begin. */
export function createFileSource(opts: FileSourceOptions): FileSourceImpl {
  return new FileSourceImpl(opts);
}
