/**
 * Container log files in the CRI format containerd writes:
 *   `<RFC3339Nano> <stdout|stderr> <F|P> <text>\n`
 * One writer per container, owned by its container record. A line longer than 16 KiB is split
 * into P (partial) chunks, the last one tagged F. Text without a trailing newline is held until
 * the newline arrives or the process exits (then flushed tagged F, as containerd does at EOF).
 * The file and its directories are created when the container starts (containerd opens the
 * log at StartContainer); RemoveContainer does not delete it (neither does containerd).
 *
 * Writes are synchronous appends to a file descriptor held open, as containerd's logger holds
 * its file: after log rotation renames the file away, lines keep going to the renamed file until
 * ReopenContainerLog (`reopen()`) opens the path again. The order of lines from both streams is
 * the order of the events. The descriptor is closed at process exit (`close`).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { OutputStream } from './sim-shell.js';

/** containerd's maximum log line size before splitting (16 KiB). */
export const MAX_LOG_LINE_BYTES = 16 * 1024;

/** Go's time.RFC3339Nano for a UTC time: fraction with trailing zeros trimmed, `Z` zone. */
export function rfc3339Nano(ms: number): string {
  const iso = new Date(Math.floor(ms)).toISOString(); // 2024-01-02T03:04:05.678Z
  const base = iso.slice(0, 19);
  const subMsNanos = Math.round((ms - Math.floor(ms)) * 1e6);
  const frac = (iso.slice(20, 23) + String(subMsNanos).padStart(6, '0')).replace(/0+$/, '');
  return frac === '' ? `${base}Z` : `${base}.${frac}Z`;
}

export class CriLogWriter {
  readonly path: string;
  readonly #pending: Record<OutputStream, string> = { stdout: '', stderr: '' };
  #failed = false;
  #fd: number | undefined;

  /** Creates the directories and the (empty) file now. Throws the fs error if that fails. */
  constructor(filePath: string) {
    this.path = filePath;
    fs.mkdirSync(path.dirname(filePath), { recursive: true });
    this.#fd = fs.openSync(filePath, 'a');
  }

  /** Closes the file and opens the path again (creating it). Throws the fs error if that fails. */
  reopen(): void {
    this.#closeFd();
    this.#fd = fs.openSync(this.path, 'a');
    this.#failed = false;
  }

  #closeFd(): void {
    if (this.#fd === undefined) return;
    try {
      fs.closeSync(this.#fd);
    } catch {
      /* already gone */
    }
    this.#fd = undefined;
  }

  write(stream: OutputStream, text: string, atMs: number): void {
    const data = this.#pending[stream] + text;
    const lines = data.split('\n');
    this.#pending[stream] = lines.pop() ?? '';
    this.#append(stream, lines, atMs);
  }

  /** Flushes held partial lines (process exit). */
  close(atMs: number): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = this.#pending[stream];
      this.#pending[stream] = '';
      if (rest !== '') this.#append(stream, [rest], atMs);
    }
    this.#closeFd();
  }

  #append(stream: OutputStream, lines: string[], atMs: number): void {
    if (lines.length === 0 || this.#failed || this.#fd === undefined) return;
    const ts = rfc3339Nano(atMs);
    let out = '';
    for (const line of lines) {
      const buf = Buffer.from(line);
      for (let off = 0; off + MAX_LOG_LINE_BYTES < buf.length; off += MAX_LOG_LINE_BYTES) {
        out += `${ts} ${stream} P ${buf.subarray(off, off + MAX_LOG_LINE_BYTES).toString()}\n`;
      }
      const lastStart = buf.length === 0 ? 0 : Math.floor((buf.length - 1) / MAX_LOG_LINE_BYTES) * MAX_LOG_LINE_BYTES;
      out += `${ts} ${stream} F ${buf.subarray(lastStart).toString()}\n`;
    }
    try {
      fs.writeSync(this.#fd, out);
    } catch {
      // The log directory was removed under us (the agent cleans logs up): like containerd's
      // logger, stop writing rather than failing the container.
      this.#failed = true;
    }
  }
}
