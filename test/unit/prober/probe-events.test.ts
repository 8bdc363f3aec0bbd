/**
 * Cluster mode: a failed probe records the kubelet's Unhealthy event (Warning, "<Type> probe
 * failed: <output>", the container's field path) through the ProberManager's event recorder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { ProberManager } from '../../../workers/prober/prober-manager.js';
import { probeFailure } from '../../../workers/prober/probe-outcome.js';
import { FakeExecRuntime } from './fake-exec-runtime.js';
import { execProbe, makePod, makeStatus } from './prober-fixtures.js';

test('a failed liveness probe records an Unhealthy event', async () => {
  const clock = new FakeClock();
  const events: { type: string; reason: string; message: string; fieldPath: string | undefined; uid: string | undefined }[] = [];
  const m = new ProberManager({
    runtime: new FakeExecRuntime(clock), clock, random: () => 0, onUpdate: () => {},
    prober: { run: async () => probeFailure('connection refused') },
    events: (pod, type, reason, message, fieldPath) => events.push({ type, reason, message, fieldPath, uid: pod.metadata?.uid }),
  });
  m.addPod(makePod('p1', [{ name: 'app', livenessProbe: execProbe({ periodSeconds: 1, failureThreshold: 3 }) }]));
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c1', startedAtMs: clock.now() }]));
  assert.ok(await clock.runUntil(() => events.length >= 1, { maxMs: 30_000 }), 'an event within 30 s of fake time');
  assert.deepEqual(events[0], { type: 'Warning', reason: 'Unhealthy', message: 'Liveness probe failed: connection refused', fieldPath: 'spec.containers{app}', uid: 'p1' });
  m.close();
});
