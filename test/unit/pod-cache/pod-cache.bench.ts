/**
 * Codec and cache micro-benchmark (not a test; prints numbers):
 *   npx tsc -p . && node dist/test/unit/pod-cache/pod-cache.bench.js
 */
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { StatusEncoder, decodeEntry } from '../../../src/shared/pod-cache/pod-status-codec.js';
import { podUid, typicalPodStatus } from './pod-status-fixtures.js';

function measure(name: string, n: number, fn: (k: number) => void): void {
  for (let k = 0; k < Math.min(n, 20_000); k++) fn(k); // warm-up
  const t0 = performance.now();
  for (let k = 0; k < n; k++) fn(k);
  const us = ((performance.now() - t0) * 1000) / n;
  process.stdout.write(`${name.padEnd(44)} ${us.toFixed(2)} µs/op\n`);
}

const N = 200_000;
const st = typicalPodStatus(7, 1);
const enc = new StatusEncoder();
const bytes = Buffer.from(enc.encode(st, null));
process.stdout.write(`typical 2-container pod: ${bytes.length} bytes binary, ${Buffer.byteLength(JSON.stringify(st))} bytes JSON\n`);
measure('binary encode', N, () => enc.encode(st, null));
measure('binary decode', N, () => decodeEntry(bytes, bytes.length));
measure('binary encode+decode', N, () => {
  const b = enc.encode(st, null);
  decodeEntry(b, b.length);
});
measure('JSON stringify+parse (comparison)', N, () => JSON.parse(JSON.stringify(st)));

const pods = 5000;
const { reader, writer } = createPodCache({ capacity: 6000 });
const statuses = Array.from({ length: pods }, (_, p) => typicalPodStatus(p, 1));
const uids = Array.from({ length: pods }, (_, p) => podUid(p));
let ts = 1;
measure('cache.set (5000 pods, round robin)', N, (k) => writer.set(uids[k % pods]!, statuses[k % pods]!, null, ts++));
measure('cache.get (5000 pods, round robin)', N, (k) => reader.get(uids[k % pods]!));
measure('cache.updateTime', N, () => writer.updateTime(ts++));
process.stdout.write(`stats: ${JSON.stringify(reader.stats())}\n`);
