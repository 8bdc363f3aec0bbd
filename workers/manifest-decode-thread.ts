/**
 * Manifest decoder thread entry: exposes {@link ManifestDecodeApi} over comlink on parentPort.
 * Thin on purpose; the decoding is src/shared/manifest/manifest-pods.ts. The main side
 * (src/main/config/manifest-decode-thread-client.ts) bounds each call's time and this thread's heap,
 * and replaces the thread when a call exceeds them.
 */
import { parentPort } from 'node:worker_threads';
import { expose } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { podsFromManifest } from '../src/shared/manifest/manifest-pods.js';
import { fileResultToTransfer, toTransfer } from '../src/shared/manifest/manifest-decoder.js';
import { readAndDecodeFile } from '../src/shared/manifest/manifest-file-read.js';
import type { ManifestDecodeApi } from '../src/shared/protocol/manifest-decode-protocol.js';

if (!parentPort) throw new Error('manifest-decode-thread.js must run in a worker thread');

const api: ManifestDecodeApi = {
  ready: () => true,
  decode: (text, ctx) => toTransfer(podsFromManifest(text, ctx)),
  decodeFile: (req) => fileResultToTransfer(readAndDecodeFile(req)),
};
expose(api, nodeEndpoint(parentPort));
