/**
 * Pod workers on a fixed Piscina pool: `minThreads = maxThreads = N`, one shard per thread,
 * tasks routed by pod UID (shard-table.ts). Verified facts about piscina 5.3 this relies on:
 *  - the balancer never sees the payload: the shard key travels under `queueOptionsSymbol`;
 *  - the balancer gets workers without indexes: the shard → thread-id table is ours;
 *  - `concurrentTasksPerWorker` is ignored with a custom balancer: per-pod serialization is the
 *    worker's (tasks are acknowledgements and resolve at once);
 *  - `atomics: 'sync'` would freeze an idle worker's timers and gRPC streams: use 'disabled';
 *  - a crashed worker rejects every in-flight task on it and is replaced under a new thread id
 *    ('workerDestroy' then 'workerCreate'); we re-send the shard's pods to the replacement;
 *  - without `pool.on('error')` an error in an idle worker crashes the process.
 */
import { Piscina } from 'piscina';
import { realClock } from '../clock/clock.js';
import { cacheNow } from '../pod-cache/pod-cache.js';
import type { Logger } from '../logging/logger.js';
import { isWorkerToMain, type PodUpdateMessage, type PodWorkerThreadConfig, type WorkerThreadStats } from '../../workers/pod-worker-protocol.js';
import type { PodDispatcher, PodDispatcherEvents } from './pod-dispatcher.js';
import { ShardTable, shardOf } from './shard-table.js';

export interface PoolDispatcherOptions {
  threads: number;
  /** Absolute path of the compiled worker entry (dist/workers/pod-worker-thread.js). */
  filename: string;
  workerData: PodWorkerThreadConfig;
  events: PodDispatcherEvents;
  logger: Logger;
  /** Called when a thread is replaced (shardlet_thread_restarts_total). */
  onThreadRestart?: (shard: number) => void;
  /** Called once per dead thread (the metrics aggregator retires its slot). */
  onThreadExit?: (threadId: number) => void;
  /** Cache time (monotonic ms, cacheNow) for statusNotBeforeMs stamps; default the real clock's. */
  now?: () => number;
}

export class PoolDispatcher implements PodDispatcher {
  readonly threads: number;
  readonly #pool: Piscina;
  readonly #table: ShardTable;
  readonly #o: PoolDispatcherOptions;
  /** Shards whose thread died; the next bound thread for them triggers a re-dispatch. */
  readonly #orphanedShards = new Set<number>();
  /**
   * When each shard last lost its thread (wall ms). Every later message to the shard carries it
   * as statusNotBeforeMs: updates sent while the shard had no thread wait in Piscina's queue and
   * reach the replacement BEFORE the re-dispatch, and the first of them creates the pod's record;
   * without the stamp it would sync on a status from before the dead thread's last actions.
   */
  readonly #lostAtMs = new Map<number, number>();
  #closed = false;

  constructor(o: PoolDispatcherOptions) {
    if (!Number.isInteger(o.threads) || o.threads < 1) throw new RangeError(`threads must be >= 1, got ${o.threads}`);
    this.#o = o;
    this.threads = o.threads;
    this.#table = new ShardTable(o.threads);
    const table = this.#table;
    this.#pool = new Piscina({
      filename: o.filename,
      minThreads: o.threads,
      maxThreads: o.threads,
      idleTimeout: Infinity,
      atomics: 'disabled',
      workerData: o.workerData,
      loadBalancer: (task, workers) => table.pick(((task as unknown as Record<symbol, { shard?: number } | null>)[Piscina.queueOptionsSymbol])?.shard, workers),
    });
    this.#pool.on('workerCreate', (w: { id: number }) => this.#onWorkerCreate(w.id));
    this.#pool.on('workerDestroy', () => this.#reconcile());
    this.#pool.on('message', (msg: unknown) => {
      if (isWorkerToMain(msg)) o.events.onMessage(msg);
    });
    this.#pool.on('error', (err: unknown) => {
      o.logger.error('pod worker thread error', { error: err instanceof Error ? err.message : String(err) });
    });
  }

  #onWorkerCreate(id: number): void {
    this.#reconcile();
    const shard = this.#table.bind(id);
    this.#o.logger.v(2).info('pod worker thread started', { threadId: id, shard: shard ?? -1 });
    if (shard !== undefined && this.#orphanedShards.delete(shard)) {
      this.#o.onThreadRestart?.(shard);
      this.#o.events.onShardRestarted(shard, this.threads);
    }
  }

  /**
   * Unbind shards whose thread is gone. Piscina reports a dead worker with id -1 (its
   * threadId after exit), so the dead thread is found by absence from the live thread list.
   */
  #reconcile(): void {
    if (this.#closed) return;
    const live = new Set(this.#pool.threads.map((t) => t.threadId).filter((id) => id >= 0));
    for (let shard = 0; shard < this.threads; shard++) {
      const id = this.#table.workerFor(shard);
      if (id === undefined || live.has(id)) continue;
      this.#table.unbind(id);
      this.#orphanedShards.add(shard);
      this.#lostAtMs.set(shard, (this.#o.now ?? (() => cacheNow(realClock)))());
      this.#o.onThreadExit?.(id);
      this.#o.logger.error('pod worker thread exited; its pods will be re-dispatched to a replacement', { threadId: id, shard });
    }
  }

  send(msg: PodUpdateMessage): void {
    if (this.#closed) return;
    const shard = shardOf(msg.uid, this.threads);
    const lostAt = this.#lostAtMs.get(shard);
    const notBefore = lostAt !== undefined && (msg.statusNotBeforeMs ?? -Infinity) < lostAt ? { statusNotBeforeMs: lostAt } : {};
    const task = { ...msg, ...notBefore, [Piscina.queueOptionsSymbol]: { shard } };
    this.#pool.run(task).catch((err: unknown) => {
      // The thread died with this task on it; the shard re-dispatch resends the pod.
      this.#o.logger.v(3).info('pod update lost with its thread', { podUID: msg.uid, error: err instanceof Error ? err.message : String(err) });
    });
  }

  async stats(): Promise<WorkerThreadStats[]> {
    const all: Promise<WorkerThreadStats | null>[] = [];
    for (let shard = 0; shard < this.threads; shard++) {
      if (this.#table.workerFor(shard) === undefined) continue;
      all.push(this.#pool.run({ kind: 'stats', [Piscina.queueOptionsSymbol]: { shard } }).catch(() => null) as Promise<WorkerThreadStats | null>);
    }
    return (await Promise.all(all)).filter((s): s is WorkerThreadStats => s !== null);
  }

  /** Thread ids by shard (for tests and metrics). */
  threadIds(): (number | undefined)[] {
    return Array.from({ length: this.threads }, (_, i) => this.#table.workerFor(i));
  }

  /**
   * Terminates the thread serving `shard` (chaos tests; no operator path calls it). Piscina
   * replaces it; its pods are re-sent to the replacement. Hazard, accepted for a test hook:
   * Worker.terminate() stops JavaScript anywhere, so a thread stopped inside a pod-cache write
   * (a few microseconds holding a slot's seqlock or the allocation lock; see
   * src/pod-cache/pod-cache-layout.ts) leaves that lock held; other threads touching it then
   * fail with ERR_CACHE_LOCK_STUCK after ~3 s (LOCK_STUCK_WAITS). A thread that crashes with an
   * exception cannot stop there (the writes are synchronous and release in finally).
   */
  async terminateThread(shard: number): Promise<void> {
    const id = this.#table.workerFor(shard);
    const worker = this.#pool.threads.find((t) => t.threadId === id);
    if (!worker) throw new RangeError(`no live thread for shard ${shard}`);
    await worker.terminate();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.destroy();
  }
}
