/**
 * Streams one container's CRI log file to a client, as the kubelet's kuberuntime ReadLogs does:
 * decodes `<RFC3339Nano> <stdout|stderr> <P|F> <text>` lines, drops those stamped before
 * `sinceMs`, starts `tailLines` lines before the end, prefixes the timestamp with `timestamps`,
 * stops after `limitBytes` output bytes, and with `follow` keeps reading as the file grows —
 * across rotation (the path now names another file: the old one is read to its end, then the new
 * one from its start) — until the container stops running or the client goes away.
 *
 * Only regular files are read (container-logs-open.ts: no FIFO, device or socket, opened without
 * blocking); a rotation to something else ends the stream. Every read is bounded: at most one
 * buffer (64 KiB), and without `follow` nothing past the size the file had when it was opened
 * (a file that grows as fast as it is read cannot keep a plain request going).
 *
 * Memory is bounded whatever the file size: one read buffer, one carried partial line (capped
 * at MAX_LINE_BYTES; a longer run without a newline is cut there), and a tail search that reads
 * backwards block by block. Writes wait for the sink to drain (a slow client slows the reader,
 * never grows a buffer).
 *
 * Waiting in follow mode is polling on the injected clock (`pollMs` for growth and rotation,
 * `runningCheckMs` for the container's state), so tests step time instead of sleeping.
 */
import fs from 'node:fs';
import type { Clock } from '../../shared/clock/clock.js';
import type { LogOptions } from './container-logs-options.js';
import { parseCriLine, tailStartOffset } from '../../shared/logs/cri-log-lines.js';

export { parseCriLine, tailStartOffset };
import { openRegularLogFile, type OpenLogResult } from './container-logs-open.js';

export const LOG_READER_DEFAULTS = Object.freeze({ readBytes: 64 * 1024, pollMs: 100, runningCheckMs: 1_000 });
/** containerd splits at 16 KiB; a header plus that fits easily. Longer runs are cut here. */
export const MAX_LINE_BYTES = 64 * 1024;

/** Where decoded output goes; `write` resolves false once the client is gone. */
export interface LogSink {
  write(chunk: Buffer): Promise<boolean>;
}

/** Thrown by readContainerLog when `path` is not a regular file or cannot be opened. */
export class LogFileError extends Error {
  override readonly name = 'LogFileError';
  readonly code: Extract<OpenLogResult, { ok: false }>['code'];
  constructor(r: Extract<OpenLogResult, { ok: false }>) {
    super(r.message);
    this.code = r.code;
  }
}

export interface ReadLogOptions {
  path: string;
  /** `path` already opened by openRegularLogFile (the route opens it before answering 200). */
  opened?: Extract<OpenLogResult, { ok: true }>;
  options: LogOptions;
  clock: Clock;
  sink: LogSink;
  signal: AbortSignal;
  /** Follow mode: is the container still running? (Checked at EOF every runningCheckMs.) */
  stillRunning: () => Promise<boolean>;
  pollMs?: number;
  runningCheckMs?: number;
}

type Emit = 'more' | 'done';

export async function readContainerLog(o: ReadLogOptions): Promise<void> {
  const pollMs = o.pollMs ?? LOG_READER_DEFAULTS.pollMs;
  const runningCheckMs = o.runningCheckMs ?? LOG_READER_DEFAULTS.runningCheckMs;
  const opts = o.options;
  let remaining = opts.limitBytes ?? Number.POSITIVE_INFINITY;
  const first = o.opened ?? (await openRegularLogFile(o.path));
  if (!first.ok) throw new LogFileError(first);
  let fh = first.file;
  try {
    let ino = first.ino;
    // Without follow, the read ends where the file ended when it was opened.
    const endAtOpen = opts.follow ? Number.POSITIVE_INFINITY : first.size;
    let pos = opts.tailLines !== undefined ? await tailStartOffset(fh, first.size, opts.tailLines) : 0;
    const buf = Buffer.allocUnsafe(LOG_READER_DEFAULTS.readBytes);
    let carry: Buffer = Buffer.alloc(0);
    let lastRunningCheck = Number.NEGATIVE_INFINITY;
    let finalPass = false;

    // Output of one read is gathered and written once (one sink write per 64 KiB read, not per
    // line): at most about one read's worth of decoded text is held.
    let pending: Buffer[] = [];
    const TS_SEP = Buffer.from(' ');
    const NL = Buffer.from('\n');
    /** Decodes one line into `pending`; 'done' once limitBytes is reached. */
    const emit = (line: Buffer): Emit => {
      const msg = parseCriLine(line);
      if (msg === undefined) return 'more';
      if (opts.sinceMs !== undefined && msg.ms < opts.sinceMs) return 'more';
      const parts = opts.timestamps ? [Buffer.from(msg.timestamp, 'latin1'), TS_SEP, msg.content] : [msg.content];
      if (!msg.partial) parts.push(NL);
      for (const part of parts) {
        const p = part.length > remaining ? part.subarray(0, remaining) : part;
        if (p.length > 0) pending.push(p);
        remaining -= p.length;
        if (remaining <= 0) return 'done';
      }
      return 'more';
    };
    /** Writes what `pending` holds; false once the client is gone. */
    const flush = async (): Promise<boolean> => {
      if (pending.length === 0) return true;
      const out = Buffer.concat(pending);
      pending = [];
      return o.sink.write(out);
    };

    for (;;) {
      if (o.signal.aborted) return;
      const want = Math.min(buf.length, endAtOpen - pos);
      const { bytesRead } = want > 0 ? await fh.read(buf, 0, want, pos) : { bytesRead: 0 };
      if (bytesRead > 0) {
        pos += bytesRead;
        let chunk: Buffer = carry.length > 0 ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
        let nl: number;
        let state: Emit = 'more';
        while (state === 'more' && (nl = chunk.indexOf(0x0a)) >= 0) {
          state = emit(chunk.subarray(0, nl));
          chunk = chunk.subarray(nl + 1);
        }
        if (state === 'more' && chunk.length >= MAX_LINE_BYTES) {
          state = emit(chunk.subarray(0, MAX_LINE_BYTES));
          chunk = chunk.subarray(MAX_LINE_BYTES);
        }
        // Copy: `buf` is reused by the next read (and `pending` may point into it: flush first).
        carry = Buffer.from(chunk);
        if (!(await flush()) || state === 'done') return;
        continue;
      }
      // At the end of the file.
      if (!opts.follow || finalPass) return;
      const rotated = await statIno(o.path);
      if (rotated !== undefined && rotated !== ino) {
        // Rotated (renamed away, a new file opened by the runtime): the old file is read to its
        // end (we are there), continue with the new one from its start.
        const next = await openRegularLogFile(o.path);
        // Replaced by something that is not a regular file: what was read is all there is.
        if (!next.ok && next.code === 'ERR_LOG_NOT_REGULAR') throw new LogFileError(next);
        if (next.ok) {
          await fh.close();
          fh = next.file;
          ino = next.ino;
          pos = 0;
          carry = Buffer.alloc(0);
          continue;
        }
      }
      const now = o.clock.monotonic();
      if (now - lastRunningCheck >= runningCheckMs) {
        lastRunningCheck = now;
        // One more read after the container stopped: lines written just before it exited.
        if (!(await o.stillRunning())) finalPass = true;
        if (finalPass) continue;
      }
      try {
        await o.clock.sleep(pollMs, o.signal);
      } catch {
        return;
      }
    }
  } finally {
    await fh.close().catch(() => {});
  }
}

async function statIno(p: string): Promise<number | undefined> {
  try {
    return (await fs.promises.stat(p)).ino;
  } catch {
    return undefined;
  }
}
