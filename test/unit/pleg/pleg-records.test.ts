import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, PodSandbox } from '../../../src/shared/cri/cri-types.js';
import type { RelistPod } from '../../../workers/runtime-status/bulk-pod-status.js';
import { PodRecords } from '../../../workers/pleg/pleg-records.js';

const UID = 'u-1';

function sandbox(id: string, state: PodSandbox['state']): PodSandbox {
  return { id, metadata: null, state, createdAt: '0', labels: {}, annotations: {}, runtimeHandler: '' };
}

function container(id: string, state: Container['state']): Container {
  return { id, podSandboxId: 's1', metadata: null, image: null, imageRef: '', state, createdAt: '0', labels: {}, annotations: {}, imageId: '' };
}

function listing(sandboxes: PodSandbox[], containers: Container[]): Map<string, RelistPod> {
  return new Map([[UID, { id: { uid: UID, name: 'p', namespace: 'ns' }, sandboxes, containers }]]);
}

test('a steady relist (same ids, same states) shares the delivered snapshot\'s map and has no events', () => {
  const r = new PodRecords();
  r.setCurrent(listing([sandbox('s1', 'SANDBOX_READY')], [container('c1', 'CONTAINER_RUNNING')]));
  assert.deepEqual(r.computeEvents(UID).map((e) => e.type), ['ContainerStarted', 'ContainerStarted']);
  r.update(UID);
  // Fresh objects from the next listing, same ids and states.
  r.setCurrent(listing([sandbox('s1', 'SANDBOX_READY')], [container('c1', 'CONTAINER_RUNNING')]));
  assert.equal(r.getCurrent(UID)?.states, r.getOld(UID)?.states, 'the map is shared, not rebuilt');
  assert.deepEqual(r.computeEvents(UID), []);
});

test('any difference from the delivered snapshot still yields the kubelet\'s events, in order', () => {
  const r = new PodRecords();
  const base = (): Map<string, RelistPod> => listing([sandbox('s1', 'SANDBOX_READY')], [container('c1', 'CONTAINER_RUNNING'), container('c2', 'CONTAINER_RUNNING')]);
  r.setCurrent(base());
  r.update(UID);
  // A state change.
  r.setCurrent(listing([sandbox('s1', 'SANDBOX_READY')], [container('c1', 'CONTAINER_EXITED'), container('c2', 'CONTAINER_RUNNING')]));
  assert.notEqual(r.getCurrent(UID)?.states, r.getOld(UID)?.states);
  assert.deepEqual(r.computeEvents(UID).map((e) => `${e.type}:${e.data}`), ['ContainerDied:c1']);
  // Same number of objects, one replaced by another id (c2 gone, c3 new).
  r.setCurrent(listing([sandbox('s1', 'SANDBOX_READY')], [container('c1', 'CONTAINER_RUNNING'), container('c3', 'CONTAINER_RUNNING')]));
  assert.deepEqual(r.computeEvents(UID).map((e) => `${e.type}:${e.data}`), ['ContainerDied:c2', 'ContainerRemoved:c2', 'ContainerStarted:c3']);
  // A sandbox that stopped.
  r.setCurrent(listing([sandbox('s1', 'SANDBOX_NOTREADY')], [container('c1', 'CONTAINER_RUNNING'), container('c2', 'CONTAINER_RUNNING')]));
  assert.deepEqual(r.computeEvents(UID).map((e) => `${e.type}:${e.data}`), ['ContainerDied:s1']);
  // An object listed twice is never taken for the steady case.
  r.setCurrent(listing([sandbox('s1', 'SANDBOX_READY')], [container('c1', 'CONTAINER_RUNNING'), container('c1', 'CONTAINER_RUNNING')]));
  assert.notEqual(r.getCurrent(UID)?.states, r.getOld(UID)?.states);
});
