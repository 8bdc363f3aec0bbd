/**
 * Pod workers never sync on a status stored with an error (the kubelet's managePodLoop returns
 * "error determining status" and retries later): the placeholder values of a failed inspection
 * (no sandbox IP, exit code 0) must not drive a sync. Wired on the real shared cache; each step
 * awaits the worker's emitted result (its completion signal), bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { emptyPodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { PodWorkers } from '../../../workers/pod-workers.js';
import type { PodSyncer, SyncPodInput, SyncPodOutcome } from '../../../workers/pod-sync.js';
import type { PodResultMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';

const BOUND_MS = 10_000;

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), BOUND_MS)));
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

test('a cache entry with an error is not synced on; the next good entry is', async () => {
  const clock = new FakeClock();
  const cache = createPodCache({ capacity: 8 });
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
  const next = (): Promise<PodResultMessage> => within(new Promise<PodResultMessage>((r) => (onResult = r)), 'a pod worker result');
  const pod: V1Pod = { metadata: { uid: 'A', name: 'a', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'i' }] } };

  // The PLEG's inspection failed: the entry holds list placeholders and the error.
  cache.writer.set('A', emptyPodStatus('A', 'a', 'default'), { code: 'ERR_CRI_UNAVAILABLE', message: 'runtime restarting' }, 100);
  cache.writer.updateTime(100);
  let r = next();
  workers.update({ kind: 'update', uid: 'A', updateType: 'create', pod });
  const failed = await r;
  assert.equal(synced.length, 0, 'no sync on a status error');
  assert.equal(failed.error?.code, 'ERR_CRI_UNAVAILABLE');
  assert.ok(failed.requeueAfterMs !== undefined && failed.requeueAfterMs >= 10_000, 'retried after the error backoff');

  // The next relist stores a good status: the retry syncs on it.
  cache.writer.set('A', emptyPodStatus('A', 'a', 'default'), null, 200);
  r = next();
  workers.update({ kind: 'update', uid: 'A', updateType: 'sync', pod });
  const ok = await r;
  assert.equal(ok.error, undefined);
  assert.equal(synced.length, 1);
  workers.close();
});
