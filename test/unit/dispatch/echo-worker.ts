/**
 * Test worker for the pool dispatcher, on the product's thread endpoint (shard-endpoint.ts):
 * echoes each update as a podResult tagged with its thread id (and the update's
 * statusNotBeforeMs and updateType). Annotations: `crash` ends the thread; `block-ms` blocks
 * the thread that long (a slow shard). workerData.failAttaches: the first N host builds of
 * each thread throw (a replacement failing while it boots). workerData.loads (an Int32Array
 * over a SharedArrayBuffer counting module loads across threads) with failLoads: the loads with
 * those numbers throw while the module loads, i.e. that thread dies before Piscina's READY.
 */
import { threadId, workerData } from 'node:worker_threads';
import type { AttachTask, WorkerToMain } from '../../../src/shared/protocol/pod-worker-protocol.js';
import { createShardEndpoint } from '../../../workers/shard-endpoint.js';

const wd = workerData as { loads?: Int32Array; failLoads?: number[] };
if (wd.loads !== undefined) {
  const n = Atomics.add(wd.loads, 0, 1);
  if (wd.failLoads?.includes(n)) throw new Error(`module load ${n} failed (test): the thread dies before READY`);
}

let builds = 0;
const failAttaches = (workerData as { failAttaches?: number }).failAttaches ?? 0;

const endpoint = createShardEndpoint(threadId, (emit) => {
  if (builds++ < failAttaches) throw new Error(`host build ${builds} failed (test)`);
  return {
    handle(msg) {
      if (msg.kind === 'stats') return { threadId, podsOwned: 0, queueDepth: 0, busyMs: 0 };
      const ann = msg.pod.metadata?.annotations ?? {};
      if (ann['crash'] === 'true') process.exit(1);
      const block = Number(ann['block-ms'] ?? 0);
      if (block > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, block);
      const out: WorkerToMain = { kind: 'podResult', threadId, uid: msg.uid, state: 'syncing', work: 'sync', durationMs: 0 };
      // Test-only extra fields: what the dispatcher delivered.
      emit({ ...out, statusNotBeforeMs: msg.statusNotBeforeMs ?? null, updateType: msg.updateType } as WorkerToMain);
      return null;
    },
    close() {},
  };
});

export default function attach(task: AttachTask): Promise<void> {
  return endpoint.serve(task);
}
