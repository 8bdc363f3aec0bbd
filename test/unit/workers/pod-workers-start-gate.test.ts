/**
 * PodWorkers with a start bound (--max-parallel-pod-starts-per-thread): first syncs beyond the
 * bound wait, oldest first; kills, terminations and syncs of started pods never wait for a slot.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { emptyPodStatus, type RuntimePodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { PodWorkers, type PodStatusWaiter } from '../../../workers/pod-workers.js';
import type { PodSyncer, SyncPodInput, SyncPodOutcome, TerminatePodInput, TerminatePodOutcome } from '../../../workers/pod-sync.js';
import type { PodResultMessage, PodUpdateMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';

interface Call {
  op: 'sync' | 'terminate' | 'cleanup';
  uid: string;
  finish: () => void;
}

/** Each sync/terminate waits until the test finishes it; `until` polls a condition at each change (bounded). */
class HeldSyncer implements PodSyncer {
  readonly calls: Call[] = [];
  readonly #waiters = new Set<{ cond: () => boolean; resolve: () => void }>();

  changed(): void {
    for (const w of this.#waiters) if (w.cond()) {
      this.#waiters.delete(w);
      w.resolve();
    }
  }

  async until(cond: () => boolean, what: string): Promise<void> {
    if (cond()) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        this.#waiters.add({ cond, resolve });
        timer = setTimeout(() => reject(new Error(`timed out after 5 s waiting for ${what}`)), 5_000);
      });
    } finally {
      clearTimeout(timer);
    }
  }

  #hold(op: Call['op'], uid: string, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.calls.push({ op, uid, finish: resolve });
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      this.changed();
    });
  }

  async syncPod(input: SyncPodInput): Promise<SyncPodOutcome> {
    await this.#hold('sync', input.pod.metadata!.uid!, input.signal);
    return { isTerminal: false, apiStatus: { phase: 'Running' } };
  }

  async terminatePod(input: TerminatePodInput): Promise<TerminatePodOutcome> {
    await this.#hold('terminate', input.pod.metadata!.uid!, input.signal);
    return { apiStatus: { phase: 'Succeeded' } };
  }

  async cleanupPod(): Promise<{ error?: { code: string; message: string } }> {
    return {};
  }
}

class FreshCache implements PodStatusWaiter {
  async getNewerThan(uid: string, minTimestampMs: number): Promise<{ status: RuntimePodStatus; timestampMs: number }> {
    return { status: emptyPodStatus(uid), timestampMs: minTimestampMs + 1 };
  }
}

function pod(uid: string): V1Pod {
  return { metadata: { uid, name: `p-${uid}`, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'busybox' }], terminationGracePeriodSeconds: 30 } };
}

function upd(uid: string, updateType: PodUpdateMessage['updateType'], kill?: PodUpdateMessage['kill']): PodUpdateMessage {
  return { kind: 'update', uid, updateType, pod: pod(uid), ...(kill ? { kill } : {}) };
}

function setup(maxParallelStarts: number) {
  const syncer = new HeldSyncer();
  const results: PodResultMessage[] = [];
  const workers = new PodWorkers({
    syncer, cache: new FreshCache(), clock: new FakeClock(), random: () => 0, logger: silentLogger, threadId: 1, maxParallelStarts,
    emit: (m) => {
      results.push(m);
      syncer.changed();
    },
  });
  const running = (op: Call['op']): string[] => syncer.calls.filter((c) => c.op === op).map((c) => c.uid);
  const finish = (op: Call['op'], uid: string): void => {
    const c = syncer.calls.find((x) => x.op === op && x.uid === uid);
    assert.ok(c, `${op} ${uid} was called`);
    c.finish();
  };
  return { syncer, workers, results, running, finish };
}

test('first syncs beyond the bound wait and start oldest first as slots free', async () => {
  const { syncer, workers, results, running, finish } = setup(2);
  for (const uid of ['a', 'b', 'c', 'd']) workers.update(upd(uid, 'create'));
  await syncer.until(() => running('sync').length === 2, 'two starts');
  assert.deepEqual(running('sync'), ['a', 'b']);
  assert.equal(workers.stats().queueDepth, 2, 'the waiting starts count as queued');
  finish('sync', 'b');
  await syncer.until(() => running('sync').length === 3, 'the third start');
  assert.deepEqual(running('sync'), ['a', 'b', 'c'], 'c (older) before d');
  finish('sync', 'a');
  await syncer.until(() => running('sync').length === 4, 'the fourth start');
  finish('sync', 'c');
  finish('sync', 'd');
  await syncer.until(() => results.length === 4, 'four results');
  assert.deepEqual(results.map((r) => r.uid), ['b', 'a', 'c', 'd']);
});

test('a started pod resyncs and a kill terminates at once while every start slot is taken', async () => {
  const { syncer, workers, results, running, finish } = setup(1);
  workers.update(upd('a', 'create'));
  await syncer.until(() => running('sync').length === 1, 'a starts');
  finish('sync', 'a');
  await syncer.until(() => results.length === 1, 'a started');
  // b takes the only slot, c waits behind it.
  workers.update(upd('b', 'create'));
  workers.update(upd('c', 'create'));
  await syncer.until(() => running('sync').length === 2, 'b starts');
  // a (already started) syncs again without a slot.
  workers.update(upd('a', 'update'));
  await syncer.until(() => running('sync').length === 3, 'a resyncs');
  assert.deepEqual(running('sync'), ['a', 'b', 'a']);
  // c is killed while it waits for a slot: it never syncs, its termination runs at once.
  workers.update(upd('c', 'kill', { removed: true, reason: 'removed from source' }));
  await syncer.until(() => running('terminate').length === 1, 'c terminates');
  assert.deepEqual(running('terminate'), ['c']);
  assert.ok(!running('sync').includes('c'), 'the killed pod never started');
  finish('terminate', 'c');
  await syncer.until(() => results.some((r) => r.uid === 'c' && r.forgotten === true), 'c forgotten');
  // The slot b holds was never handed to c: a new pod waits for b.
  workers.update(upd('d', 'create'));
  assert.equal(workers.stats().queueDepth, 1);
  finish('sync', 'b');
  await syncer.until(() => running('sync').includes('d'), 'd starts after b');
  workers.close();
});

test('bound 0: every start runs at once', async () => {
  const { syncer, workers, running } = setup(0);
  for (let i = 0; i < 20; i++) workers.update(upd(`p${i}`, 'create'));
  await syncer.until(() => running('sync').length === 20, 'all twenty');
  workers.close();
});
