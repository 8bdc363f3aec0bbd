/**
 * Which pod goes to which worker thread. A pod UID hashes (FNV-1a, 32 bit) onto one of N
 * shards; each shard is bound to one live Piscina worker, identified by its thread id.
 *
 * Piscina's balancer sees only the task's queue options (the payload is not visible) and the
 * current worker list, without indexes, so the shard → thread binding lives here:
 *  - a new worker (pool 'workerCreate') binds to the lowest unbound shard;
 *  - a dead worker (pool 'workerDestroy') unbinds its shard; tasks for that shard are held in
 *    Piscina's queue (the balancer returns null) until the replacement thread binds to it,
 *    and the dispatcher then re-sends every pod of the shard (the new thread starts empty).
 * Invariant: the same UID always maps to the same shard, so per-pod ordering lives in exactly
 * one thread at a time.
 */
export function shardOf(uid: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < uid.length; i++) {
    h ^= uid.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

export class ShardTable {
  readonly shards: number;
  /** shard index → bound worker thread id, or undefined while unbound. */
  readonly #bound: (number | undefined)[];

  constructor(shards: number) {
    if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`shards must be a positive integer, got ${shards}`);
    this.shards = shards;
    this.#bound = new Array<number | undefined>(shards).fill(undefined);
  }

  /** Bind a new worker to the lowest unbound shard; returns the shard, or undefined if all are bound. */
  bind(workerId: number): number | undefined {
    const existing = this.#bound.indexOf(workerId);
    if (existing >= 0) return existing;
    const free = this.#bound.indexOf(undefined);
    if (free < 0) return undefined;
    this.#bound[free] = workerId;
    return free;
  }

  /** Unbind a worker (it died or was destroyed); returns the shard it held. */
  unbind(workerId: number): number | undefined {
    const i = this.#bound.indexOf(workerId);
    if (i < 0) return undefined;
    this.#bound[i] = undefined;
    return i;
  }

  workerFor(shard: number): number | undefined {
    return this.#bound[shard];
  }

  shardOfWorker(workerId: number): number | undefined {
    const i = this.#bound.indexOf(workerId);
    return i < 0 ? undefined : i;
  }

  /** Piscina loadBalancer: route a task to its shard's worker (key in queue options). */
  pick<W extends { id: number }>(shard: number | undefined, workers: readonly W[]): W | null {
    if (shard === undefined) return null;
    const id = this.#bound[shard];
    if (id === undefined) return null;
    for (const w of workers) if (w.id === id) return w;
    return null;
  }
}
