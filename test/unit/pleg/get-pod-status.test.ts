import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import { getPodStatus } from '../../../workers/runtime-status/get-pod-status.js';
import { FakeRuntime } from './fake-runtime.js';

test('getPodStatus: only the pod\'s objects, newest first, names/hash/restartCount from labels and annotations', async () => {
  const rt = new FakeRuntime();
  rt.addSandbox('old-sb', 'A', { state: 'SANDBOX_NOTREADY', attempt: 0, ip: '10.0.0.1' });
  rt.addSandbox('sb', 'A', { attempt: 1, ip: '10.0.0.2' });
  rt.addSandbox('other', 'B');
  rt.addContainer('c-old', 'sb', 'app', { restartCount: 0 });
  rt.exit('c-old', 2);
  rt.addContainer('c-new', 'sb', 'app', { restartCount: 1, hash: 'h2' });
  rt.start('c-new');
  rt.addContainer('x', 'other', 'app');
  const st = await getPodStatus(rt, 'A', 'pod-A', 'default');
  assert.deepEqual(st.sandboxes.map((s) => [s.id, s.state, s.attempt, s.ip, s.hostNetwork]), [
    ['sb', 'SANDBOX_READY', 1, '10.0.0.2', false], ['old-sb', 'SANDBOX_NOTREADY', 0, '10.0.0.1', false],
  ]);
  assert.deepEqual(st.ips, ['10.0.0.2']);
  assert.deepEqual(st.containers.map((c) => [c.id, c.name, c.state, c.restartCount, c.hash, c.exitCode, c.podSandboxId]), [
    ['c-new', 'app', 'CONTAINER_RUNNING', 1, 'h2', 0, 'sb'], ['c-old', 'app', 'CONTAINER_EXITED', 0, 'abc123', 2, 'sb'],
  ]);
  assert.equal(st.containers[0]?.imageRef, 'docker.io/library/busybox@sha256:abc', 'imageRef from ContainerStatus');
  assert.deepEqual({ uid: st.uid, name: st.name, ns: st.namespace }, { uid: 'A', name: 'pod-A', ns: 'default' });
});

test('getPodStatus: host network from namespace options; no pod IPs unless the latest sandbox is ready', async () => {
  const rt = new FakeRuntime();
  rt.addSandbox('sb', 'H', { hostNetwork: true });
  let st = await getPodStatus(rt, 'H', 'h', 'default');
  assert.equal(st.sandboxes[0]?.hostNetwork, true);
  assert.deepEqual(st.ips, []);
  rt.addSandbox('sb2', 'P', { state: 'SANDBOX_NOTREADY', ip: '10.9.9.9' });
  st = await getPodStatus(rt, 'P', 'p', 'default');
  assert.deepEqual(st.ips, []);
});

test('getPodStatus skips objects gone since the list and throws other errors', async () => {
  const rt = new FakeRuntime();
  rt.addSandbox('sb', 'A');
  rt.addContainer('c1', 'sb', 'app');
  rt.failStatusOf.set('c1', new CriError('ERR_CRI_NOT_FOUND', 'ContainerStatus', 'gone'));
  assert.deepEqual((await getPodStatus(rt, 'A', 'a', 'default')).containers, []);
  rt.failStatusOf.set('c1', new CriError('ERR_CRI_DEADLINE_EXCEEDED', 'ContainerStatus', 'slow'));
  await assert.rejects(getPodStatus(rt, 'A', 'a', 'default'), (e: unknown) => e instanceof CriError && e.code === 'ERR_CRI_DEADLINE_EXCEEDED');
});
