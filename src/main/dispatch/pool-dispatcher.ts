/**
 * Pod workers on a fixed Piscina pool (`minThreads = maxThreads = N`), one shard per thread, pods
 * routed by UID (shard-table.ts `shardOf`). Piscina owns the threads (creation, replacement of a
 * dead one, teardown); it is not used as a task queue: each shard has its own MessageChannel and
 * each thread runs one long-lived attach task carrying its shard's port (pod-worker-protocol.ts).
 * Why: with one task per update, Piscina's single FIFO queued every shard's updates behind those
 * of a shard whose thread was restarting (the balancer could not place them), and reordered them.
 *
 * Per shard, an explicit state machine:
 *
 *     attaching ──(thread says 'ready')──▶ ready ──(attach task rejects: the thread died, or its
 *         ▲                                  │       host failed to build)
 *         └──────(re-attach, backoff)────────┘
 *     any ──close()──▶ closed
 *
 * Invariants:
 *  - Updates are coalesced per pod on the main side (update-coalescer.ts) and at most one batch
 *    is in flight per shard (the next goes after the worker's 'ack'): memory on this path is
 *    bounded by the number of pods, whatever the worker's pace, and a shard that is down only
 *    accumulates its own pods' newest updates while the others keep flowing.
 *  - Per-pod order: a pod's updates only ever go through its shard's single port, in order;
 *    coalescing keeps what the worker would have kept (newest, kills never undone).
 *  - A replacement's 'ready' triggers onShardRestarted: the sync loop re-sends every pod of the
 *    shard (a batch in flight when the thread died may be lost; the re-send covers it).
 *  - A failed attach is retried (0 ms for the first retry after a working thread died, then
 *    100 ms doubling to 5 s), so an error while a replacement boots never stops replacements.
 *    The worker entry does nothing fallible before Piscina's READY (see pod-worker-thread.ts).
 *  - An attach that has not said 'ready' within attachTimeoutMs is aborted (loudly) and retried.
 *    Why: a replacement thread that dies before Piscina's READY (killed while loading its
 *    modules: OOM killer, a terminate(), a broken install) sets Piscina 5.3.2's sticky
 *    `workerFailsDuringBootstrap` flag, after which Piscina never replaces a dead thread by
 *    itself again (_onError skips _ensureMinimumWorkers), and our attach task, queued for a
 *    thread that will never come, waits forever. Aborting it removes it from Piscina's queue;
 *    the retry's `run()` finds the pool below maxThreads and spawns a thread itself (Piscina
 *    spawns on submit regardless of the flag), so replacements keep working.
 *  - What a thread sends is handled in order, per shard, within a main-thread time budget
 *    (turnBudgetMs per macrotask, all shards together): a pod-worker thread sends every result
 *    of one of its event-loop turns as one 'results' message (dozens in a burst), and handling a
 *    whole batch at once held the main thread 13–28 ms (burst event-loop delay p99 at 1,000 and
 *    5,000 pods). A message arriving while its shard has queued ones waits behind them. What a
 *    thread sent before it died or before close() is still handled, at once, as it was when
 *    every message was handled on arrival.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock/clock.js';
import { cacheNow } from '../../shared/pod-cache/pod-cache.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { AttachTask, PodUpdateMessage, PodWorkerThreadConfig, ShardInbound, ShardOutbound, WorkerThreadStats } from '../../shared/protocol/pod-worker-protocol.js';
import type { PodDispatcher, PodDispatcherEvents } from './pod-dispatcher.js';
import { shardOf } from './shard-table.js';
import { UpdateCoalescer } from './update-coalescer.js';
import { WORKER_HEAP_LIMITS } from './worker-heap-limits.js';
import { backoffForAttempt } from '../../shared/backoff/exponential-backoff.js';

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
  /** Timers for attach retries and the attach watchdog (default: real timers). */
  clock?: Clock;
  /** Default POOL_DISPATCHER_DEFAULTS.attachTimeoutMs. */
  attachTimeoutMs?: number;
  /** Main-thread ms one drain of the threads' messages may take (default POOL_DISPATCHER_DEFAULTS.turnBudgetMs). */
  turnBudgetMs?: number;
  /** Monotonic ms for that budget (default performance.now); tests inject a stepping clock. */
  budgetNow?: () => number;
  /** Runs the next drain on a later macrotask (default setImmediate); tests run it themselves. */
  defer?: (fn: () => void) => void;
}

export const POOL_DISPATCHER_DEFAULTS = Object.freeze({
  attachRetryInitialMs: 100,
  attachRetryMaxMs: 5_000,
  /** An attach not 'ready' after this long is aborted and retried (see the invariants above). */
  attachTimeoutMs: 30_000,
  /** close(): how long threads get to close their hosts before the pool is destroyed. */
  closeGraceMs: 5_000,
  /** Main-thread time per drain of the threads' messages (see the invariants above). */
  turnBudgetMs: 4,
});

/** One message from a shard's thread, waiting to be handled (a 'results' batch is queued result by result). */
interface Queued {
  readonly port: MessagePort;
  readonly msg: Exclude<ShardOutbound, { kind: 'results' }>;
}

type ShardState = 'attaching' | 'ready' | 'closed';

interface Shard {
  readonly index: number;
  state: ShardState;
  readonly pending: UpdateCoalescer;
  /** Main side of the current attach's channel. */
  port: MessagePort | undefined;
  /** The serving thread, once it said 'ready'. */
  threadId: number | undefined;
  /** A batch was posted and not yet acknowledged. */
  inFlight: boolean;
  /** A thread served this shard before: the next 'ready' is a restart. */
  everReady: boolean;
  /** Consecutive attaches that ended without or right after 'ready' (backoff). */
  failures: number;
  retry: TimerHandle | undefined;
  /** Aborts the current attach task if it is not 'ready' in time (cancelled on 'ready'). */
  watchdog: TimerHandle | undefined;
  /** The current attach task (settles when its thread ends serving). */
  task: Promise<void> | undefined;
  readonly statsWaiters: Map<number, (s: WorkerThreadStats | null) => void>;
  /** Messages received and not yet handled, oldest first from `inboxHead` (see the invariants). */
  inbox: Queued[];
  inboxHead: number;
}

export class PoolDispatcher implements PodDispatcher {
  readonly threads: number;
  readonly #pool: Piscina;
  readonly #o: PoolDispatcherOptions;
  readonly #clock: Clock;
  readonly #shards: Shard[];
  /**
   * When each shard last lost its thread (wall ms). Every later message to the shard carries it
   * as statusNotBeforeMs: a pod's first update to the replacement creates its record, and must
   * not sync on a status from before the dead thread's last actions.
   */
  readonly #lostAtMs = new Map<number, number>();
  #statsId = 0;
  #closed = false;
  /** whenAllReady() callers, settled when every shard has a ready thread. */
  #readyWaiters: (() => void)[] = [];
  /** A drain of the shards' inboxes is scheduled (setImmediate). */
  #drainScheduled = false;
  readonly #budgetNow: () => number;
  readonly #turnBudgetMs: number;
  readonly #defer: (fn: () => void) => void;

  constructor(o: PoolDispatcherOptions) {
    if (!Number.isInteger(o.threads) || o.threads < 1) throw new RangeError(`threads must be >= 1, got ${o.threads}`);
    this.#o = o;
    this.#clock = o.clock ?? realClock;
    this.#budgetNow = o.budgetNow ?? (() => performance.now());
    this.#turnBudgetMs = o.turnBudgetMs ?? POOL_DISPATCHER_DEFAULTS.turnBudgetMs;
    this.#defer = o.defer ?? ((fn) => void setImmediate(fn));
    this.threads = o.threads;
    this.#pool = new Piscina({
      filename: o.filename,
      minThreads: o.threads,
      maxThreads: o.threads,
      idleTimeout: Infinity,
      // 'sync' would freeze an idle worker's timers and gRPC streams.
      atomics: 'disabled',
      workerData: o.workerData,
      // A capped young generation (worker-heap-limits.ts); Piscina passes it to each Worker.
      resourceLimits: { ...WORKER_HEAP_LIMITS },
      // One attach task per thread: place it on a thread that serves none.
      loadBalancer: (_task, workers) => workers.find((w) => w.currentUsage === 0 && !w.terminating && !w.destroyed) ?? null,
    });
    // Without a listener an error in an idle worker crashes the process.
    this.#pool.on('error', (err: unknown) => {
      o.logger.error('pod worker thread error', { error: err instanceof Error ? err.message : String(err) });
    });
    this.#shards = Array.from({ length: o.threads }, (_, index) => ({
      index, state: 'attaching' as ShardState, pending: new UpdateCoalescer(), port: undefined, threadId: undefined,
      inFlight: false, everReady: false, failures: 0, retry: undefined, watchdog: undefined, task: undefined, statsWaiters: new Map(),
      inbox: [], inboxHead: 0,
    }));
    for (const s of this.#shards) this.#attach(s);
  }

  #attach(s: Shard): void {
    if (this.#closed) return;
    s.retry = undefined;
    const { port1, port2 } = new MessageChannel();
    s.state = 'attaching';
    s.port = port1;
    s.inFlight = false;
    port1.on('message', (m: ShardOutbound) => this.#receive(s, port1, m));
    const task: AttachTask = { kind: 'attach', shard: s.index, port: port2 };
    const ac = new AbortController();
    const timeoutMs = this.#o.attachTimeoutMs ?? POOL_DISPATCHER_DEFAULTS.attachTimeoutMs;
    s.watchdog = this.#clock.setTimer(timeoutMs, () => {
      if (s.port !== port1 || s.state !== 'attaching') return;
      this.#o.logger.error('pod worker thread did not attach in time; aborting and retrying (a replacement thread may have died before Piscina marked it ready)', { shard: s.index, timeoutMs });
      ac.abort(new Error(`attach not ready within ${timeoutMs} ms`));
    }, { unref: true });
    const run = this.#pool.run(task, { transferList: [port2], signal: ac.signal }) as Promise<void>;
    s.task = run.then(
      () => this.#onAttachEnded(s, port1, undefined),
      (err: unknown) => this.#onAttachEnded(s, port1, err),
    );
  }

  /** A message from a shard's port: handled now when nothing of its shard waits, else queued behind. */
  #receive(s: Shard, port: MessagePort, m: ShardOutbound): void {
    if (s.port !== port) return; // a previous attach's late message
    if (m.kind === 'results') {
      for (const r of m.batch) s.inbox.push({ port, msg: r });
    } else if (s.inboxHead === s.inbox.length) {
      this.#onMessage(s, port, m);
      return;
    } else {
      s.inbox.push({ port, msg: m });
    }
    if (!this.#drainScheduled) {
      this.#drainScheduled = true;
      this.#defer(() => this.#drain());
    }
  }

  /** Handles queued messages, shard by shard in turn, until the budget is spent; then yields. */
  #drain(): void {
    this.#drainScheduled = false;
    const deadline = this.#budgetNow() + this.#turnBudgetMs;
    for (let more = true; more; ) {
      more = false;
      for (const s of this.#shards) {
        if (s.inboxHead === s.inbox.length) continue;
        const q = s.inbox[s.inboxHead++]!;
        this.#onMessage(s, q.port, q.msg);
        if (s.inboxHead === s.inbox.length) {
          s.inbox = [];
          s.inboxHead = 0;
        } else {
          more = true;
        }
        if (this.#budgetNow() >= deadline) {
          if (this.#shards.some((x) => x.inboxHead < x.inbox.length) && !this.#drainScheduled) {
            this.#drainScheduled = true;
            this.#defer(() => this.#drain());
          }
          return;
        }
      }
    }
  }

  /** Handles everything queued for `s` now (its thread ended, or close()). */
  #drainShard(s: Shard): void {
    while (s.inboxHead < s.inbox.length) {
      const q = s.inbox[s.inboxHead++]!;
      this.#onMessage(s, q.port, q.msg);
    }
    s.inbox = [];
    s.inboxHead = 0;
  }

  #onMessage(s: Shard, port: MessagePort, m: ShardOutbound): void {
    if (s.port !== port) return; // a previous attach's late message, or a handler replaced the port
    switch (m.kind) {
      case 'ready': {
        s.watchdog?.cancel();
        s.watchdog = undefined;
        s.state = 'ready';
        s.threadId = m.threadId;
        s.failures = 0;
        const restart = s.everReady;
        s.everReady = true;
        this.#o.logger.v(2).info('pod worker thread started', { threadId: m.threadId, shard: s.index });
        if (restart) {
          this.#o.onThreadRestart?.(s.index);
          this.#o.events.onShardRestarted(s.index, this.threads);
        }
        this.#flush(s);
        if (this.#shards.every((x) => x.state === 'ready')) for (const w of this.#readyWaiters.splice(0)) w();
        return;
      }
      case 'ack':
        s.inFlight = false;
        this.#flush(s);
        return;
      case 'statsReply': {
        const w = s.statsWaiters.get(m.id);
        s.statsWaiters.delete(m.id);
        w?.(m.stats);
        return;
      }
      case 'podResult':
      case 'probe':
      case 'podEvent':
        this.#o.events.onMessage(m);
        return;
      case 'results':
        // #receive queues a batch result by result; each is checked against the port on its own.
        for (const r of m.batch) this.#onMessage(s, port, r);
        return;
      default: {
        const never: never = m;
        this.#o.logger.error('unknown message from a pod worker thread', { message: JSON.stringify(never) });
      }
    }
  }

  /** The attach task settled: the thread died, its host failed to build, or close(). */
  #onAttachEnded(s: Shard, port: MessagePort, err: unknown): void {
    if (s.port !== port) return;
    // What the thread sent before it ended is handled before its pods move (see the invariants).
    this.#drainShard(s);
    if (s.port !== port) return;
    s.watchdog?.cancel();
    s.watchdog = undefined;
    port.close();
    s.port = undefined;
    s.inFlight = false;
    for (const w of s.statsWaiters.values()) w(null);
    s.statsWaiters.clear();
    if (this.#closed) {
      s.state = 'closed';
      return;
    }
    const wasReady = s.state === 'ready';
    if (s.threadId !== undefined) {
      this.#lostAtMs.set(s.index, (this.#o.now ?? (() => cacheNow(realClock)))());
      this.#o.onThreadExit?.(s.threadId);
      this.#o.logger.error('pod worker thread exited; its pods will be re-dispatched to a replacement', { threadId: s.threadId, shard: s.index, error: errText(err) });
      s.threadId = undefined;
    } else {
      this.#o.logger.error('pod worker thread failed to attach; retrying', { shard: s.index, error: errText(err) });
    }
    s.state = 'attaching';
    // A thread that served and died is replaced at once; repeated failures back off.
    const delay = wasReady ? 0 : backoffForAttempt(s.failures, { initialMs: POOL_DISPATCHER_DEFAULTS.attachRetryInitialMs, maxMs: POOL_DISPATCHER_DEFAULTS.attachRetryMaxMs });
    s.failures++;
    if (delay === 0) this.#attach(s);
    else s.retry = this.#clock.setTimer(delay, () => this.#attach(s), { unref: true });
  }

  #flush(s: Shard): void {
    if (s.state !== 'ready' || s.inFlight || s.pending.size === 0 || !s.port) return;
    s.inFlight = true;
    s.port.postMessage({ kind: 'updates', batch: s.pending.drain() } satisfies ShardInbound);
  }

  send(msg: PodUpdateMessage): void {
    if (this.#closed) return;
    const s = this.#shards[shardOf(msg.uid, this.threads)]!;
    const lostAt = this.#lostAtMs.get(s.index);
    s.pending.add(lostAt !== undefined && (msg.statusNotBeforeMs ?? -Infinity) < lostAt ? { ...msg, statusNotBeforeMs: lostAt } : msg);
    this.#flush(s);
  }

  async stats(): Promise<WorkerThreadStats[]> {
    const all: Promise<WorkerThreadStats | null>[] = [];
    for (const s of this.#shards) {
      if (s.state !== 'ready' || !s.port) continue;
      const id = ++this.#statsId;
      all.push(new Promise((resolve) => s.statsWaiters.set(id, resolve)));
      s.port.postMessage({ kind: 'stats', id } satisfies ShardInbound);
    }
    return (await Promise.all(all)).filter((x): x is WorkerThreadStats => x !== null);
  }

  /** Resolves once every shard has a thread that said 'ready' (now, if they all have). */
  whenAllReady(): Promise<void> {
    if (this.#shards.every((x) => x.state === 'ready')) return Promise.resolve();
    return new Promise((resolve) => this.#readyWaiters.push(resolve));
  }

  /** Thread ids by shard (undefined while a shard has no ready thread). */
  threadIds(): (number | undefined)[] {
    return this.#shards.map((s) => (s.state === 'ready' ? s.threadId : undefined));
  }

  /** Updates waiting on the main side per shard (tests; the bound of the main → worker path). */
  pendingByShard(): number[] {
    return this.#shards.map((s) => s.pending.size);
  }

  /**
   * Terminates the thread serving `shard` (chaos tests; no operator path calls it). Piscina
   * replaces it; its pods are re-sent to the replacement. Hazard, accepted for a test hook:
   * Worker.terminate() stops JavaScript anywhere, so a thread stopped inside a pod-cache write
   * (a few microseconds holding a slot's seqlock or the allocation lock; see
   * src/shared/pod-cache/pod-cache-layout.ts) leaves that lock held; other threads touching it then
   * fail with ERR_CACHE_LOCK_STUCK after ~3 s (LOCK_STUCK_WAITS). A thread that crashes with an
   * exception cannot stop there (the writes are synchronous and release in finally).
   */
  async terminateThread(shard: number): Promise<void> {
    const id = this.#shards[shard]?.threadId;
    const worker = id === undefined ? undefined : this.#pool.threads.find((t) => t.threadId === id);
    if (!worker) throw new RangeError(`no live thread for shard ${shard}`);
    await worker.terminate();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const tasks: Promise<void>[] = [];
    for (const s of this.#shards) {
      s.retry?.cancel();
      s.watchdog?.cancel();
      if (s.port) s.port.postMessage({ kind: 'close' } satisfies ShardInbound);
      if (s.task) tasks.push(s.task);
    }
    // Let the threads close their hosts (CRI channels, probers), bounded.
    const grace = new Promise<void>((resolve) => this.#clock.setTimer(POOL_DISPATCHER_DEFAULTS.closeGraceMs, resolve, { unref: true }));
    await Promise.race([Promise.all(tasks), grace]);
    for (const s of this.#shards) {
      this.#drainShard(s);
      s.port?.close();
      s.state = 'closed';
    }
    await this.#pool.destroy();
  }
}

function errText(err: unknown): string {
  return err === undefined ? 'none' : err instanceof Error ? err.message : String(err);
}
