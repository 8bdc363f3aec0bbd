import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PoolDispatcher } from '../../../src/dispatch/pool-dispatcher.js';
import { shardOf } from '../../../src/dispatch/shard-table.js';
import { silentLogger } from '../../../src/logging/logger.js';
import type { PodUpdateMessage, WorkerToMain } from '../../../workers/pod-worker-protocol.js';

const echoWorker = path.join(path.dirname(fileURLToPath(import.meta.url)), 'echo-worker.js');

function update(uid: string, crash = false): PodUpdateMessage {
  return { kind: 'update', uid, updateType: 'sync', pod: { metadata: { uid, annotations: crash ? { crash: 'true' } : {} } } };
}

function waitFor(pred: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const check = (): void => {
      if (pred()) resolve();
      else if (Date.now() > deadline) reject(new Error(`timed out waiting for ${what}`));
      else setImmediate(check);
    };
    check();
  });
}

test('the same UID always reaches the same thread, before and after a thread crash', async () => {
  const seen = new Map<string, Set<number>>();
  let results = 0;
  const restarted: number[] = [];
  const d = new PoolDispatcher({
    threads: 4,
    filename: echoWorker,
    workerData: { endpoint: '', cacheBuffer: new SharedArrayBuffer(8), nodeName: 'n', hostIP: '', podLogsDir: '', runtimeName: 'x', verbosity: 0, runtimeRequestTimeoutMs: 1, syncFrequencyMs: 1, metricsBuffer: new SharedArrayBuffer(8) },
    logger: silentLogger,
    events: {
      onMessage: (m: WorkerToMain) => {
        if (m.kind !== 'podResult') return;
        results++;
        let s = seen.get(m.uid);
        if (!s) seen.set(m.uid, (s = new Set()));
        s.add(m.threadId);
      },
      onShardRestarted: (shard) => restarted.push(shard),
    },
  });
  try {
    const uids = Array.from({ length: 500 }, (_, i) => `pod-${i}`);
    for (let i = 0; i < 10_000; i++) d.send(update(uids[i % uids.length]!));
    await waitFor(() => results === 10_000, '10,000 results');
    const threadOfUid = new Map<string, number>();
    for (const [uid, threads] of seen) {
      assert.equal(threads.size, 1, `${uid} reached ${threads.size} threads`);
      threadOfUid.set(uid, [...threads][0]!);
    }
    assert.equal(new Set(threadOfUid.values()).size, 4, 'all four threads got pods');
    const before = d.threadIds();

    // Crash the thread that owns pod-0.
    const victimShard = shardOf('pod-0', 4);
    d.send(update('pod-0', true));
    await waitFor(() => restarted.length === 1, 'the replacement thread');
    assert.deepEqual(restarted, [victimShard]);
    const after = d.threadIds();
    assert.notEqual(after[victimShard], before[victimShard], 'the shard has a new thread');
    for (let s = 0; s < 4; s++) if (s !== victimShard) assert.equal(after[s], before[s], 'other shards keep their thread');

    seen.clear();
    results = 0;
    for (let i = 0; i < 10_000; i++) d.send(update(uids[i % uids.length]!));
    await waitFor(() => results === 10_000, '10,000 results after the crash');
    for (const [uid, threads] of seen) {
      assert.equal(threads.size, 1);
      const expected = shardOf(uid, 4) === victimShard ? after[victimShard] : threadOfUid.get(uid);
      assert.equal([...threads][0], expected, `${uid} routed to its shard's thread`);
    }
    const stats = await d.stats();
    assert.equal(stats.length, 4);
  } finally {
    await d.close();
  }
});

test('after a thread died, every update to its shard carries statusNotBeforeMs = when it died; other shards none', async () => {
  const stamps = new Map<string, number | null>();
  const restarted: number[] = [];
  let now = 1_000;
  const d = new PoolDispatcher({
    threads: 2,
    filename: echoWorker,
    workerData: { endpoint: '', cacheBuffer: new SharedArrayBuffer(8), nodeName: 'n', hostIP: '', podLogsDir: '', runtimeName: 'x', verbosity: 0, runtimeRequestTimeoutMs: 1, syncFrequencyMs: 1, metricsBuffer: new SharedArrayBuffer(8) },
    logger: silentLogger,
    now: () => now,
    events: {
      onMessage: (m: WorkerToMain) => {
        if (m.kind === 'podResult') stamps.set(m.uid, (m as WorkerToMain & { statusNotBeforeMs: number | null }).statusNotBeforeMs);
      },
      onShardRestarted: (shard) => restarted.push(shard),
    },
  });
  try {
    const uids = Array.from({ length: 40 }, (_, i) => `pod-${i}`);
    for (const uid of uids) d.send(update(uid));
    await waitFor(() => stamps.size === 40, 'the first round');
    assert.ok([...stamps.values()].every((v) => v === null), 'no stamps before any thread died');
    const victim = shardOf('pod-0', 2);
    now = 5_000;
    d.send(update('pod-0', true));
    await waitFor(() => restarted.length === 1, 'the replacement thread');
    now = 9_000;
    stamps.clear();
    for (const uid of uids) d.send(update(uid));
    await waitFor(() => stamps.size === 40, 'the round after the crash');
    for (const uid of uids) assert.equal(stamps.get(uid), shardOf(uid, 2) === victim ? 5_000 : null, uid);
    // A later stamp set by the caller (the re-dispatch) is kept.
    stamps.clear();
    d.send({ ...update('pod-0'), statusNotBeforeMs: 7_000 });
    await waitFor(() => stamps.size === 1, 'the stamped update');
    assert.equal(stamps.get('pod-0'), 7_000);
  } finally {
    await d.close();
  }
});
