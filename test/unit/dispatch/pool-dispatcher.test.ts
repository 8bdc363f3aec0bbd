/**
 * The pool dispatcher on real Piscina threads running the product's shard endpoint
 * (workers/shard-endpoint.ts) with an echo host (echo-worker.ts). Waits are on the
 * dispatcher's own events (results, restarts), each bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PoolDispatcher } from '../../../src/main/dispatch/pool-dispatcher.js';
import { shardOf } from '../../../src/main/dispatch/shard-table.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import type { PodUpdateMessage, WorkerToMain } from '../../../src/shared/protocol/pod-worker-protocol.js';

const echoWorker = path.join(path.dirname(fileURLToPath(import.meta.url)), 'echo-worker.js');

interface Echo { uid: string; threadId: number; statusNotBeforeMs: number | null; updateType: string }

function update(uid: string, o: { crash?: boolean; blockMs?: number; type?: PodUpdateMessage['updateType'] } = {}): PodUpdateMessage {
  const annotations: Record<string, string> = {};
  if (o.crash) annotations['crash'] = 'true';
  if (o.blockMs) annotations['block-ms'] = String(o.blockMs);
  return { kind: 'update', uid, updateType: o.type ?? 'sync', pod: { metadata: { uid, annotations } }, ...(o.type === 'kill' ? { kill: { removed: true, reason: 'test' } } : {}) };
}

/** Resolves when `pred` holds after some event; rejects after `timeoutMs`. */
class Signals {
  readonly #waiters = new Set<() => void>();
  changed(): void {
    for (const w of [...this.#waiters]) w();
  }
  until(pred: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!pred()) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.#waiters.add(check);
    });
  }
}

async function bounded<T>(p: Promise<T>, what: string, timeoutMs = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs)));
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

function setup(threads: number, o: { failAttaches?: number; now?: () => number; loads?: Int32Array; failLoads?: number[]; attachTimeoutMs?: number } = {}) {
  const results: Echo[] = [];
  const restarted: number[] = [];
  const sig = new Signals();
  const d = new PoolDispatcher({
    threads,
    filename: echoWorker,
    workerData: { endpoint: '', cacheBuffer: new SharedArrayBuffer(8), nodeName: 'n', hostIP: '', podLogsDir: '', runtimeName: 'x', verbosity: 0, runtimeRequestTimeoutMs: 1, syncFrequencyMs: 1, metricsBuffer: new SharedArrayBuffer(8), ...(o.failAttaches ? { failAttaches: o.failAttaches } : {}), ...(o.loads ? { loads: o.loads, failLoads: o.failLoads ?? [] } : {}) } as never,
    ...(o.attachTimeoutMs !== undefined ? { attachTimeoutMs: o.attachTimeoutMs } : {}),
    logger: silentLogger,
    ...(o.now ? { now: o.now } : {}),
    events: {
      onMessage: (m: WorkerToMain) => {
        if (m.kind !== 'podResult') return;
        results.push(m as unknown as Echo);
        sig.changed();
      },
      onShardRestarted: (shard) => {
        restarted.push(shard);
        sig.changed();
      },
    },
  });
  const seen = (uids: readonly string[], from = 0): boolean => {
    const got = new Set(results.slice(from).map((r) => r.uid));
    return uids.every((u) => got.has(u));
  };
  return { d, results, restarted, sig, seen };
}

test('a pod always reaches its shard’s one thread, before and after a thread crash; updates are coalesced per pod', async () => {
  const { d, results, restarted, sig, seen } = setup(4);
  try {
    const uids = Array.from({ length: 500 }, (_, i) => `pod-${i}`);
    for (let i = 0; i < 10_000; i++) d.send(update(uids[i % uids.length]!));
    await sig.until(() => seen(uids), 'every pod’s result');
    assert.ok(results.length <= 10_000);
    const threadOfUid = new Map<string, number>();
    for (const r of results) {
      const t = threadOfUid.get(r.uid);
      if (t !== undefined) assert.equal(r.threadId, t, `${r.uid} reached two threads`);
      threadOfUid.set(r.uid, r.threadId);
    }
    assert.equal(new Set(threadOfUid.values()).size, 4, 'all four threads got pods');
    const before = d.threadIds();

    const victimShard = shardOf('pod-0', 4);
    d.send(update('pod-0', { crash: true }));
    await sig.until(() => restarted.length === 1, 'the replacement thread');
    assert.deepEqual(restarted, [victimShard]);
    const after = d.threadIds();
    assert.notEqual(after[victimShard], before[victimShard], 'the shard has a new thread');
    for (let s = 0; s < 4; s++) if (s !== victimShard) assert.equal(after[s], before[s], 'other shards keep their thread');

    const from = results.length;
    for (let i = 0; i < 10_000; i++) d.send(update(uids[i % uids.length]!));
    await sig.until(() => seen(uids, from), 'every pod’s result after the crash');
    for (const r of results.slice(from)) {
      const expected = shardOf(r.uid, 4) === victimShard ? after[victimShard] : threadOfUid.get(r.uid);
      assert.equal(r.threadId, expected, `${r.uid} routed to its shard's thread`);
    }
    assert.equal((await d.stats()).length, 4);
  } finally {
    await d.close();
  }
});

test('healthy shards keep their pace while one shard’s replacement keeps failing to boot; its pods follow once it is up', async () => {
  // Every thread's first 3 host builds fail: the initial threads too (retried with backoff),
  // and the replacement stays down ~0.7 s (100 + 200 + 400 ms of retries).
  const { d, results, restarted, sig, seen } = setup(2, { failAttaches: 3 });
  try {
    await bounded(d.whenAllReady(), 'both shards ready despite failing boots');
    const uids = Array.from({ length: 200 }, (_, i) => `p-${i}`);
    const victim = shardOf('p-0', 2);
    const healthy = uids.filter((u) => shardOf(u, 2) !== victim);
    const down = uids.filter((u) => shardOf(u, 2) === victim);
    d.send(update('p-0', { crash: true }));
    const from = results.length;
    for (let round = 0; round < 5; round++) for (const u of uids) d.send(update(u));
    // The healthy shard's pods are all served while the victim has no thread.
    await sig.until(() => seen(healthy, from), 'the healthy shard’s results');
    assert.equal(restarted.length, 0, 'the victim was still down');
    assert.ok(results.slice(from).every((r) => shardOf(r.uid, 2) !== victim), 'nothing of the victim’s shard ran meanwhile');
    assert.ok(d.pendingByShard()[victim]! <= down.length, 'the down shard holds at most one update per pod');
    await sig.until(() => restarted.length === 1 && seen(down, from), 'the victim’s replacement and its pods');
  } finally {
    await d.close();
  }
});

test('a slow shard: per-pod coalescing bounds what waits, a kill is never overtaken, other shards flow', async () => {
  const { d, results, sig, seen } = setup(2);
  try {
    await bounded(d.whenAllReady(), 'threads ready');
    const all = Array.from({ length: 400 }, (_, i) => `q-${i}`);
    const blocker = all[0]!;
    const slow = shardOf(blocker, 2);
    const slowPods = all.filter((u) => shardOf(u, 2) === slow);
    const fastPods = all.filter((u) => shardOf(u, 2) !== slow);
    d.send(update(blocker, { blockMs: 1500 }));
    const from = results.length;
    for (let round = 0; round < 50; round++) for (const u of all) d.send(update(u, { type: round === 0 ? 'create' : 'sync' }));
    const victim = slowPods[1]!;
    d.send(update(victim, { type: 'kill' }));
    d.send(update(victim, { type: 'sync' }));
    assert.ok(d.pendingByShard()[slow]! <= slowPods.length, `at most one pending update per pod (${d.pendingByShard()[slow]})`);
    await sig.until(() => seen(fastPods, from), 'the fast shard while the slow one is blocked');
    await sig.until(() => seen(slowPods, from + 1), 'the slow shard after it unblocks');
    const last = new Map<string, Echo>();
    for (const r of results.slice(from)) last.set(r.uid, r);
    assert.equal(last.get(victim)?.updateType, 'kill', 'the kill was not replaced by the later sync');
    const slowResults = results.slice(from).filter((r) => shardOf(r.uid, 2) === slow).length;
    assert.ok(slowResults < 50 * slowPods.length / 4, `coalesced: ${slowResults} results for ${slowPods.length} pods × 50 updates`);
  } finally {
    await d.close();
  }
});

test('after a thread died, every update to its shard carries statusNotBeforeMs = when it died; other shards none', async () => {
  let now = 1_000;
  const { d, results, restarted, sig, seen } = setup(2, { now: () => now });
  try {
    await bounded(d.whenAllReady(), 'threads ready');
    const uids = Array.from({ length: 40 }, (_, i) => `pod-${i}`);
    for (const uid of uids) d.send(update(uid));
    await sig.until(() => seen(uids), 'the first round');
    assert.ok(results.every((r) => r.statusNotBeforeMs === null), 'no stamps before any thread died');
    const victim = shardOf('pod-0', 2);
    now = 5_000;
    d.send(update('pod-0', { crash: true }));
    await sig.until(() => restarted.length === 1, 'the replacement thread');
    now = 9_000;
    let from = results.length;
    for (const uid of uids) d.send(update(uid));
    await sig.until(() => seen(uids, from), 'the round after the crash');
    for (const r of results.slice(from)) assert.equal(r.statusNotBeforeMs, shardOf(r.uid, 2) === victim ? 5_000 : null, r.uid);
    from = results.length;
    d.send({ ...update('pod-0'), statusNotBeforeMs: 7_000 });
    await sig.until(() => seen(['pod-0'], from), 'the stamped update');
    assert.equal(results.at(-1)?.statusNotBeforeMs, 7_000, 'a later stamp set by the caller is kept');
  } finally {
    await d.close();
  }
});

test('a replacement that dies before Piscina\'s READY (Piscina then stops replacing threads) is recovered by the attach watchdog', async () => {
  // Load 0: the first thread; load 1: its replacement, which throws while loading (dies before
  // READY: Piscina's sticky workerFailsDuringBootstrap); load 2: the watchdog's retry.
  const loads = new Int32Array(new SharedArrayBuffer(4));
  const { d, restarted, sig, seen } = setup(1, { loads, failLoads: [1], attachTimeoutMs: 1_000 });
  try {
    d.send(update('a'));
    await sig.until(() => seen(['a']), 'the first thread serving');
    d.send(update('a', { crash: true }));
    await sig.until(() => restarted.length === 1, 'a replacement after the failed one', 30_000);
    assert.equal(Atomics.load(loads, 0), 3, 'the failed replacement, then the watchdog\'s');
    d.send(update('b'));
    await sig.until(() => seen(['b']), 'the replacement serving');
  } finally {
    await d.close();
  }
});

test('a thread\'s batch of results is handled within the turn budget, in order, one deferred drain after another', async () => {
  let t = 0;
  const order: string[] = [];
  const sig = new Signals();
  // The dispatcher's deferred drains, run by the test one at a time (each is one macrotask).
  const deferred: (() => void)[] = [];
  const d = new PoolDispatcher({
    threads: 1,
    filename: echoWorker,
    workerData: { endpoint: '', cacheBuffer: new SharedArrayBuffer(8), nodeName: 'n', hostIP: '', podLogsDir: '', runtimeName: 'x', verbosity: 0, runtimeRequestTimeoutMs: 1, syncFrequencyMs: 1, metricsBuffer: new SharedArrayBuffer(8) } as never,
    logger: silentLogger,
    // Each reading of the budget clock is one "ms": a budget of 3 allows 3 results per drain.
    budgetNow: () => ++t,
    turnBudgetMs: 3,
    defer: (fn) => {
      deferred.push(fn);
      sig.changed();
    },
    events: {
      onMessage: (m: WorkerToMain) => {
        if (m.kind === 'podResult') order.push(m.uid);
      },
      onShardRestarted: () => {},
    },
  });
  try {
    // Queued before the thread is ready: one batch of 100 updates, echoed in one turn of the
    // thread, so its 100 results come as one 'results' message, handled only by deferred drains.
    const uids = Array.from({ length: 100 }, (_, i) => `batch-${String(i).padStart(3, '0')}`);
    for (const u of uids) d.send(update(u));
    await sig.until(() => deferred.length > 0, 'the first drain deferred');
    assert.equal(order.length, 0, 'nothing handled on arrival');
    const perDrain: number[] = [];
    for (let drains = 0; order.length < 100; drains++) {
      assert.ok(drains < 100 && deferred.length === 1, `exactly one drain pending while results wait (${deferred.length})`);
      const before = order.length;
      deferred.shift()!();
      perDrain.push(order.length - before);
    }
    assert.deepEqual(order, uids, 'results in the order the thread sent them');
    assert.ok(perDrain.every((n) => n >= 1 && n <= 3), `results per drain within the budget of 3: ${perDrain.join(',')}`);
    assert.equal(deferred.length, 0, 'no drain left once the inbox is empty');
  } finally {
    await bounded(d.close(), 'close');
  }
});
