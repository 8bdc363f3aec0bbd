/**
 * Piscina entry for a pod-worker thread: one long-lived attach task per thread (see
 * pod-worker-protocol.ts). Thin by design, and nothing fallible at load: Piscina stops
 * replacing threads by itself once one dies before its READY, so the host (CRI channel, cache,
 * prober) is built inside the attach task, where a failure rejects that task only and the
 * dispatcher retries the attach. (A thread killed while loading still trips Piscina's flag; the
 * dispatcher's attach watchdog recovers from that: see pool-dispatcher.ts.)
 */
import { threadId, workerData } from 'node:worker_threads';
import type { AttachTask, PodWorkerThreadConfig } from '../src/shared/protocol/pod-worker-protocol.js';
import { createShardEndpoint } from './shard-endpoint.js';

const endpoint = createShardEndpoint(threadId, async (emit) => {
  const { createPodWorkerHost } = await import('./pod-worker-factory.js');
  return createPodWorkerHost({ config: workerData as PodWorkerThreadConfig, threadId, emit });
});

export default function attach(task: AttachTask): Promise<void> {
  return endpoint.serve(task);
}
