/**
 * A decoder thread for the start-up limit of ThreadManifestDecoder: it runs but never exposes
 * the API, as a thread whose start never finishes (it is terminated by the test's decoder).
 */
import { parentPort } from 'node:worker_threads';

if (!parentPort) throw new Error('must run in a worker thread');
setInterval(() => {}, 1 << 30);
