/**
 * Reading and decoding one static-pod manifest file in a single step, on the thread that decodes
 * (the agent's decoder thread; the calling thread for the inline decoder). The file source (main
 * thread) sends the file's path and gets back what became of it, so a burst of written manifests
 * costs the main thread one message per file instead of a stat, an open, reads, a close (each a
 * hand-off to libuv's pool) and a message carrying the text.
 *
 * Reads are synchronous: the thread that runs this does nothing else, and the caller bounds its
 * time (a read stuck on a dead file system counts against the decoder's time limit like a
 * hostile decode, and the thread is replaced).
 *
 * Checks, in order, before any byte is allocated for the file:
 *   - a stat of the path (symlinks followed, as the kubelet does) must show a regular file: a
 *     directory, FIFO, socket or device is "not a file" and is never opened (opening a device
 *     can act: a watchdog arms on open; the kubelet stats before it reads, too);
 *   - its size must be ≤ maxBytes;
 *   - it is opened O_NONBLOCK (a FIFO swapped in after the stat cannot block the open), and the
 *     descriptor's fstat must still be a regular file;
 *   - the read stops at maxBytes + 1 bytes, so a file that grows after the fstat is still
 *     rejected as too large, never read whole.
 * The stamp comes from that same fstat, so it describes the bytes read.
 */
import fs from 'node:fs';
import { REGULAR_FILE_OPEN_FLAGS } from '../fs/regular-file.js';
import { ConfigError } from './config-errors.js';
import { manifestDigest } from './manifest-digest.js';
import { podsFromManifest, type ManifestContext, type ManifestResult } from './manifest-pods.js';

/** The stat fields that change with any write, rename-over or metadata change of a file. */
export interface FileStamp {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

export function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

export function stampOf(st: fs.Stats): FileStamp {
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

export interface FileDecodeRequest {
  /** Absolute path: the file source's directory joined with a listed or watched name. */
  file: string;
  ctx: ManifestContext;
  /** Larger files are not read: `too-large`. */
  maxBytes: number;
  /** Digest of the text last decoded from this file; equal text is not decoded again. */
  lastDigest: string | undefined;
}

/** What became of a file (the result on the thread that read it). */
export type FileDecodeResult =
  | { kind: 'decoded'; stamp: FileStamp; digest: string; result: ManifestResult }
  /** The text's digest is `lastDigest`: nothing to decode. */
  | { kind: 'unchanged'; stamp: FileStamp; digest: string }
  | { kind: 'missing' }
  | { kind: 'not-file' }
  | { kind: 'too-large'; size: number }
  /** The file could not be read (permissions, I/O). */
  | { kind: 'failed'; error: ConfigError }
  /** The decoder gave up on the file (its time or heap limit; never from this module). */
  | { kind: 'rejected'; error: ConfigError };

/** The errno code of a failed fs call (ENOENT, ...), if it has one. */
export function errnoOf(e: unknown): string | undefined {
  const code: unknown = e instanceof Error ? Reflect.get(e, 'code') : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** Reads at most `limit` bytes of `fd` (stops at end of file). */
function readUpTo(fd: number, limit: number): Buffer {
  const buf = Buffer.allocUnsafe(limit);
  let n = 0;
  while (n < limit) {
    const got = fs.readSync(fd, buf, n, limit - n, null);
    if (got === 0) break;
    n += got;
  }
  return buf.subarray(0, n);
}

/** Reads `req.file` and decodes it unless its text is unchanged. Never throws. */
export function readAndDecodeFile(req: FileDecodeRequest): FileDecodeResult {
  let fd: number;
  try {
    const st = fs.statSync(req.file);
    if (!st.isFile()) return { kind: 'not-file' };
    if (st.size > req.maxBytes) return { kind: 'too-large', size: st.size };
    fd = fs.openSync(req.file, REGULAR_FILE_OPEN_FLAGS);
  } catch (e) {
    return openFailure(req.file, e);
  }
  let text: string;
  let stamp: FileStamp;
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { kind: 'not-file' };
    if (st.size > req.maxBytes) return { kind: 'too-large', size: st.size };
    stamp = stampOf(st);
    const bytes = readUpTo(fd, Math.min(st.size, req.maxBytes) + 1);
    if (bytes.length > req.maxBytes) return { kind: 'too-large', size: bytes.length };
    text = bytes.toString('utf8');
  } catch (e) {
    return { kind: 'failed', error: new ConfigError('ERR_MANIFEST_READ', req.file, `cannot read file: ${String(e)}`) };
  } finally {
    fs.closeSync(fd);
  }
  const digest = manifestDigest(text);
  if (digest === req.lastDigest) return { kind: 'unchanged', stamp, digest };
  return { kind: 'decoded', stamp, digest, result: podsFromManifest(text, req.ctx) };
}

function openFailure(file: string, e: unknown): FileDecodeResult {
  switch (errnoOf(e)) {
    case 'ENOENT':
    case 'ENOTDIR':
      return { kind: 'missing' };
    // A socket swapped in after the stat cannot be opened at all.
    case 'ENXIO':
    case 'EOPNOTSUPP':
      return { kind: 'not-file' };
    default:
      return { kind: 'failed', error: new ConfigError('ERR_MANIFEST_READ', file, `cannot read file: ${String(e)}`) };
  }
}
