/**
 * Readiness gates and owned conditions in the pod worker (conditions.ts): Ready is True only when
 * every container is ready AND every gate's condition in the API pod's status is True, with the
 * kubelet's ReadinessGatesNotReady messages; the gate conditions are the API pod's (never the
 * worker's own older copy); an owned condition that turns True carries no reason or message.
 * Also the downward API's divisor "0" (what the API server defaults), taken as 1.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { resourceFieldValue } from '../../../workers/kuberuntime/downward-api.js';
import { condition, container, makeHarness, makePod } from './kuberuntime-harness.js';

const GATE = 'example.com/load-balancer';

function gated(conditions: V1PodCondition[] | undefined): V1Pod {
  const pod = makePod({ readinessGates: [{ conditionType: GATE }], containers: [container('app')] });
  if (conditions) pod.status = { phase: 'Running', conditions };
  return pod;
}

test('Ready waits for the readiness gate the API pod carries; messages as the kubelet\'s', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  await h.sync(gated(undefined));
  let out = await h.sync(gated(undefined));
  assert.equal(condition(out.apiStatus, 'ContainersReady'), 'True');
  const ready = (): V1PodCondition | undefined => out.apiStatus.conditions?.find((c) => c.type === 'Ready');
  assert.equal(condition(out.apiStatus, 'Ready'), 'False:ReadinessGatesNotReady');
  assert.equal(ready()?.message, `corresponding condition of pod readiness gate "${GATE}" does not exist.`);

  out = await h.sync(gated([{ type: GATE, status: 'False' }]));
  assert.equal(ready()?.message, `the status of pod readiness gate "${GATE}" is not "True", but False`);
  assert.deepEqual(out.apiStatus.conditions?.filter((c) => c.type === GATE).map((c) => c.status), ['False'], 'the gate condition is the API pod\'s');

  out = await h.sync(gated([{ type: GATE, status: 'True' }]));
  assert.equal(condition(out.apiStatus, 'Ready'), 'True');
  assert.equal(ready()?.message, undefined);
  assert.equal(ready()?.reason, undefined, 'no stale reason on a True condition');

  // Another client turns the gate False again: the worker's own last status (gate True) does not count.
  out = await h.sync(gated([{ type: GATE, status: 'False' }]));
  assert.equal(condition(out.apiStatus, 'Ready'), 'False:ReadinessGatesNotReady');
  // A gate whose condition disappeared from the API pod is not kept from the previous status either.
  out = await h.sync(gated([]));
  assert.deepEqual(out.apiStatus.conditions?.filter((c) => c.type === GATE), []);
  assert.equal(ready()?.message, `corresponding condition of pod readiness gate "${GATE}" does not exist.`);
});

test('containers not ready: Ready copies ContainersReady (reason and message); once ready, neither keeps a reason', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app')] });
  const first = await h.sync(pod);
  const r1 = first.apiStatus.conditions?.find((c) => c.type === 'Ready');
  assert.equal(r1?.reason, 'ContainersNotReady');
  assert.equal(r1?.message, 'containers with unready status: [app]');
  const second = await h.sync(pod);
  for (const type of ['Ready', 'ContainersReady', 'Initialized', 'PodReadyToStartContainers', 'PodScheduled']) {
    const c = second.apiStatus.conditions?.find((x) => x.type === type);
    assert.deepEqual([c?.status, c?.reason, c?.message], ['True', undefined, undefined], type);
  }
});

test('downward API resourceFieldRef: divisor "0" (the API default) is 1; negative or junk divisors are refused', () => {
  const c = container('app', { resources: { limits: { cpu: '1500m', memory: '64Mi' }, requests: { cpu: '250m' } } });
  assert.deepEqual(resourceFieldValue(c, 'limits.cpu', '0'), { ok: true, value: '2' });
  assert.deepEqual(resourceFieldValue(c, 'limits.memory', '0'), { ok: true, value: String(64 * 1024 * 1024) });
  assert.deepEqual(resourceFieldValue(c, 'requests.cpu', '0m'), { ok: true, value: '1' });
  assert.deepEqual(resourceFieldValue(c, 'requests.cpu', '1m'), { ok: true, value: '250' });
  assert.deepEqual(resourceFieldValue(c, 'limits.memory', '1Mi'), { ok: true, value: '64' });
  assert.deepEqual(resourceFieldValue(c, 'limits.cpu', '-1'), { ok: false, message: 'invalid divisor "-1"' });
  assert.deepEqual(resourceFieldValue(c, 'limits.cpu', 'lots'), { ok: false, message: 'invalid divisor "lots"' });
});
