/**
 * A decoder thread for tests of the limits of ThreadManifestDecoder: the real decode, except
 * that the text `HANG` (or a file holding it) spins forever and `OOM` allocates until the heap limit kills the thread
 * (stand-ins for input that defeats the decode budget; js-yaml itself bounds merge keys), and
 * `DEEP` answers with a value nested 10,000 levels, which the main thread cannot deserialize
 * (a stand-in for any reply that fails structured-clone deserialization: 'messageerror'), and
 * `JUNK` answers with something that is not a decode result.
 */
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { expose } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { podsFromManifest } from '../../../src/shared/manifest/manifest-pods.js';
import { fileResultToTransfer, toTransfer } from '../../../src/shared/manifest/manifest-decoder.js';
import { readAndDecodeFile } from '../../../src/shared/manifest/manifest-file-read.js';
import type { ManifestDecodeApi } from '../../../src/shared/protocol/manifest-decode-protocol.js';

if (!parentPort) throw new Error('must run in a worker thread');
const hog: unknown[] = [];
const api: ManifestDecodeApi = {
  ready() {
    return true;
  },
  decode(text, ctx) {
    if (text === 'HANG') for (;;);
    if (text === 'OOM') for (;;) hog.push(new Array(1 << 16).fill(hog.length));
    if (text === 'JUNK') return {} as unknown as ReturnType<ManifestDecodeApi['decode']>;
    if (text === 'DEEP') {
      let deep: Record<string, unknown> = {};
      for (let i = 0; i < 10_000; i++) deep = { a: deep };
      return deep as unknown as ReturnType<ManifestDecodeApi['decode']>;
    }
    return toTransfer(podsFromManifest(text, ctx));
  },
  decodeFile(req) {
    if (fs.readFileSync(req.file, 'utf8') === 'HANG') for (;;);
    return fileResultToTransfer(readAndDecodeFile(req));
  },
};
expose(api, nodeEndpoint(parentPort));
