import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { StatusManager } from '../../../src/main/status/status-manager.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';

const pod = (uid: string): V1Pod => Object.freeze({ metadata: Object.freeze({ name: uid, namespace: 'default', uid }) });

test('podsWithStatus: the same frozen item while pod and status are current; a new one after either changes; statuses are frozen', () => {
  const sm = new StatusManager({ clock: new FakeClock(), logger: silentLogger });
  let a = pod('a');
  const b = pod('b');
  const s1: V1PodStatus = { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] };
  sm.setStatus(a, s1);
  assert.ok(Object.isFrozen(s1) && Object.isFrozen(s1.conditions?.[0]), 'a status is frozen once stored');
  const [ia, ib] = sm.podsWithStatus([a, b]);
  assert.ok(ia && ib && Object.isFrozen(ia));
  assert.equal(ia.status, s1);
  assert.equal(ib.status?.phase, 'Pending', 'no status yet: Pending');
  const again = sm.podsWithStatus([a, b]);
  assert.equal(again[0], ia, 'unchanged: the same item');
  assert.equal(again[1], ib);
  sm.setStatus(a, { phase: 'Running' });
  const afterStatus = sm.podsWithStatus([a, b]);
  assert.notEqual(afterStatus[0], ia, 'a new status: a new item');
  assert.equal(afterStatus[0]?.status?.phase, 'Running');
  assert.equal(afterStatus[1], ib);
  a = Object.freeze({ ...a, spec: { containers: [{ name: 'c' }] } });
  const afterPod = sm.podsWithStatus([a, b]);
  assert.notEqual(afterPod[0], afterStatus[0], 'a new pod object: a new item');
  assert.equal(afterPod[0]?.spec?.containers[0]?.name, 'c');
  assert.equal(afterPod[0]?.status?.phase, 'Running');
});
