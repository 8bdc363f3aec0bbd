import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { emptyPodStatus, type RuntimePodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { PodWorkers, type PodStatusWaiter } from '../../../workers/pod-workers.js';
import type { PodSyncer, SyncPodInput, SyncPodOutcome, TerminatePodInput, TerminatePodOutcome } from '../../../workers/pod-sync.js';
import type { PodResultMessage, PodUpdateMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Completion signals instead of counting event-loop turns: every syncer call, cache read and
 * emitted result reports a change; `until` resolves once its condition holds (checked at each
 * change), and fails after 5 s of real time. Negative assertions are made where nothing can be
 * pending any more (an empty queue, an un-aborted signal), never after "enough turns".
 */
class Progress {
  readonly #waiters = new Set<{ cond: () => boolean; resolve: () => void }>();
  changed(): void {
    for (const w of this.#waiters) {
      if (w.cond()) {
        this.#waiters.delete(w);
        w.resolve();
      }
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
  constructor(readonly progress: Progress) {}
  calls: Call[] = [];
  #running = 0;
  /** Most units of work seen running at once (one pod: must stay 1). */
  maxConcurrent = 0;
  gates: Deferred<void>[] = [];
  /** When true, each call waits on a gate the test opens. */
  gated = false;
  nextOutcome: Partial<SyncPodOutcome> = {};
  terminateError = false;

  #called(c: Call): void {
    this.calls.push(c);
    this.progress.changed();
  }

  async #gate(signal: AbortSignal): Promise<void> {
    this.maxConcurrent = Math.max(this.maxConcurrent, ++this.#running);
    try {
      if (!this.gated) return;
      const g = deferred<void>();
      this.gates.push(g);
      this.progress.changed();
      await Promise.race([g.promise, new Promise<void>((_, rej) => signal.addEventListener('abort', () => rej(signal.reason), { once: true }))]);
    } finally {
      this.#running--;
    }
  }

  async syncPod(input: SyncPodInput): Promise<SyncPodOutcome> {
    this.#called({ op: 'sync', version: input.pod.metadata!.annotations!['version']!, updateType: input.updateType, signal: input.signal });
    await this.#gate(input.signal);
    return { isTerminal: false, apiStatus: { phase: 'Running' }, ...this.nextOutcome };
  }
  async terminatePod(input: TerminatePodInput): Promise<TerminatePodOutcome> {
    this.#called({ op: 'terminate', grace: input.gracePeriodSeconds, signal: input.signal });
    await this.#gate(input.signal);
    return this.terminateError ? { apiStatus: { phase: 'Running' }, error: { code: 'ERR_CRI_UNAVAILABLE', message: 'down' } } : { apiStatus: { phase: 'Succeeded' } };
  }
  async cleanupPod(): Promise<{ error?: { code: string; message: string } }> {
    this.#called({ op: 'cleanup' });
    return {};
  }
}

/** A cache that is always fresh, recording the minimum timestamps asked for. */
class RecordingCache implements PodStatusWaiter {
  constructor(readonly progress: Progress) {}
  asked: number[] = [];
  async getNewerThan(uid: string, minTimestampMs: number): Promise<{ status: RuntimePodStatus; timestampMs: number }> {
    this.asked.push(minTimestampMs);
    this.progress.changed();
    return { status: emptyPodStatus(uid), timestampMs: minTimestampMs + 1 };
  }
}

function setup(random = 0) {
  const clock = new FakeClock();
  const progress = new Progress();
  const syncer = new ScriptedSyncer(progress);
  const cache = new RecordingCache(progress);
  const results: PodResultMessage[] = [];
  const emit = (m: PodResultMessage | unknown): void => {
    results.push(m as PodResultMessage);
    progress.changed();
  };
  const workers = new PodWorkers({ syncer, cache, clock, random: () => random, logger: silentLogger, emit, threadId: 1 });
  const until = (cond: () => boolean, what: string): Promise<void> => progress.until(cond, what);
  return { clock, syncer, cache, results, workers, until };
}

const versions = (calls: Call[]): Array<string | false> => calls.map((c) => c.op === 'sync' && c.version);

test('one sync at a time per pod, and the newest pending update wins', async () => {
  const { syncer, workers, results, until } = setup();
  syncer.gated = true;
  workers.update(upd(pod('a', 'v1'), 'create'));
  await until(() => syncer.gates.length === 1, 'the first sync to start');
  workers.update(upd(pod('a', 'v2'), 'update'));
  workers.update(upd(pod('a', 'v3'), 'update'));
  assert.equal(workers.stats().podsOwned, 1);
  syncer.gates[0]!.resolve();
  await until(() => syncer.gates.length === 2, 'the second sync to start');
  assert.deepEqual(versions(syncer.calls), ['v1', 'v3'], 'v2 was replaced by v3');
  syncer.gates[1]!.resolve();
  await until(() => results.length === 2, 'both results');
  assert.equal(syncer.maxConcurrent, 1, 'no second sync while the first ran');
  assert.deepEqual(results.map((r) => [r.work, r.state]), [['sync', 'syncing'], ['sync', 'syncing']]);
  assert.equal(workers.stats().queueDepth, 0, 'nothing else pending');
  assert.equal(syncer.calls.length, 2);
});

test('different pods sync concurrently', async () => {
  const { syncer, workers, until } = setup();
  syncer.gated = true;
  workers.update(upd(pod('a', 'v1'), 'create'));
  workers.update(upd(pod('b', 'v1'), 'create'));
  await until(() => syncer.gates.length === 2, 'both syncs running at once');
  assert.equal(syncer.maxConcurrent, 2);
});

test('a kill pre-empts the in-flight sync, then terminates, then cleans up and forgets', async () => {
  const { syncer, workers, results, until } = setup();
  syncer.gated = true;
  const p = pod('a', 'v1', 30);
  workers.update(upd(p, 'create'));
  await until(() => syncer.gates.length === 1, 'the sync to start');
  const syncCall = syncer.calls[0]!;
  assert.equal(syncCall.signal?.aborted, false);
  workers.update(upd(p, 'kill', { removed: true, reason: 'removed from source', gracePeriodSeconds: 5 }));
  assert.equal(syncCall.signal?.aborted, true, 'the in-flight sync was cancelled at once');
  await until(() => syncer.gates.length === 2, 'termination to start');
  assert.deepEqual(syncer.calls.map((c) => c.op), ['sync', 'terminate']);
  assert.equal((syncer.calls[1] as { grace: number }).grace, 5, 'deletion grace shortens the pod grace');
  assert.equal(workers.stateOf('a'), 'terminating');
  syncer.gates[1]!.resolve();
  await until(() => results.length === 2, 'terminate and cleanup results');
  assert.deepEqual(syncer.calls.map((c) => c.op), ['sync', 'terminate', 'cleanup']);
  assert.deepEqual(results.map((r) => [r.work, r.state, r.forgotten ?? false]), [
    ['terminate', 'terminated', false],
    ['cleanup', 'terminated', true],
  ]);
  assert.equal(workers.stateOf('a'), undefined);
  assert.equal(workers.stats().podsOwned, 0);
});

test('a later kill may shorten but never lengthen the grace period; updates while terminating are ignored', async () => {
  const { syncer, workers, results, until } = setup();
  syncer.gated = true;
  const p = pod('a', 'v1', 30);
  workers.update(upd(p, 'kill', { removed: true, reason: 'removed', gracePeriodSeconds: 20 }));
  await until(() => syncer.gates.length === 1, 'termination to start');
  assert.equal((syncer.calls[0] as { grace: number }).grace, 20);
  workers.update(upd(p, 'kill', { removed: true, reason: 'again', gracePeriodSeconds: 25 }));
  workers.update(upd(pod('a', 'v2'), 'update'));
  assert.equal(syncer.calls[0]!.signal?.aborted, false, 'a longer grace does not restart termination');
  workers.update(upd(p, 'kill', { removed: true, reason: 'force', gracePeriodSeconds: 0 }));
  assert.equal(syncer.calls[0]!.signal?.aborted, true, 'a shorter grace pre-empts the running termination');
  await until(() => syncer.gates.length === 2, 'termination to restart');
  assert.deepEqual(syncer.calls.map((c) => (c.op === 'terminate' ? c.grace : c.op)), [20, 0]);
  syncer.gates[1]!.resolve();
  await until(() => results.some((r) => r.forgotten === true), 'the pod to be forgotten');
  assert.deepEqual(syncer.calls.map((c) => c.op), ['terminate', 'terminate', 'cleanup']);
  assert.ok(!syncer.calls.some((c) => c.op === 'sync'), 'no sync after termination began');
});

test('a sync reporting a terminal phase terminates the pod but keeps it until removed', async () => {
  const { syncer, workers, results, until } = setup();
  syncer.nextOutcome = { isTerminal: true, apiStatus: { phase: 'Succeeded' } };
  const p = pod('a', 'v1', 7);
  workers.update(upd(p, 'create'));
  await until(() => results.length === 2, 'sync and terminate results');
  assert.deepEqual(syncer.calls.map((c) => (c.op === 'terminate' ? `terminate:${c.grace}` : c.op)), ['sync', 'terminate:7']);
  assert.equal(workers.stateOf('a'), 'terminated');
  workers.update(upd(p, 'sync'));
  assert.equal(workers.stats().queueDepth, 0, 'a terminated pod is not synced again: nothing was queued');
  workers.update(upd(p, 'kill', { removed: true, reason: 'removed' }));
  await until(() => results.length === 3, 'the cleanup result');
  assert.deepEqual(syncer.calls.map((c) => c.op), ['sync', 'terminate', 'cleanup']);
  assert.deepEqual(results.map((r) => r.work), ['sync', 'terminate', 'cleanup']);
});

test('a failed termination is retried on the next resync, not in a tight loop', async () => {
  const { syncer, workers, results, until } = setup();
  syncer.terminateError = true;
  const p = pod('a', 'v1');
  workers.update(upd(p, 'kill', { removed: true, reason: 'removed' }));
  await until(() => results.length === 1, 'the failed termination');
  assert.equal(workers.stats().queueDepth, 0, 'no retry queued by the worker itself');
  assert.equal(syncer.calls.length, 1);
  assert.equal(results[0]!.state, 'terminating');
  assert.equal(results[0]!.error?.code, 'ERR_CRI_UNAVAILABLE');
  assert.ok(results[0]!.requeueAfterMs! >= 10_000 && results[0]!.requeueAfterMs! < 15_000);
  syncer.terminateError = false;
  workers.update(upd(p, 'sync'));
  await until(() => results.some((r) => r.forgotten === true), 'the pod to be forgotten');
  assert.deepEqual(syncer.calls.map((c) => c.op), ['terminate', 'terminate', 'cleanup']);
});

test('requeue delays follow the kubelet: 60–90 s after success, 10–15 s after error, sooner on request', async () => {
  for (const [random, okMs, errMs] of [[0, 60_000, 10_000], [0.5, 75_000, 12_500]] as const) {
    const { syncer, workers, results, until } = setup(random);
    workers.update(upd(pod('a', 'v1'), 'create'));
    await until(() => results.length === 1, 'the first result');
    assert.equal(results[0]!.requeueAfterMs, okMs);
    syncer.nextOutcome = { error: { code: 'ERR_IMAGE_PULL', message: 'x' } };
    workers.update(upd(pod('a', 'v2'), 'sync'));
    await until(() => results.length === 2, 'the second result');
    assert.equal(results[1]!.requeueAfterMs, errMs);
    syncer.nextOutcome = { requeueAfterMs: 2_000 };
    workers.update(upd(pod('a', 'v3'), 'sync'));
    await until(() => results.length === 3, 'the third result');
    assert.equal(results[2]!.requeueAfterMs, 2_000);
  }
});

test('each unit of work waits for cache status newer than the end of the previous one', async () => {
  const { clock, workers, cache, results, until } = setup();
  workers.update(upd(pod('a', 'v1'), 'create'));
  await until(() => results.length === 1, 'the first sync');
  clock.step(1234);
  workers.update(upd(pod('a', 'v2'), 'update'));
  await until(() => cache.asked.length === 2, 'the second cache read');
  assert.equal(cache.asked[0], 0, 'the first sync waits for any relist');
  assert.equal(cache.asked[1], clock.now() - 1234, 'the second waits for status newer than the first sync end');
});

test('a pod re-dispatched after a thread restart waits for status newer than the restart', async () => {
  const { clock, workers, cache, until } = setup();
  clock.step(50_000);
  workers.update({ ...upd(pod('a', 'v1'), 'create'), statusNotBeforeMs: clock.now() });
  await until(() => cache.asked.length === 1, 'the cache read');
  assert.deepEqual(cache.asked, [clock.now()], 'not any cached status: one taken after the restart');
});

test('a re-dispatched kill of a pod that was terminating on the dead thread terminates it here', async () => {
  const { clock, syncer, workers, cache, until } = setup();
  workers.update({ ...upd(pod('a', 'v1'), 'kill', { removed: false, reason: 'deleted' }), statusNotBeforeMs: clock.now() });
  await until(() => syncer.calls.length === 1, 'termination');
  assert.deepEqual(syncer.calls.map((c) => c.op), ['terminate']);
  assert.deepEqual(cache.asked, [clock.now()]);
});

test('a kill for an unknown pod that is not a removal is ignored', () => {
  const { syncer, workers } = setup();
  workers.update(upd(pod('a', 'v1'), 'kill', { removed: false, reason: 'x' }));
  // Ignored at once: no pod record, so no work can follow.
  assert.equal(workers.stats().podsOwned, 0);
  assert.equal(syncer.calls.length, 0);
});

test('a sync that changed nothing skips the status re-read and lets the next unit run on the same entry', async () => {
  const clock = new FakeClock();
  const progress = new Progress();
  const syncer = new ScriptedSyncer(progress);
  const cache = new RecordingCache(progress);
  const refreshed: string[] = [];
  const results: unknown[] = [];
  const workers = new PodWorkers({
    syncer,
    cache,
    clock,
    random: () => 0,
    logger: silentLogger,
    emit: (m) => {
      results.push(m);
      progress.changed();
    },
    threadId: 1,
    refreshStatus: async (p) => {
      refreshed.push(p.metadata!.uid!);
      return { status: emptyPodStatus(p.metadata!.uid!), entryTs: undefined };
    },
  });
  workers.update(upd(pod('a', 'v1'), 'create'));
  await progress.until(() => results.length === 1, 'the first sync');
  assert.deepEqual(refreshed, ['a'], 'a sync that may have changed the runtime re-reads it');
  syncer.nextOutcome = { runtimeChanged: false };
  clock.step(5_000);
  workers.update(upd(pod('a', 'v2'), 'sync'));
  await progress.until(() => results.length === 2, 'the second sync');
  assert.deepEqual(refreshed, ['a'], 'no re-read after a no-op sync');
  workers.update(upd(pod('a', 'v3'), 'sync'));
  await progress.until(() => cache.asked.length === 3, 'the third cache read');
  // RecordingCache answers with timestampMs = min + 1; the unit after a no-op asks for anything
  // newer than (that entry - 1), i.e. the same entry is good enough.
  const [, second, third] = cache.asked;
  assert.equal(third, second! + 1 - 1);
});

test('a sync result carries the API status only when it changed since the last result for the pod', async () => {
  const { syncer, results, workers, until, clock } = setup();
  const p = pod('a', 'v1');
  workers.update(upd(p, 'create'));
  await until(() => results.length === 1, 'the first sync');
  assert.deepEqual(results[0]!.apiStatus, { phase: 'Running' }, 'the first result always carries it');
  clock.step(1_000);
  workers.update(upd(p, 'sync'));
  await until(() => results.length === 2, 'the second sync');
  assert.equal(results[1]!.apiStatus, undefined, 'an equal status (a new object) is not sent again');
  assert.equal(results[1]!.work, 'sync');
  assert.ok(results[1]!.requeueAfterMs !== undefined, 'the rest of the result still travels');
  syncer.nextOutcome = { apiStatus: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } };
  workers.update(upd(p, 'sync'));
  await until(() => results.length === 3, 'the third sync');
  assert.deepEqual(results[2]!.apiStatus?.conditions, [{ type: 'Ready', status: 'False' }], 'a changed status is sent');
  syncer.nextOutcome = {};
  workers.update(upd(p, 'sync'));
  await until(() => results.length === 4, 'the fourth sync');
  assert.deepEqual(results[3]!.apiStatus, { phase: 'Running' }, 'back to an earlier status: it differs from the last one sent');
  workers.update(upd(p, 'kill', { removed: false, reason: 'test' }));
  await until(() => results.some((r) => r.work === 'terminate'), 'the termination');
  assert.deepEqual(results.find((r) => r.work === 'terminate')!.apiStatus, { phase: 'Succeeded' }, 'terminations always report their status');
});

/**
 * A cache with one entry per pod at a timestamp the test controls: `publish` is a writer (the
 * worker's refresher or "the PLEG") replacing it; a read asking for newer than the entry gets a
 * newer one (a relist moved time on).
 */
class EntryCache implements PodStatusWaiter {
  constructor(readonly progress: Progress) {}
  ts = 1;
  reads = 0;
  publish(ts: number): void {
    this.ts = ts;
  }
  async getNewerThan(uid: string, minTimestampMs: number): Promise<{ status: RuntimePodStatus; timestampMs: number }> {
    this.reads++;
    if (this.ts <= minTimestampMs) this.ts = minTimestampMs + 1;
    this.progress.changed();
    return { status: emptyPodStatus(uid), timestampMs: this.ts };
  }
}

function skipRig() {
  const clock = new FakeClock();
  const progress = new Progress();
  const syncer = new ScriptedSyncer(progress);
  const cache = new EntryCache(progress);
  const results: PodResultMessage[] = [];
  let skipped = 0;
  /** Whether the next refresh's write is the pod's entry (false: a newer entry won). */
  let stored = true;
  const workers = new PodWorkers({
    syncer, cache, clock, random: () => 0, logger: silentLogger, threadId: 1,
    emit: (m) => {
      results.push(m);
      progress.changed();
    },
    onSkippedSync: () => {
      skipped++;
      progress.changed();
    },
    refreshStatus: async (p, afterMs, _signal, derived) => {
      const status = derived ?? emptyPodStatus(p.metadata!.uid!);
      if (!stored) return { status, entryTs: undefined };
      cache.publish(afterMs + 1);
      return { status, entryTs: afterMs + 1 };
    },
  });
  const plegSync = (p: V1Pod): PodUpdateMessage => ({ ...upd(p, 'sync'), plegOnly: true });
  /** Sends `msg` and resolves with what became of it: one more sync call, or one more skip. */
  const outcome = async (msg: PodUpdateMessage): Promise<'synced' | 'skipped'> => {
    const calls = syncer.calls.length;
    const skips = skipped;
    const sent = results.length;
    workers.update(msg);
    await progress.until(() => skipped > skips || (syncer.calls.length > calls && results.length > sent), 'the sync to run or be skipped');
    assert.ok(!(skipped > skips && syncer.calls.length > calls), 'both skipped and synced');
    return skipped > skips ? 'skipped' : 'synced';
  };
  return { clock, syncer, cache, results, workers, plegSync, outcome, setStored: (v: boolean) => (stored = v), skipped: () => skipped };
}

const derived = (uid: string): Partial<SyncPodOutcome> => ({ runtimeAfter: { ...emptyPodStatus(uid), ips: ['10.0.0.1'] } });

test('a PLEG-only sync on the entry the last clean sync published from its own answers is skipped, without a result', async () => {
  const r = skipRig();
  const p = pod('a', 'v1');
  r.syncer.nextOutcome = derived('a');
  assert.equal(await r.outcome(upd(p, 'create')), 'synced');
  const results = r.results.length;
  assert.equal(await r.outcome(r.plegSync(p)), 'skipped', 'the PLEG echo of what the sync created');
  assert.equal(await r.outcome(r.plegSync(pod('a', 'v1'))), 'skipped', 'an equal pod (a new object) is the same pod');
  assert.equal(r.results.length, results, 'a skipped sync sends nothing to the main thread');
  assert.equal(await r.outcome(upd(p, 'sync')), 'synced', 'any other reason to sync runs it (a resync, a probe, API objects)');
});

test('a PLEG-only sync runs when any of its inputs changed since the last clean sync', async () => {
  const r = skipRig();
  r.syncer.nextOutcome = derived('a');
  await r.outcome(upd(pod('a', 'v1'), 'create'));
  // A changed pod: runs (this sync changes nothing in the runtime: it settles on its own entry).
  r.syncer.nextOutcome = { runtimeChanged: false };
  assert.equal(await r.outcome(r.plegSync(pod('a', 'v2'))), 'synced', 'a changed pod');
  assert.equal(await r.outcome(r.plegSync(pod('a', 'v2'))), 'skipped', 'after a no-op sync, on the entry it ran on');
  // Someone else (the PLEG) wrote a newer entry: runs.
  r.cache.publish(r.cache.ts + 10);
  assert.equal(await r.outcome(r.plegSync(pod('a', 'v2'))), 'synced', 'a newer entry');
  assert.equal(await r.outcome({ ...r.plegSync(pod('a', 'v2')), networkNotReady: 'cni down' }), 'synced', 'network readiness changed');
});

test('a PLEG-only sync runs after a sync that failed, reported a fetched status, or lost its write', async () => {
  const r = skipRig();
  // Failed: the next sync retries at once on the PLEG's event, as in the kubelet.
  r.syncer.nextOutcome = { ...derived('a'), error: { code: 'CreateContainerError', message: 'x' } };
  await r.outcome(upd(pod('a', 'v1'), 'create'));
  r.syncer.nextOutcome = {};
  assert.equal(await r.outcome(r.plegSync(pod('a', 'v1'))), 'synced', 'after a failed sync');
  // Fetched (not derived): the runtime may show changes the sync did not make and never acted on.
  assert.equal(await r.outcome(r.plegSync(pod('a', 'v1'))), 'synced', 'after a sync whose status was re-read');
  // Derived, but a newer entry won the write: that entry is not the sync's own.
  r.syncer.nextOutcome = derived('a');
  r.setStored(false);
  assert.equal(await r.outcome(r.plegSync(pod('a', 'v1'))), 'synced');
  assert.equal(await r.outcome(r.plegSync(pod('a', 'v1'))), 'synced', 'after a derived status that was not stored');
});

test('a PLEG-only sync merged with a pending update of any other kind is a full sync', async () => {
  const r = skipRig();
  const p = pod('a', 'v1');
  r.syncer.nextOutcome = derived('a');
  await r.outcome(upd(p, 'create'));
  const round = async (pending: PodUpdateMessage[]): Promise<void> => {
    r.syncer.gated = true;
    const calls = r.syncer.calls.length;
    r.workers.update(upd(p, 'sync')); // runs now, held at the gate
    await r.syncer.progress.until(() => r.syncer.gates.length === 1, 'the sync held at the gate');
    for (const m of pending) r.workers.update(m);
    r.syncer.gated = false;
    r.syncer.gates.shift()!.resolve();
    await r.syncer.progress.until(() => r.syncer.calls.length === calls + 2 || r.skipped() > 0, 'the pending update to run or be skipped');
  };
  await round([upd(p, 'sync'), r.plegSync(p)]);
  assert.equal(r.skipped(), 0, 'a probe- or config-driven sync followed by the PLEG\'s: it runs');
  await round([r.plegSync(p)]);
  assert.equal(r.skipped(), 1, 'the PLEG\'s alone after a clean sync: skipped');
});
