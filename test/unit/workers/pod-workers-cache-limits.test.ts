/**
 * What pod workers do at the pod cache's limits, on the real shared cache and the real
 * PodWorkers (each step awaits the worker's emitted result, its completion signal, bounded):
 *   - a status over the per-entry limit even trimmed is an error entry: the worker does not
 *     sync, but a kill still runs (from the runtime listing: statusUnknown);
 *   - a status over the limit only for its old exited instances is trimmed: the worker syncs on it,
 *     with the newest two instances per container and every live object;
 *   - a pod the full cache could not store is unknown (ERR_CACHE_FULL): the worker does not sync
 *     (on an empty status it would create a second sandbox), and syncs once the PLEG stored all.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { cacheNow } from '../../../src/shared/pod-cache/pod-cache.js';
import { emptyPodStatus, type RuntimePodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { PodWorkers } from '../../../workers/pod-workers.js';
import type { CleanupPodInput, PodSyncer, SyncPodInput, SyncPodOutcome, TerminatePodInput } from '../../../workers/pod-sync.js';
import type { PodResultMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';
import { container, typicalPodStatus } from '../pod-cache/pod-status-fixtures.js';

const BOUND_MS = 10_000;

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), BOUND_MS)));
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function harness(cacheOpts: { capacity: number; bytesPerSlot?: number; maxEntryBytes?: number }) {
  const clock = new FakeClock();
  const cache = createPodCache(cacheOpts);
  const synced: SyncPodInput[] = [];
  const syncer: PodSyncer = {
    async syncPod(input): Promise<SyncPodOutcome> {
      synced.push(input);
      return { isTerminal: false, apiStatus: { phase: 'Running' }, runtimeChanged: false };
    },
    async terminatePod() {
      return { apiStatus: { phase: 'Succeeded' } };
    },
    async cleanupPod() {
      return {};
    },
  };
  let onResult: ((m: PodResultMessage) => void) | undefined;
  const workers = new PodWorkers({ syncer, cache: cache.reader, clock, random: () => 0, logger: silentLogger, emit: (m) => onResult?.(m), threadId: 1 });
  /** Send an update and await the worker's result for it. */
  const sync = (uid: string, updateType: 'create' | 'sync'): Promise<PodResultMessage> => {
    const r = within(new Promise<PodResultMessage>((res) => (onResult = res)), 'a pod worker result');
    const pod: V1Pod = { metadata: { uid, name: uid.toLowerCase(), namespace: 'default' }, spec: { containers: [{ name: 'c0', image: 'i' }, { name: 'c1', image: 'i' }] } };
    workers.update({ kind: 'update', uid, updateType, pod });
    return r;
  };
  return { cache, synced, workers, sync };
}

/** A 2-container pod with `exited` old exited instances of c0 (newest first after the running one). */
function withHistory(uid: string, exited: number): RuntimePodStatus {
  const st = { ...typicalPodStatus(1, 0), uid };
  const sb = st.sandboxes[0]!;
  for (let a = 1; a <= exited; a++) st.containers.push({ ...container(1, 0, 2 * a - 1, sb.id), id: `dead-${a}`.padEnd(64, '0') });
  return st;
}

test('an oversize entry is not synced on; a trimmed one is, with what the kubelet would read', async () => {
  const { cache, synced, workers, sync } = harness({ capacity: 8, bytesPerSlot: 1024, maxEntryBytes: 2048 });
  // Too large even trimmed: ten live containers with distinct names.
  const huge = { ...typicalPodStatus(2, 0), uid: 'B' };
  for (let k = 2; k < 12; k++) huge.containers.push({ ...huge.containers[0]!, name: `c${k}`, id: `live-${k}`.padEnd(64, '0') });
  assert.equal(cache.writer.set('B', huge, null, 100), 'oversize');
  cache.writer.updateTime(100);
  const refused = await sync('B', 'create');
  assert.equal(refused.error?.code, 'ERR_CACHE_ENTRY_TOO_LARGE');
  assert.equal(synced.length, 0, 'no sync on an oversize entry');

  // Large only for its history (the pod restarted many times): trimmed, and synced on.
  const st = withHistory('A', 14);
  assert.equal(cache.writer.set('A', st, null, 101), 'trimmed');
  const ok = await sync('A', 'create');
  assert.equal(ok.error, undefined);
  assert.equal(synced.length, 1);
  const seen = synced[0]!.runtimeStatus;
  assert.deepEqual(seen.containers.map((c) => c.id), [st.containers[0]!.id, st.containers[1]!.id, st.containers[2]!.id], 'running c0, running c1, c0\'s previous instance');
  assert.deepEqual(seen.sandboxes, st.sandboxes);
  workers.close();
});

test('a pod the full cache could not store is not synced until the PLEG stored every pod', async () => {
  const { cache, synced, workers, sync } = harness({ capacity: 8 });
  // The PLEG's relist at 100 listed pod C (it has a sandbox) but had no slot for it.
  cache.writer.updateTime(100, 1);
  const refused = await sync('C', 'create');
  assert.equal(refused.error?.code, 'ERR_CACHE_FULL');
  assert.equal(synced.length, 0, 'an unknown status is not "no sandbox": no sync, no second sandbox');

  // Room again: the next relist stores C's real status; the retry syncs on it.
  const real = { ...typicalPodStatus(3, 0), uid: 'C' };
  cache.writer.set('C', real, null, 200);
  cache.writer.updateTime(200, 0);
  const ok = await sync('C', 'sync');
  assert.equal(ok.error, undefined);
  assert.equal(synced.length, 1);
  assert.deepEqual(synced[0]!.runtimeStatus.sandboxes.map((s) => s.id), real.sandboxes.map((s) => s.id));

  // And with nothing unstored, a pod without an entry is a pod without runtime objects.
  const fresh = await sync('D', 'create');
  assert.equal(fresh.error, undefined);
  assert.deepEqual(synced.at(-1)?.runtimeStatus, emptyPodStatus('D'));
  workers.close();
});

test('a kill of a pod whose entry is an error entry runs, told the status is unknown (it kills from the runtime listing)', async () => {
  const clock = new FakeClock();
  const cache = createPodCache({ capacity: 8, bytesPerSlot: 1024, maxEntryBytes: 2048 });
  const terminated: TerminatePodInput[] = [];
  const cleaned: CleanupPodInput[] = [];
  const syncer: PodSyncer = {
    async syncPod(): Promise<SyncPodOutcome> {
      throw new Error('must not sync on an error entry');
    },
    async terminatePod(input) {
      terminated.push(input);
      return { apiStatus: { phase: 'Failed' } };
    },
    async cleanupPod(input) {
      cleaned.push(input);
      return {};
    },
  };
  const results: PodResultMessage[] = [];
  let waiter: { n: number; resolve: () => void } | undefined;
  const workers = new PodWorkers({
    syncer, cache: cache.reader, clock, random: () => 0, logger: silentLogger, threadId: 1,
    emit: (m) => {
      results.push(m);
      if (waiter && results.length >= waiter.n) waiter.resolve();
    },
  });
  const until = (n: number): Promise<void> => within(new Promise<void>((resolve) => {
    if (results.length >= n) resolve();
    else waiter = { n, resolve };
  }), `${n} results`);
  const huge = { ...typicalPodStatus(2, 0), uid: 'K' };
  for (let k = 2; k < 12; k++) huge.containers.push({ ...huge.containers[0]!, name: `c${k}`, id: `live-${k}`.padEnd(64, '0') });
  assert.equal(cache.writer.set('K', huge, null, 100), 'oversize');
  cache.writer.updateTime(100);
  const pod: V1Pod = { metadata: { uid: 'K', name: 'k', namespace: 'default' }, spec: { containers: [{ name: 'c0', image: 'i' }] } };
  workers.update({ kind: 'update', uid: 'K', updateType: 'create', pod });
  await until(1);
  assert.equal(results[0]?.error?.code, 'ERR_CACHE_ENTRY_TOO_LARGE', 'the sync is refused');
  workers.update({ kind: 'update', uid: 'K', updateType: 'kill', pod, kill: { removed: true, reason: 'removed', gracePeriodSeconds: 0 } });
  await until(2);
  assert.equal(terminated.length, 1, 'terminated despite the error entry');
  // The PLEG's next relist (the pod's objects gone): cleanup runs on a cache newer than the kill.
  cache.writer.updateTime(cacheNow(clock) + 1);
  await until(3);
  assert.equal(terminated[0]?.statusUnknown?.code, 'ERR_CACHE_ENTRY_TOO_LARGE');
  assert.equal(cleaned.length, 1, 'and cleaned up');
  assert.equal(cleaned[0]?.statusUnknown?.code, 'ERR_CACHE_ENTRY_TOO_LARGE');
  assert.equal(results[2]?.forgotten, true);
  workers.close();
});
