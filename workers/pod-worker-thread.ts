/**
 * Piscina entry for a pod-worker thread: builds the thread's host once from workerData and
 * answers each task (an acknowledgement; see pod-worker-protocol.ts). Thin by design.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { createPodWorkerHost } from './pod-worker-factory.js';
import type { MainToWorker, PodWorkerThreadConfig, WorkerToMain } from './pod-worker-protocol.js';

const host = createPodWorkerHost({
  config: workerData as PodWorkerThreadConfig,
  threadId,
  emit: (msg: WorkerToMain) => parentPort?.postMessage(msg),
});

export default function handle(msg: MainToWorker): unknown {
  return host.handle(msg);
}
