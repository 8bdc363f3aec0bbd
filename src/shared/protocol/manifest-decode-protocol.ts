/**
 * The thread protocol of the manifest decoder: the API the decoder thread exposes over comlink
 * (workers/manifest-decode-thread.ts) and the main side calls (manifest-decode-thread-client.ts).
 * Results are plain data (ManifestResultTransfer), rebuilt into ConfigErrors on arrival.
 */
import type { ManifestContext } from '../manifest/manifest-pods.js';
import type { FileDecodeTransfer, ManifestResultTransfer } from '../manifest/manifest-decoder.js';
import type { FileDecodeRequest } from '../manifest/manifest-file-read.js';

export interface ManifestDecodeApi {
  decode(text: string, ctx: ManifestContext): ManifestResultTransfer;
  /** Reads the file on the decoder thread and decodes it unless its text is `req.lastDigest`'s. */
  decodeFile(req: FileDecodeRequest): FileDecodeTransfer;
}
