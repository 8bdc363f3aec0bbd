/**
 * FailedMount events at the kubelet's cadence (workers/kuberuntime/mount-events.ts): a pod
 * synced every 2 s while its configMap is missing records the per-volume event at its first
 * failure, then on a 500 ms → 2 m 2 s backoff (never once per sync); "Unable to attach or mount
 * volumes ... timed out waiting for the condition" after 2 m 3 s of waiting, then every 2 m 3 s;
 * a changed message is recorded at once; a pod whose volumes set up starts from scratch; nothing
 * per volume while an object the pod refers to is still pending (not delivered yet).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { MountEvents } from '../../../workers/kuberuntime/mount-events.js';
import type { PodApiObjects } from '../../../src/shared/protocol/api-object-snapshot.js';

const pod: V1Pod = { metadata: { uid: 'u1', name: 'p', namespace: 'ns' }, spec: { containers: [] } };
const missing = 'MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found';

function setup(): { clock: FakeClock; gate: MountEvents; events: { atS: number; type: string; reason: string; message: string }[] } {
  const clock = new FakeClock();
  const t0 = clock.monotonic();
  const events: { atS: number; type: string; reason: string; message: string }[] = [];
  const gate = new MountEvents({ clock, recorder: (_p, type, reason, message) => events.push({ atS: (clock.monotonic() - t0) / 1000, type, reason, message }) });
  return { clock, gate, events };
}

test('a pod synced every 2 s for 10 min while its configMap is missing: events on the kubelet backoff, not per sync', () => {
  const { clock, gate, events } = setup();
  for (let s = 0; s <= 600; s += 2) {
    gate.failed(pod, [{ volume: 'cfg', message: missing }], ['cfg'], undefined);
    clock.step(2_000);
  }
  const perVolume = events.filter((e) => e.message === missing).map((e) => e.atS);
  // First failure, then each sync once the doubling backoff (0.5, 1, 2, 4, ... s, capped at 122 s) has passed.
  assert.deepEqual(perVolume, [0, 2, 4, 6, 10, 18, 34, 66, 130, 252, 374, 496]);
  const timeouts = events.filter((e) => e.message.startsWith('Unable to attach or mount volumes'));
  assert.deepEqual(timeouts.map((e) => e.atS), [124, 248, 372, 496]);
  assert.equal(timeouts[0]!.message, 'Unable to attach or mount volumes: unmounted volumes=[cfg], unattached volumes=[]: timed out waiting for the condition');
  assert.ok(events.every((e) => e.type === 'Warning' && e.reason === 'FailedMount'));
  assert.ok(events.length <= 25 * 2, `${events.length} events for 301 syncs`);
});

test('a changed message is recorded at once; a volume that recovers and fails again starts over', () => {
  const { clock, gate, events } = setup();
  gate.failed(pod, [{ volume: 'cfg', message: missing }], ['cfg'], undefined);
  clock.step(100);
  gate.failed(pod, [{ volume: 'cfg', message: missing }], ['cfg'], undefined);
  assert.equal(events.length, 1, 'the same failure within its backoff is not recorded again');
  const noKey = 'MountVolume.SetUp failed for volume "cfg" : configmap references non-existent config key: extra';
  gate.failed(pod, [{ volume: 'cfg', message: noKey }], ['cfg'], undefined);
  assert.deepEqual(events.map((e) => e.message), [missing, noKey]);
  // Another volume fails while cfg recovered: cfg's state is dropped.
  const sec = 'MountVolume.SetUp failed for volume "sec" : secret "s" not found';
  gate.failed(pod, [{ volume: 'sec', message: sec }], ['sec'], undefined);
  gate.failed(pod, [{ volume: 'cfg', message: noKey }, { volume: 'sec', message: sec }], ['cfg', 'sec'], undefined);
  assert.deepEqual(events.map((e) => e.message), [missing, noKey, sec, noKey], 'cfg failing again is a first failure');
});

test('mounted ends the wait: the 2 m 3 s timeout counts from the next first failure; forgetPod drops the state', () => {
  const { clock, gate, events } = setup();
  gate.failed(pod, [{ volume: 'cfg', message: missing }], ['cfg'], undefined);
  clock.step(100_000);
  gate.mounted('u1');
  assert.equal(gate.trackedPods, 0);
  clock.step(10_000);
  gate.failed(pod, [{ volume: 'cfg', message: missing }], ['cfg'], undefined);
  clock.step(30_000);
  gate.failed(pod, [{ volume: 'cfg', message: missing }], ['cfg'], undefined);
  assert.equal(events.filter((e) => e.message.startsWith('Unable')).length, 0, '130 s after the first failure, but only 30 s into this wait');
  clock.step(93_000);
  gate.failed(pod, [{ volume: 'cfg', message: missing }], ['cfg'], undefined);
  assert.equal(events.filter((e) => e.message.startsWith('Unable')).length, 1);
  gate.forgetPod('u1');
  assert.equal(gate.trackedPods, 0);
});

test('while an object is pending (not delivered by the main thread yet) no per-volume event; the wait still counts', () => {
  const { clock, gate, events } = setup();
  const snapshot = (state: 'pending' | 'missing'): PodApiObjects => ({ configMaps: new Map([['app-config', { state }]]), secrets: new Map(), tokens: new Map() });
  const waiting = 'MountVolume.SetUp failed for volume "cfg" : waiting for configmap "app-config" from the API server';
  for (let s = 0; s < 60; s += 2) {
    gate.failed(pod, [{ volume: 'cfg', message: waiting }], ['cfg'], snapshot('pending'));
    clock.step(2_000);
  }
  assert.equal(events.length, 0, 'a minute of waiting for delivery records nothing');
  gate.failed(pod, [{ volume: 'cfg', message: missing }], ['cfg'], snapshot('missing'));
  assert.deepEqual(events.map((e) => e.message), [missing], 'known missing: recorded at once');
  clock.step(63_000);
  gate.failed(pod, [{ volume: 'cfg', message: missing }], ['cfg'], snapshot('missing'));
  assert.equal(events.filter((e) => e.message.startsWith('Unable to attach or mount volumes')).length, 1, '2 m 3 s after the first failure, pending time included');
});
