/**
 * What the only real API server here (kube-apiserver v1.20.2) does with a sidecar (an init
 * container with restartPolicy Always, a 1.28 field): it drops the field without a word (the
 * stored pod has a classic init container), and refuses probes on that init container. So an
 * API-server pod cannot carry a sidecar to shardlet before an API server ≥ 1.28; the sidecar
 * tests run on static pods (agent-sidecar-*.test.ts). Pins the README's statement.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../harness/apiserver-harness.js';

const NS = 'sidecar';
let cp: ControlPlane | undefined;

before(async () => {
  cp = await startControlPlane({});
  await cp.ensureNamespace(NS);
}, { timeout: 30 * 60_000 });

after(async () => {
  await cp?.stop();
}, { timeout: 60_000 });

function sidecarPod(name: string, probe: boolean): V1Pod {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS },
    spec: {
      nodeName: 'node-a',
      initContainers: [{ name: 'side', image: 'busybox', restartPolicy: 'Always', command: ['sleep', '100000'], ...(probe ? { readinessProbe: { exec: { command: ['true'] } } } : {}) }],
      containers: [{ name: 'main', image: 'busybox', command: ['sleep', '100000'] }],
    },
  };
}

test('kube-apiserver v1.20: initContainers[].restartPolicy is pruned; a probe on the init container is refused', { timeout: 60_000 }, async () => {
  assert.ok(cp);
  const kc = new KubeConfig();
  kc.loadFromFile(cp.adminKubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const created = await core.createNamespacedPod({ namespace: NS, body: sidecarPod('pruned', false) });
  assert.equal(created.spec?.initContainers?.[0]?.restartPolicy, undefined, 'the field is dropped on create');
  const read = await core.readNamespacedPod({ namespace: NS, name: 'pruned' });
  assert.equal(read.spec?.initContainers?.[0]?.restartPolicy, undefined, 'and is not stored');
  assert.equal(read.spec?.initContainers?.[0]?.name, 'side', 'the init container itself is kept');

  const refused = await core.createNamespacedPod({ namespace: NS, body: sidecarPod('probed', true) }).then(() => undefined, (err: unknown) => err);
  assert.ok(refused instanceof ApiException, String(refused));
  assert.equal(refused.code, 422);
  assert.match(String(refused.body), /spec\.initContainers\[0\]\.readinessProbe.*must not be set for init containers/);
});
