/**
 * Piscina entry for a pod-worker thread: one long-lived attach task per thread (see
 * pod-worker-protocol.ts). Thin by design, and nothing fallible at load: Piscina stops
 * replacing threads for good once one dies before its READY, so the host (CRI channel, cache,
 * prober) is built inside the attach task, where a failure rejects that task only and the
 * dispatcher retries the attach.
 */
import { threadId, workerData } from 'node:worker_threads';
import type { AttachTask, PodWorkerThreadConfig } from './pod-worker-protocol.js';
import { createShardEndpoint } from './shard-endpoint.js';

const endpoint = createShardEndpoint(threadId, async (emit) => {
  const { createPodWorkerHost } = await import('./pod-worker-factory.js');
  return createPodWorkerHost({ config: workerData as PodWorkerThreadConfig, threadId, emit });
});

export default function attach(task: AttachTask): Promise<void> {
  return endpoint.serve(task);
}
