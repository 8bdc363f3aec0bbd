/**
 * Containers left CREATED by an interrupted create→start, and containers in UNKNOWN state:
 * what the next sync does (CRI calls and the status a user sees).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyPodStatus, type RuntimeContainerStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { computePodActions } from '../../../workers/kuberuntime/compute-pod-actions.js';
import { strayCreatedInstances } from '../../../workers/kuberuntime/container-prune.js';
import { hashContainer } from '../../../workers/kuberuntime/container-hash.js';
import { container, makeHarness, makePod, summary } from './kuberuntime-harness.js';

test('a container left CREATED by an interrupted start is started by the next sync: no new instance, no restart', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app')] });
  h.rt.failNext('StartContainer', 'ERR_CRI_UNAVAILABLE', 'connection reset');
  await h.sync(pod);
  assert.deepEqual(h.take().filter((c) => /Container/.test(c)), ['CreateContainer app', 'StartContainer app']);
  assert.equal(h.rt.podStatus('uid-web').containers[0]?.state, 'CONTAINER_CREATED');

  await h.sync(pod);
  assert.deepEqual(h.take().filter((c) => /Container/.test(c)), ['StartContainer app'], 'the CREATED instance is started, none created');
  const st = h.rt.podStatus('uid-web');
  assert.deepEqual(st.containers.map((c) => c.state), ['CONTAINER_RUNNING']);
  const out = await h.sync(pod);
  assert.equal(summary(out.apiStatus), 'Running app=running');
  assert.equal(out.apiStatus.containerStatuses?.[0]?.restartCount, 0);
});

test('CREATED instances that are not the newest of their container are removed on any sync', () => {
  const c = (id: string, name: string, state: RuntimeContainerStatus['state']): RuntimeContainerStatus => ({
    id, podSandboxId: 's', name, state, createdAtNs: '1', startedAtNs: '0', finishedAtNs: '0', exitCode: 0, reason: '', message: '', image: 'i', imageRef: 'r', hash: '', restartCount: 0, attempt: 0,
  });
  const status = { ...emptyPodStatus('u'), containers: [c('new', 'app', 'CONTAINER_RUNNING'), c('old', 'app', 'CONTAINER_CREATED'), c('x', 'side', 'CONTAINER_CREATED'), c('y', 'app', 'CONTAINER_EXITED')] };
  assert.deepEqual(strayCreatedInstances(status).map((x) => x.id), ['old']);
});

test('a container in UNKNOWN state is stopped before another instance is started', async (t) => {
  const pod = makePod({ containers: [container('app')] });
  const app = pod.spec!.containers[0]!;
  const status = {
    ...emptyPodStatus('uid-web', 'web', 'default'),
    ips: ['10.0.0.1'],
    sandboxes: [{ id: 's', state: 'SANDBOX_READY' as const, createdAtNs: '1', attempt: 0, ip: '10.0.0.1', ips: ['10.0.0.1'], hostNetwork: false }],
    containers: [{ id: 'u1', podSandboxId: 's', name: 'app', state: 'CONTAINER_UNKNOWN' as const, createdAtNs: '1', startedAtNs: '1', finishedAtNs: '0', exitCode: 0, reason: '', message: '', image: 'i', imageRef: 'r', hash: hashContainer(app), restartCount: 0, attempt: 0 }],
  };
  const acts = computePodActions(pod, status);
  assert.deepEqual(acts.containersToStart, [0]);
  assert.deepEqual([...acts.containersToKill.keys()], ['u1']);
  assert.equal(acts.containersToKill.get('u1')?.reason, 'Unknown');
  t.diagnostic('the kill runs before the start in runSyncPod (kill step 2, start step 5)');
});
