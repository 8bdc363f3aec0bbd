/**
 * A decoder thread for tests of the limits of ThreadManifestDecoder: the real decode, except
 * that the text `HANG` spins forever and `OOM` allocates until the heap limit kills the thread
 * (stand-ins for input that defeats the decode budget; js-yaml itself bounds merge keys).
 */
import { parentPort } from 'node:worker_threads';
import { expose } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { podsFromManifest } from '../../../src/shared/manifest/manifest-pods.js';
import { toTransfer } from '../../../src/shared/manifest/manifest-decoder.js';
import type { ManifestDecodeApi } from '../../../src/shared/protocol/manifest-decode-protocol.js';

if (!parentPort) throw new Error('must run in a worker thread');
const hog: unknown[] = [];
const api: ManifestDecodeApi = {
  decode(text, ctx) {
    if (text === 'HANG') for (;;);
    if (text === 'OOM') for (;;) hog.push(new Array(1 << 16).fill(hog.length));
    return toTransfer(podsFromManifest(text, ctx));
  },
};
expose(api, nodeEndpoint(parentPort));
