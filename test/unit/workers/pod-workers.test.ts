import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/clock/fake-clock.js';
import { silentLogger } from '../../../src/logging/logger.js';
import { emptyPodStatus, type RuntimePodStatus } from '../../../src/pod-cache/runtime-pod-status.js';
import { PodWorkers, type PodStatusWaiter } from '../../../workers/pod-workers.js';
import type { PodSyncer, SyncPodInput, SyncPodOutcome, TerminatePodInput, TerminatePodOutcome } from '../../../workers/pod-sync.js';
import type { PodResultMessage, PodUpdateMessage } from '../../../workers/pod-worker-protocol.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Lets all pending promise continuations run (no timers involved). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
}

function pod(uid: string, version: string, grace = 30): V1Pod {
  return {
    metadata: { uid, name: `p-${uid}`, namespace: 'default', annotations: { version } },
    spec: { containers: [{ name: 'c', image: 'busybox' }], terminationGracePeriodSeconds: grace },
  };
}

function upd(p: V1Pod, updateType: PodUpdateMessage['updateType'], kill?: PodUpdateMessage['kill']): PodUpdateMessage {
  return { kind: 'update', uid: p.metadata!.uid!, updateType, pod: p, ...(kill ? { kill } : {}) };
}

type Call = { op: 'sync'; version: string; updateType: string; signal: AbortSignal } | { op: 'terminate'; grace: number; signal: AbortSignal } | { op: 'cleanup'; signal?: undefined };

class ScriptedSyncer implements PodSyncer {
  calls: Call[] = [];
  gates: Deferred<void>[] = [];
  /** When true, each call waits on a gate the test opens. */
  gated = false;
  nextOutcome: Partial<SyncPodOutcome> = {};
  terminateError = false;

  async #gate(signal: AbortSignal): Promise<void> {
    if (!this.gated) return;
    const g = deferred<void>();
    this.gates.push(g);
    await Promise.race([g.promise, new Promise<void>((_, rej) => signal.addEventListener('abort', () => rej(signal.reason), { once: true }))]);
  }

  async syncPod(input: SyncPodInput): Promise<SyncPodOutcome> {
    this.calls.push({ op: 'sync', version: input.pod.metadata!.annotations!['version']!, updateType: input.updateType, signal: input.signal });
    await this.#gate(input.signal);
    return { isTerminal: false, apiStatus: { phase: 'Running' }, ...this.nextOutcome };
  }
  async terminatePod(input: TerminatePodInput): Promise<TerminatePodOutcome> {
    this.calls.push({ op: 'terminate', grace: input.gracePeriodSeconds, signal: input.signal });
    await this.#gate(input.signal);
    return this.terminateError ? { apiStatus: { phase: 'Running' }, error: { code: 'ERR_CRI_UNAVAILABLE', message: 'down' } } : { apiStatus: { phase: 'Succeeded' } };
  }
  async cleanupPod(): Promise<{ error?: { code: string; message: string } }> {
    this.calls.push({ op: 'cleanup' });
    return {};
  }
}

/** A cache that is always fresh, recording the minimum timestamps asked for. */
class RecordingCache implements PodStatusWaiter {
  asked: number[] = [];
  async getNewerThan(uid: string, minTimestampMs: number): Promise<{ status: RuntimePodStatus; timestampMs: number }> {
    this.asked.push(minTimestampMs);
    return { status: emptyPodStatus(uid), timestampMs: minTimestampMs + 1 };
  }
}

function setup(random = 0) {
  const clock = new FakeClock();
  const syncer = new ScriptedSyncer();
  const cache = new RecordingCache();
  const results: PodResultMessage[] = [];
  const workers = new PodWorkers({ syncer, cache, clock, random: () => random, logger: silentLogger, emit: (m) => results.push(m), threadId: 1 });
  return { clock, syncer, cache, results, workers };
}

test('one sync at a time per pod, and the newest pending update wins', async () => {
  const { syncer, workers, results } = setup();
  syncer.gated = true;
  workers.update(upd(pod('a', 'v1'), 'create'));
  await settle();
  workers.update(upd(pod('a', 'v2'), 'update'));
  workers.update(upd(pod('a', 'v3'), 'update'));
  await settle();
  assert.deepEqual(syncer.calls.map((c) => c.op === 'sync' && c.version), ['v1'], 'no second sync while the first runs');
  syncer.gates[0]!.resolve();
  await settle();
  assert.deepEqual(syncer.calls.map((c) => c.op === 'sync' && c.version), ['v1', 'v3'], 'v2 was replaced by v3');
  syncer.gates[1]!.resolve();
  await settle();
  assert.deepEqual(results.map((r) => [r.work, r.state]), [['sync', 'syncing'], ['sync', 'syncing']]);
  assert.equal(workers.stats().podsOwned, 1);
});

test('different pods sync concurrently', async () => {
  const { syncer, workers } = setup();
  syncer.gated = true;
  workers.update(upd(pod('a', 'v1'), 'create'));
  workers.update(upd(pod('b', 'v1'), 'create'));
  await settle();
  assert.equal(syncer.calls.length, 2);
});

test('a kill pre-empts the in-flight sync, then terminates, then cleans up and forgets', async () => {
  const { syncer, workers, results } = setup();
  syncer.gated = true;
  const p = pod('a', 'v1', 30);
  workers.update(upd(p, 'create'));
  await settle();
  const syncCall = syncer.calls[0]!;
  assert.equal(syncCall.signal?.aborted, false);
  workers.update(upd(p, 'kill', { removed: true, reason: 'removed from source', gracePeriodSeconds: 5 }));
  await settle();
  assert.equal(syncCall.signal?.aborted, true, 'the in-flight sync was cancelled');
  assert.deepEqual(syncer.calls.map((c) => c.op), ['sync', 'terminate']);
  assert.equal((syncer.calls[1] as { grace: number }).grace, 5, 'deletion grace shortens the pod grace');
  assert.equal(workers.stateOf('a'), 'terminating');
  syncer.gates[1]!.resolve();
  await settle();
  assert.deepEqual(syncer.calls.map((c) => c.op), ['sync', 'terminate', 'cleanup']);
  assert.deepEqual(results.map((r) => [r.work, r.state, r.forgotten ?? false]), [
    ['terminate', 'terminated', false],
    ['cleanup', 'terminated', true],
  ]);
  assert.equal(workers.stateOf('a'), undefined);
  assert.equal(workers.stats().podsOwned, 0);
});

test('a later kill may shorten but never lengthen the grace period; updates while terminating are ignored', async () => {
  const { syncer, workers } = setup();
  syncer.gated = true;
  const p = pod('a', 'v1', 30);
  workers.update(upd(p, 'kill', { removed: true, reason: 'removed', gracePeriodSeconds: 20 }));
  await settle();
  assert.equal((syncer.calls[0] as { grace: number }).grace, 20);
  workers.update(upd(p, 'kill', { removed: true, reason: 'again', gracePeriodSeconds: 25 }));
  workers.update(upd(pod('a', 'v2'), 'update'));
  await settle();
  assert.equal(syncer.calls.length, 1, 'a longer grace does not restart termination');
  workers.update(upd(p, 'kill', { removed: true, reason: 'force', gracePeriodSeconds: 0 }));
  await settle();
  assert.equal(syncer.calls[0]!.signal?.aborted, true, 'a shorter grace pre-empts the running termination');
  assert.deepEqual(syncer.calls.map((c) => (c.op === 'terminate' ? c.grace : c.op)), [20, 0]);
  syncer.gates[1]!.resolve();
  await settle();
  assert.deepEqual(syncer.calls.map((c) => c.op), ['terminate', 'terminate', 'cleanup']);
  assert.ok(!syncer.calls.some((c) => c.op === 'sync'), 'no sync after termination began');
});

test('a sync reporting a terminal phase terminates the pod but keeps it until removed', async () => {
  const { syncer, workers, results } = setup();
  syncer.nextOutcome = { isTerminal: true, apiStatus: { phase: 'Succeeded' } };
  const p = pod('a', 'v1', 7);
  workers.update(upd(p, 'create'));
  await settle();
  assert.deepEqual(syncer.calls.map((c) => (c.op === 'terminate' ? `terminate:${c.grace}` : c.op)), ['sync', 'terminate:7']);
  assert.equal(workers.stateOf('a'), 'terminated');
  workers.update(upd(p, 'sync'));
  await settle();
  assert.equal(syncer.calls.length, 2, 'a terminated pod is not synced again');
  workers.update(upd(p, 'kill', { removed: true, reason: 'removed' }));
  await settle();
  assert.deepEqual(syncer.calls.map((c) => c.op), ['sync', 'terminate', 'cleanup']);
  assert.deepEqual(results.map((r) => r.work), ['sync', 'terminate', 'cleanup']);
});

test('a failed termination is retried on the next resync, not in a tight loop', async () => {
  const { syncer, workers, results } = setup();
  syncer.terminateError = true;
  const p = pod('a', 'v1');
  workers.update(upd(p, 'kill', { removed: true, reason: 'removed' }));
  await settle();
  assert.equal(syncer.calls.length, 1);
  assert.equal(results[0]!.state, 'terminating');
  assert.equal(results[0]!.error?.code, 'ERR_CRI_UNAVAILABLE');
  assert.ok(results[0]!.requeueAfterMs! >= 10_000 && results[0]!.requeueAfterMs! < 15_000);
  syncer.terminateError = false;
  workers.update(upd(p, 'sync'));
  await settle();
  assert.deepEqual(syncer.calls.map((c) => c.op), ['terminate', 'terminate', 'cleanup']);
});

test('requeue delays follow the kubelet: 60–90 s after success, 10–15 s after error, sooner on request', async () => {
  for (const [random, okMs, errMs] of [[0, 60_000, 10_000], [0.5, 75_000, 12_500]] as const) {
    const { syncer, workers, results } = setup(random);
    workers.update(upd(pod('a', 'v1'), 'create'));
    await settle();
    assert.equal(results[0]!.requeueAfterMs, okMs);
    syncer.nextOutcome = { error: { code: 'ERR_IMAGE_PULL', message: 'x' } };
    workers.update(upd(pod('a', 'v2'), 'sync'));
    await settle();
    assert.equal(results[1]!.requeueAfterMs, errMs);
    syncer.nextOutcome = { requeueAfterMs: 2_000 };
    workers.update(upd(pod('a', 'v3'), 'sync'));
    await settle();
    assert.equal(results[2]!.requeueAfterMs, 2_000);
  }
});

test('each unit of work waits for cache status newer than the end of the previous one', async () => {
  const { clock, workers, cache } = setup();
  workers.update(upd(pod('a', 'v1'), 'create'));
  await settle();
  clock.step(1234);
  workers.update(upd(pod('a', 'v2'), 'update'));
  await settle();
  assert.equal(cache.asked[0], 0, 'the first sync waits for any relist');
  assert.equal(cache.asked[1], clock.now() - 1234, 'the second waits for status newer than the first sync end');
});

test('a pod re-dispatched after a thread restart waits for status newer than the restart', async () => {
  const { clock, workers, cache } = setup();
  clock.step(50_000);
  workers.update({ ...upd(pod('a', 'v1'), 'create'), statusNotBeforeMs: clock.now() });
  await settle();
  assert.deepEqual(cache.asked, [clock.now()], 'not any cached status: one taken after the restart');
});

test('a re-dispatched kill of a pod that was terminating on the dead thread terminates it here', async () => {
  const { clock, syncer, workers, cache } = setup();
  workers.update({ ...upd(pod('a', 'v1'), 'kill', { removed: false, reason: 'deleted' }), statusNotBeforeMs: clock.now() });
  await settle();
  assert.deepEqual(syncer.calls.map((c) => c.op), ['terminate']);
  assert.deepEqual(cache.asked, [clock.now()]);
});

test('a kill for an unknown pod that is not a removal is ignored', async () => {
  const { syncer, workers } = setup();
  workers.update(upd(pod('a', 'v1'), 'kill', { removed: false, reason: 'x' }));
  await settle();
  assert.equal(syncer.calls.length, 0);
  assert.equal(workers.stats().podsOwned, 0);
});

test('a sync that changed nothing skips the status re-read and lets the next unit run on the same entry', async () => {
  const clock = new FakeClock();
  const syncer = new ScriptedSyncer();
  const cache = new RecordingCache();
  const refreshed: string[] = [];
  const workers = new PodWorkers({
    syncer,
    cache,
    clock,
    random: () => 0,
    logger: silentLogger,
    emit: () => {},
    threadId: 1,
    refreshStatus: async (p) => {
      refreshed.push(p.metadata!.uid!);
      return emptyPodStatus(p.metadata!.uid!);
    },
  });
  workers.update(upd(pod('a', 'v1'), 'create'));
  await settle();
  assert.deepEqual(refreshed, ['a'], 'a sync that may have changed the runtime re-reads it');
  syncer.nextOutcome = { runtimeChanged: false };
  clock.step(5_000);
  workers.update(upd(pod('a', 'v2'), 'sync'));
  await settle();
  assert.deepEqual(refreshed, ['a'], 'no re-read after a no-op sync');
  workers.update(upd(pod('a', 'v3'), 'sync'));
  await settle();
  // RecordingCache answers with timestampMs = min + 1; the unit after a no-op asks for anything
  // newer than (that entry - 1), i.e. the same entry is good enough.
  const [, second, third] = cache.asked;
  assert.equal(third, second! + 1 - 1);
});
