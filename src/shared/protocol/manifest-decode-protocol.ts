/**
 * The thread protocol of the manifest decoder: the API the decoder thread exposes over comlink
 * (workers/manifest-decode-thread.ts) and the main side calls (manifest-decode-thread-client.ts).
 * Results are plain data (ManifestResultTransfer), rebuilt into ConfigErrors on arrival.
 */
import type { ManifestContext } from '../manifest/manifest-pods.js';
import type { FileDecodeTransfer, ManifestResultTransfer } from '../manifest/manifest-decoder.js';
import type { FileDecodeRequest } from '../manifest/manifest-file-read.js';

export interface ManifestDecodeApi {
  /**
   * Answers once the thread has loaded its modules and serves calls: the main side's per-call
   * time limit starts from this answer, so a slow thread start (a loaded machine) is not charged
   * to the first manifest.
   */
  ready(): true;
  decode(text: string, ctx: ManifestContext): ManifestResultTransfer;
  /** Reads the file on the decoder thread and decodes it unless its text is `req.lastDigest`'s. */
  decodeFile(req: FileDecodeRequest): FileDecodeTransfer;
}
