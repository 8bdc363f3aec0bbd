/**
 * The path a node-shutdown kill takes (KillOptions.terminalStatus): the main side's mirrors
 * keep the first terminal status across later kills and wake whenStopped() waiters when the
 * worker reports the pod terminated or forgotten; the dispatcher's coalescing keeps it; the pod
 * worker hands it to the syncer's terminatePod, where a later kill neither drops nor replaces it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { emptyPodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import type { PodUpdateMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';
import { coalesceUpdates } from '../../../src/main/dispatch/update-coalescer.js';
import { PodWorkerMirrors } from '../../../src/main/syncloop/pod-worker-mirrors.js';
import { PodWorkers } from '../../../workers/pod-workers.js';
import type { PodSyncer, TerminatePodInput } from '../../../workers/pod-sync.js';

const SHUTDOWN = { reason: 'Terminated', message: 'Pod was terminated in response to imminent node shutdown.' };
const p: V1Pod = { metadata: { uid: 'u1', name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c' }], terminationGracePeriodSeconds: 30 } };
const kill = (k: PodUpdateMessage['kill']): PodUpdateMessage => ({ kind: 'update', uid: 'u1', updateType: 'kill', pod: p, ...(k ? { kill: k } : {}) });

test('coalescing two kills keeps the older terminal status, or the newer when the older had none', () => {
  const a = coalesceUpdates(kill({ removed: false, reason: 'node shutdown', gracePeriodSeconds: 20, terminalStatus: SHUTDOWN }), kill({ removed: true, reason: 'removed', terminalStatus: { reason: 'X', message: 'y' } }));
  assert.deepEqual(a.kill, { removed: true, reason: 'removed', gracePeriodSeconds: 20, terminalStatus: SHUTDOWN });
  const b = coalesceUpdates(kill({ removed: true, reason: 'removed' }), kill({ removed: false, reason: 'node shutdown', terminalStatus: SHUTDOWN }));
  assert.deepEqual(b.kill?.terminalStatus, SHUTDOWN);
});

test('mirrors: the first terminal status stays on later kills; whenStopped wakes on terminated and on forget', async () => {
  const sent: PodUpdateMessage[] = [];
  const m = new PodWorkerMirrors({ logger: silentLogger, dispatcher: { threads: 0, send: (x) => void sent.push(x), stats: async () => [], close: async () => {} }, podManager: { get: () => undefined, has: () => false, pods: () => ([] as V1Pod[]).values() } });
  await m.whenStopped('nobody'); // no worker: at once
  m.startAdmitted(p);
  m.kill(p, { removed: false, reason: 'node shutdown', gracePeriodSeconds: 20, terminalStatus: SHUTDOWN });
  m.kill(p, { removed: true, reason: 'removed from source' });
  assert.deepEqual(sent.at(-1)?.kill, { removed: true, reason: 'removed from source', terminalStatus: SHUTDOWN });
  let woke = 0;
  const w1 = m.whenStopped('u1').then(() => woke++);
  const w2 = m.whenStopped('u1').then(() => woke++);
  m.noteStopped('other');
  await Promise.resolve();
  assert.equal(woke, 0);
  m.noteStopped('u1');
  await Promise.all([w1, w2]);
  assert.equal(woke, 2);
  const w3 = m.whenStopped('u1');
  m.forget('u1');
  await w3;
});

test('pod worker: terminatePod gets the terminal status of the kill; a later kill without one keeps it', async () => {
  const terminations: TerminatePodInput[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let terminated!: () => void;
  const done = new Promise<void>((r) => (terminated = r));
  const syncer: PodSyncer = {
    syncPod: async () => ({ isTerminal: false, apiStatus: { phase: 'Running' } }),
    terminatePod: async (input) => {
      terminations.push(input);
      if (terminations.length === 1) await gate;
      if (input.gracePeriodSeconds === 5) terminated();
      return { apiStatus: { phase: 'Failed', reason: input.terminalStatus?.reason ?? '' } };
    },
    cleanupPod: async () => ({}),
  };
  const workers = new PodWorkers({
    syncer, cache: { getNewerThan: async (uid: string, ts: number) => ({ status: emptyPodStatus(uid), timestampMs: ts + 1 }) },
    clock: new FakeClock(), random: () => 0, logger: silentLogger, emit: () => {}, threadId: 1,
  });
  workers.update({ kind: 'update', uid: 'u1', updateType: 'create', pod: p });
  workers.update(kill({ removed: false, reason: 'node shutdown', gracePeriodSeconds: 20, terminalStatus: SHUTDOWN }));
  workers.update(kill({ removed: false, reason: 'api delete', gracePeriodSeconds: 5 }));
  release();
  await done; // the shortened kill restarted termination with 5 s
  assert.ok(terminations.length >= 1);
  for (const t of terminations) assert.deepEqual(t.terminalStatus, SHUTDOWN);
  assert.equal(terminations.at(-1)!.gracePeriodSeconds, 5, 'the shorter grace of the later kill');
  workers.close();
});
