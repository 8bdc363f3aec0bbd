/**
 * The manifest decoder seam of the pod sources: text → pods, asynchronously.
 *
 * Manifest text is untrusted (a file anyone with write access to the directory dropped there, or
 * a URL's body). Decoding it (YAML parse, typing, validation, hashing) is CPU work bounded only
 * by the text size limit, so the agent runs it on a thread of its own
 * ({@link ThreadManifestDecoder} in manifest-decode-thread-client.ts) with a time and memory
 * limit; the sources only see this interface. {@link inlineManifestDecoder} runs the same code on
 * the calling thread, for tests of source logic and small tools.
 *
 * The same bytes are never decoded twice in a row by the sources: they hash the text
 * (manifest-digest.ts) and reuse the last result when it is unchanged.
 *
 * A static-pod file is read where it is decoded ({@link ManifestDecoder.decodeFile},
 * manifest-file-read.ts): the file source sends a path, not text.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { ConfigError, type ConfigErrorTransfer } from './config-errors.js';
import { readAndDecodeFile, type FileDecodeRequest, type FileDecodeResult } from './manifest-file-read.js';
import { podsFromManifest, type ManifestContext, type ManifestResult } from './manifest-pods.js';

export interface ManifestDecoder {
  /** Decodes one manifest; never rejects (every problem is a ConfigError in the result). */
  decode(text: string, ctx: ManifestContext): Promise<ManifestResult>;
  /** Reads one manifest file and decodes it unless unchanged; never rejects. */
  decodeFile(req: FileDecodeRequest): Promise<FileDecodeResult>;
  /** Stops the decoder; later calls resolve with an error. Idempotent. */
  close(): Promise<void>;
}

/** A ManifestResult as it crosses a thread. */
export type ManifestResultTransfer = { ok: true; pods: V1Pod[] } | { ok: false; error: ConfigErrorTransfer };

export function toTransfer(r: ManifestResult): ManifestResultTransfer {
  return r.ok ? r : { ok: false, error: r.error.toTransfer() };
}

export function fromTransfer(t: ManifestResultTransfer): ManifestResult {
  return t.ok ? t : { ok: false, error: ConfigError.fromTransfer(t.error) };
}

/** A FileDecodeResult as it crosses a thread: its ConfigErrors in their transfer form. */
export type FileDecodeTransfer =
  | Exclude<FileDecodeResult, { kind: 'decoded' | 'failed' | 'rejected' }>
  | (Omit<Extract<FileDecodeResult, { kind: 'decoded' }>, 'result'> & { result: ManifestResultTransfer })
  | { kind: 'failed' | 'rejected'; error: ConfigErrorTransfer };

export function fileResultToTransfer(r: FileDecodeResult): FileDecodeTransfer {
  switch (r.kind) {
    case 'decoded':
      return { ...r, result: toTransfer(r.result) };
    case 'failed':
    case 'rejected':
      return { kind: r.kind, error: r.error.toTransfer() };
    default:
      return r;
  }
}

export function fileResultFromTransfer(t: FileDecodeTransfer): FileDecodeResult {
  switch (t.kind) {
    case 'decoded':
      return { ...t, result: fromTransfer(t.result) };
    case 'failed':
    case 'rejected':
      return { kind: t.kind, error: ConfigError.fromTransfer(t.error) };
    default:
      return t;
  }
}

/** Decodes on the calling thread (tests, tools). The agent uses the thread decoder. */
export const inlineManifestDecoder: ManifestDecoder = Object.freeze({
  decode: (text: string, ctx: ManifestContext): Promise<ManifestResult> => Promise.resolve(podsFromManifest(text, ctx)),
  decodeFile: (req: FileDecodeRequest): Promise<FileDecodeResult> => Promise.resolve(readAndDecodeFile(req)),
  close: (): Promise<void> => Promise.resolve(),
});
