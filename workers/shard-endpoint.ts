/**
 * The worker side of a shard's MessagePort (see pod-worker-protocol.ts): answers one
 * {@link AttachTask} for the thread's lifetime. Builds the thread's host once (the first attach;
 * a later attach after a failed build tries again), says 'ready', then feeds each batch of
 * updates to the host and acknowledges it, answers stats requests, and returns when the main
 * side says 'close' (after closing the host) or the port closes.
 *
 * Invariant: 'ack' is posted only after every update of the batch was handed to the host, so
 * the main side's one-batch-in-flight bound covers the worker's message queue too.
 */
import type { MainToWorker, AttachTask, ShardInbound, ShardOutbound, WorkerThreadStats, WorkerToMain } from '../src/shared/protocol/pod-worker-protocol.js';

/** What a thread serves on its shard (PodWorkerHost in production; a fake in tests). */
export interface ShardHost {
  handle(msg: MainToWorker): WorkerThreadStats | null;
  close(): void;
}

export type ShardHostFactory = (emit: (msg: WorkerToMain) => void) => ShardHost | Promise<ShardHost>;

export interface ShardEndpoint {
  serve(task: AttachTask): Promise<void>;
}

/**
 * Defers a function to the end of the current event-loop turn (setImmediate: after the I/O
 * callbacks of this turn ran). Injected by tests that want to flush by hand.
 */
export type TurnScheduler = (fn: () => void) => void;

export function createShardEndpoint(threadId: number, makeHost: ShardHostFactory, scheduleFlush: TurnScheduler = setImmediate): ShardEndpoint {
  let host: ShardHost | undefined;
  /** The port results go to: the current attach's (results of a closed port are dropped). */
  let port: AttachTask['port'] | undefined;
  /**
   * Results of this event-loop turn, posted together at its end (one 'results' message; a single
   * result goes alone). A burst's results complete in the same turn by the dozen (each CRI answer
   * that arrives with others finishes a unit of work): one postMessage and one wake-up of the
   * main thread for them all, instead of one each. Order is kept; a result waits at most one turn.
   */
  let pending: WorkerToMain[] = [];
  let flushScheduled = false;
  const flush = (): void => {
    flushScheduled = false;
    const batch = pending;
    if (batch.length === 0) return;
    pending = [];
    const only = batch.length === 1 ? batch[0] : undefined;
    port?.postMessage((only ?? { kind: 'results', batch }) satisfies ShardOutbound);
  };
  const emit = (msg: WorkerToMain): void => {
    pending.push(msg);
    if (flushScheduled) return;
    flushScheduled = true;
    scheduleFlush(flush);
  };
  return {
    async serve(task: AttachTask): Promise<void> {
      if (task?.kind !== 'attach') throw new TypeError('pod-worker thread: expected an attach task');
      host ??= await makeHost(emit);
      const h = host;
      port = task.port;
      const p = task.port;
      await new Promise<void>((resolve) => {
        const finish = (): void => {
          p.off('message', onMessage);
          if (port === p) port = undefined;
          resolve();
        };
        const onMessage = (m: ShardInbound): void => {
          switch (m.kind) {
            case 'updates':
              for (const u of m.batch) h.handle(u);
              p.postMessage({ kind: 'ack' } satisfies ShardOutbound);
              return;
            case 'stats': {
              const stats = h.handle({ kind: 'stats' }) ?? { threadId, podsOwned: 0, queueDepth: 0, busyMs: 0 };
              p.postMessage({ kind: 'statsReply', id: m.id, stats } satisfies ShardOutbound);
              return;
            }
            case 'close':
              h.close();
              // What the host reported before it closed still goes out on this port.
              flush();
              host = undefined;
              p.close();
              finish();
              return;
            default: {
              const never: never = m;
              throw new TypeError(`unknown shard message ${JSON.stringify(never)}`);
            }
          }
        };
        p.on('message', onMessage);
        p.once('close', finish);
        p.postMessage({ kind: 'ready', threadId } satisfies ShardOutbound);
      });
    },
  };
}
