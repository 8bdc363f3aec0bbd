/**
 * Relist duration against the fake runtime at 1,000 and 5,000 pods (not a test; prints numbers):
 *   npx tsc -p . && node dist/test/unit/pleg/relist.bench.js
 * Per size: the first relist (every pod new: all inspected, all written), a steady relist
 * (nothing changed), and one where 1% of the containers exited.
 */
import { realClock } from '../../../src/shared/clock/clock.js';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { GenericPleg, type RelistReport } from '../../../workers/pleg/generic-pleg.js';
import { FakeRuntime } from './fake-runtime.js';

async function bench(pods: number): Promise<void> {
  const runtime = new FakeRuntime();
  // 64-character ids and 36-character uids, like containerd's and the API server's.
  const sid = (p: number): string => `x${String(p).padStart(63, '0')}`;
  const cid = (c: string, p: number): string => `${c[0]}${String(p).padStart(63, '0')}`;
  for (let p = 0; p < pods; p++) {
    runtime.addSandbox(sid(p), `u${String(p).padStart(35, '0')}`);
    for (const c of ['app', 'sidecar']) {
      runtime.addContainer(cid(c, p), sid(p), c);
      runtime.start(cid(c, p));
    }
  }
  const { reader, writer } = createPodCache({ capacity: pods + pods / 4 });
  let last: RelistReport | undefined;
  const pleg = new GenericPleg({ runtime, cache: writer, cacheReader: reader, clock: realClock, sink: (r) => (last = r), eventCapacity: 1e9 });
  const run = async (label: string): Promise<void> => {
    const before = pleg.counters().inspectCallsTotal;
    await pleg.relist();
    pleg.ackEvents(last?.events.length ?? 0);
    process.stdout.write(
      `${String(pods).padStart(5)} pods  ${label.padEnd(22)} ${(1000 * (last?.durationSeconds ?? NaN)).toFixed(1).padStart(7)} ms  ` +
      `events ${String(last?.events.length).padStart(6)}  inspections ${pleg.counters().inspectCallsTotal - before}\n`,
    );
  };
  await run('first (all new)');
  for (let k = 0; k < 3; k++) await run('steady (no change)');
  for (let p = 0; p < pods; p += 100) runtime.exit(cid('app', p), 1);
  await run('1% containers exited');
  await run('steady (no change)');
}

await bench(1000);
await bench(5000);
