/** Test worker for the pool dispatcher: echoes each update as a podResult tagged with its thread id (and the update's statusNotBeforeMs); `crash` annotation ends the thread. */
import { parentPort, threadId } from 'node:worker_threads';
import type { MainToWorker, WorkerToMain } from '../../../workers/pod-worker-protocol.js';

export default function handle(msg: MainToWorker): unknown {
  if (msg.kind === 'stats') return { threadId, podsOwned: 0, queueDepth: 0, busyMs: 0 };
  if (msg.pod.metadata?.annotations?.['crash'] === 'true') process.exit(1);
  const out: WorkerToMain = { kind: 'podResult', threadId, uid: msg.uid, state: 'syncing', work: 'sync', durationMs: 0 };
  // Test-only extra field: what the dispatcher stamped on the update.
  parentPort?.postMessage({ ...out, statusNotBeforeMs: msg.statusNotBeforeMs ?? null });
  return null;
}
