/**
 * A status-only change of an API pod (RECONCILE) through the pod lifecycle: kept as the desired
 * pod (later syncs send it), and a change of one of its readiness gates' conditions syncs its
 * worker at once (the kubelet's HandlePodReconcile / NeedToReconcilePodReadiness); the echo of
 * the agent's own status write costs nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { PodDispatcher } from '../../../src/main/dispatch/pod-dispatcher.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { PodManager } from '../../../src/main/pod-manager/pod-manager.js';
import { StatusManager } from '../../../src/main/status/status-manager.js';
import { PodLifecycle } from '../../../src/main/syncloop/pod-lifecycle.js';
import { readinessGatesChanged } from '../../../src/main/syncloop/readiness-gates.js';
import { WorkQueue } from '../../../src/main/syncloop/work-queue.js';
import type { PodUpdateMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';

const GATE = 'example.com/gate';

function pod(conditions: V1PodCondition[], gates = true): V1Pod {
  return {
    metadata: { uid: 'a', name: 'p-a', namespace: 'default', creationTimestamp: new Date('2026-01-01T00:00:00Z'), annotations: { 'kubernetes.io/config.source': 'api' } },
    spec: { ...(gates ? { readinessGates: [{ conditionType: GATE }] } : {}), containers: [{ name: 'c', image: 'busybox' }] },
    status: { phase: 'Running', conditions },
  };
}

test('readinessGatesChanged compares the gates\' condition statuses only', () => {
  const ready = { type: 'Ready', status: 'False' };
  assert.equal(readinessGatesChanged(pod([ready]), pod([ready, { type: GATE, status: 'True' }])), true, 'appeared');
  assert.equal(readinessGatesChanged(pod([{ type: GATE, status: 'True' }]), pod([{ type: GATE, status: 'False' }])), true, 'flipped');
  assert.equal(readinessGatesChanged(pod([{ type: GATE, status: 'True' }]), pod([])), true, 'removed');
  assert.equal(readinessGatesChanged(pod([ready, { type: GATE, status: 'True' }]), pod([{ type: 'Ready', status: 'True' }, { type: GATE, status: 'True', reason: 'x' }])), false, 'Ready and a reason are not gates');
  assert.equal(readinessGatesChanged(pod([], false), pod([{ type: GATE, status: 'True' }], false)), false, 'no gates');
});

test('RECONCILE: the new status is kept for later syncs; a gate change syncs the worker, our own echo does not', () => {
  const clock = new FakeClock();
  const sent: PodUpdateMessage[] = [];
  const dispatcher: PodDispatcher = { threads: 1, send: (m) => sent.push(m), stats: async () => [], close: async () => {} };
  const podManager = new PodManager();
  const workQueue = new WorkQueue();
  const lc = new PodLifecycle({
    clock, logger: silentLogger, dispatcher, podManager, statusManager: new StatusManager({ clock, logger: silentLogger }), workQueue,
    admitter: { admit: () => ({ admit: true }) }, sourcesReady: () => true, cache: { get: () => undefined },
  });
  lc.handleConfigUpdate({ op: 'ADD', source: 'api', pods: [pod([])] });
  assert.deepEqual(sent.map((m) => m.updateType), ['create']);
  // Our own status write comes back: Ready changed, no gate did.
  lc.handleConfigUpdate({ op: 'RECONCILE', source: 'api', pods: [pod([{ type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady' }])] });
  assert.equal(sent.length, 1, 'no sync for the echo');
  // Another client sets the gate.
  const gateOn = pod([{ type: 'Ready', status: 'False' }, { type: GATE, status: 'True' }]);
  lc.handleConfigUpdate({ op: 'RECONCILE', source: 'api', pods: [gateOn] });
  assert.deepEqual(sent.map((m) => m.updateType), ['create', 'sync']);
  assert.equal(sent[1]!.pod, gateOn, 'the worker gets the pod with the gate condition');
  assert.equal(podManager.get('a'), gateOn, 'the pod manager holds the new status');
  // A later resync (work queue) sends the newest pod too.
  lc.handlePodResult({ kind: 'podResult', threadId: 1, uid: 'a', state: 'syncing', work: 'sync', durationMs: 1, requeueAfterMs: 1_000 });
  clock.step(1_000);
  lc.syncDue();
  assert.equal(sent.at(-1)!.pod, gateOn);
});
