/**
 * The seam between the sync loop and wherever pod workers run: a Piscina pool of threads
 * (pool-dispatcher.ts) or inline on the main thread (inline-dispatcher.ts, `--workers 0`).
 */
import type { PodUpdateMessage, WorkerThreadStats, WorkerToMain } from '../../shared/protocol/pod-worker-protocol.js';

export interface PodDispatcher {
  /** Number of worker threads (0 = inline). */
  readonly threads: number;
  /** Hand an update to the pod's worker. Never blocks; per-pod ordering is preserved. */
  send(msg: PodUpdateMessage): void;
  /** Per-thread statistics (pods owned, queue depth, busy time). */
  stats(): Promise<WorkerThreadStats[]>;
  /** Stop accepting work and let threads exit; pods keep running. Idempotent. */
  close(): Promise<void>;
}

export interface PodDispatcherEvents {
  /** A result or probe update from a worker. */
  onMessage(msg: WorkerToMain): void;
  /**
   * A worker thread died and its replacement is bound to `shard`: every pod that hashes to
   * it must be sent again (the new thread starts with no pod state).
   */
  onShardRestarted(shard: number, shards: number): void;
}
