/**
 * A pod refused at admission, as the kubelet's rejectPod: phase Failed with the reason, the
 * message prefixed "Pod was rejected: ", one Warning event with the reason and the bare message;
 * never dispatched to a worker. Driven through PodLifecycle with the OS admission check.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { PodDispatcher } from '../../../src/main/dispatch/pod-dispatcher.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { admitPodOS } from '../../../src/main/admission/pod-os.js';
import { PodManager } from '../../../src/main/pod-manager/pod-manager.js';
import { StatusManager } from '../../../src/main/status/status-manager.js';
import { PodLifecycle } from '../../../src/main/syncloop/pod-lifecycle.js';
import { WorkQueue } from '../../../src/main/syncloop/work-queue.js';
import type { PodUpdateMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';

function pod(uid: string, os?: string): V1Pod {
  return {
    metadata: { uid, name: `p-${uid}`, namespace: 'default', creationTimestamp: new Date('2026-01-01T00:00:00Z'), annotations: { 'kubernetes.io/config.source': 'api' } },
    spec: { ...(os ? { os: { name: os } } : {}), containers: [{ name: 'c', image: 'busybox' }] },
  };
}

test('spec.os windows: Failed PodOSNotSupported, "Pod was rejected: " message, a Warning event, never dispatched', () => {
  const clock = new FakeClock();
  const sent: PodUpdateMessage[] = [];
  const events: string[] = [];
  const dispatcher: PodDispatcher = { threads: 1, send: (m) => sent.push(m), stats: async () => [], close: async () => {} };
  const statusManager = new StatusManager({ clock, logger: silentLogger });
  const lc = new PodLifecycle({
    clock, logger: silentLogger, dispatcher, podManager: new PodManager(), statusManager, workQueue: new WorkQueue(),
    admitter: { admit: (p) => admitPodOS(p) }, sourcesReady: () => true, cache: { get: () => undefined },
    onPodRejected: (p, reason, message) => events.push(`${p.metadata?.uid} ${reason}: ${message}`),
  });
  lc.handleConfigUpdate({ op: 'ADD', source: 'api', pods: [pod('win', 'windows'), pod('lin', 'linux')] });
  assert.deepEqual(sent.map((m) => m.uid), ['lin']);
  assert.deepEqual(statusManager.get('win'), { phase: 'Failed', reason: 'PodOSNotSupported', message: "Pod was rejected: Failed to admit pod as the OS field doesn't match node OS" });
  assert.deepEqual(events, ["win PodOSNotSupported: Failed to admit pod as the OS field doesn't match node OS"]);
});
