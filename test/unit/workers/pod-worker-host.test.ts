import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PodWorkerHost } from '../../../workers/pod-worker-host.js';
import type { PodWorkers } from '../../../workers/pod-workers.js';
import { PodApiObjectStore } from '../../../workers/volumes/api-object-store.js';
import type { PodUpdateMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';
import type { PodApiObjects } from '../../../src/shared/protocol/api-object-snapshot.js';

const objects = (value: string): PodApiObjects => ({
  configMaps: new Map([['cm', { state: 'found', object: { data: { k: value }, binaryData: {} } }]]),
  secrets: new Map(),
  tokens: new Map(),
});

test('a PLEG-only sync whose update changed the pod\'s API objects reaches the pod workers as a full sync', () => {
  const seen: PodUpdateMessage[] = [];
  const workers = { update: (m: PodUpdateMessage) => seen.push(m), close: () => {}, stats: () => ({}) } as unknown as PodWorkers;
  const store = new PodApiObjectStore();
  // The same wiring as workers/pod-worker-factory.ts.
  const host = new PodWorkerHost(workers, undefined, (msg) => store.observe(msg.uid, msg.apiObjects));
  const pleg = (apiObjects?: PodApiObjects): PodUpdateMessage => ({ kind: 'update', uid: 'a', updateType: 'sync', pod: { metadata: { uid: 'a' } }, plegOnly: true, ...(apiObjects ? { apiObjects } : {}) });
  host.handle(pleg(objects('1')));
  host.handle(pleg(objects('1')));
  host.handle(pleg());
  host.handle(pleg(objects('2')));
  assert.deepEqual(seen.map((m) => m.plegOnly === true), [false, true, true, false], 'first snapshot and a changed one: full syncs; equal or absent: still PLEG-only');
  assert.deepEqual(store.get('a'), objects('2'));
});
