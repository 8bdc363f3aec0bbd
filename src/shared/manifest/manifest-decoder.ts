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
 * ({@link manifestDigest}) and reuse the last result when it is unchanged.
 */
import { createHash } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { ConfigError, type ConfigErrorTransfer } from './config-errors.js';
import { podsFromManifest, type ManifestContext, type ManifestResult } from './manifest-pods.js';

export interface ManifestDecoder {
  /** Decodes one manifest; never rejects (every problem is a ConfigError in the result). */
  decode(text: string, ctx: ManifestContext): Promise<ManifestResult>;
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

/** Decodes on the calling thread (tests, tools). The agent uses the thread decoder. */
export const inlineManifestDecoder: ManifestDecoder = Object.freeze({
  decode: (text: string, ctx: ManifestContext): Promise<ManifestResult> => Promise.resolve(podsFromManifest(text, ctx)),
  close: (): Promise<void> => Promise.resolve(),
});

/** A digest of manifest text, to tell unchanged text without keeping it. */
export function manifestDigest(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}
