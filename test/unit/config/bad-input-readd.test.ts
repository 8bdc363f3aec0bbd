/**
 * Item 19, second half: a manifest removed and written back while its pod is being killed (same
 * content, so the same uid). Before: the re-ADD went to a worker that never revives a terminating
 * pod, so the pod stayed dead while /pods kept showing the dying instance as Running. Now the
 * status says it is waiting for the kill, and the pod is created afresh once the worker forgot it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { PodDispatcher } from '../../../src/main/dispatch/pod-dispatcher.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { PodManager } from '../../../src/main/pod-manager/pod-manager.js';
import { StatusManager } from '../../../src/main/status/status-manager.js';
import { PodLifecycle } from '../../../src/main/syncloop/pod-lifecycle.js';
import { WorkQueue } from '../../../src/main/syncloop/work-queue.js';
import type { PodUpdateMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';

const pod = (uid: string): V1Pod => ({
  metadata: { uid, name: `p-${uid}`, namespace: 'default', annotations: { 'kubernetes.io/config.source': 'file' } },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
});

test('19: a pod re-added while being killed is never reported Running, and starts again once the kill completes', () => {
  const clock = new FakeClock();
  const sent: PodUpdateMessage[] = [];
  const dispatcher: PodDispatcher = { threads: 2, send: (m) => sent.push(m), stats: async () => [], close: async () => {} };
  const podManager = new PodManager();
  const statusManager = new StatusManager({ clock, logger: silentLogger });
  const lc = new PodLifecycle({
    clock, logger: silentLogger, dispatcher, podManager, statusManager, workQueue: new WorkQueue(),
    admitter: { admit: () => ({ admit: true }) }, sourcesReady: () => true, cache: { get: () => undefined },
  });
  const phase = (): string | undefined => statusManager.podsWithStatus(podManager.pods()).find((p) => p.metadata?.uid === 'a')?.status?.phase;

  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a')] });
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'syncing', work: 'sync', durationMs: 1, apiStatus: { phase: 'Running' } });
  assert.equal(phase(), 'Running');

  lc.handleConfigUpdate({ op: 'REMOVE', source: 'file', pods: [pod('a')] });
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a')] }); // written back during the grace period
  assert.deepEqual(sent.map((m) => m.updateType), ['create', 'kill'], 'nothing is sent to the terminating worker');
  assert.equal(phase(), 'Pending');
  // The dying instance still reports a Running phase while its containers stop: not shown.
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'terminating', work: 'sync', durationMs: 1, apiStatus: { phase: 'Running' } });
  assert.equal(phase(), 'Pending');
  assert.equal(statusManager.get('a')?.reason, 'Terminating');

  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'terminated', work: 'cleanup', durationMs: 1, forgotten: true });
  assert.deepEqual(sent.map((m) => m.updateType), ['create', 'kill', 'create'], 'created afresh once the worker forgot it');
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'syncing', work: 'sync', durationMs: 1, apiStatus: { phase: 'Running' } });
  assert.equal(phase(), 'Running');

  // Removed again while the restart is pending: no restart.
  lc.handleConfigUpdate({ op: 'REMOVE', source: 'file', pods: [pod('a')] });
  lc.handleConfigUpdate({ op: 'ADD', source: 'file', pods: [pod('a')] });
  lc.handleConfigUpdate({ op: 'REMOVE', source: 'file', pods: [pod('a')] });
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'terminated', work: 'cleanup', durationMs: 1, forgotten: true });
  assert.equal(sent.at(-1)?.updateType, 'kill');
  assert.equal(statusManager.get('a'), undefined);
});
