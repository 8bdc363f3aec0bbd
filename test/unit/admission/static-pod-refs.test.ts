import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { admitStaticPodRefs } from '../../../src/main/admission/static-pod-refs.js';

const pod = (source: string, extra: Partial<NonNullable<V1Pod['spec']>> = {}): V1Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u', annotations: { 'kubernetes.io/config.source': source } },
  spec: { containers: [{ name: 'c', image: 'i' }], ...extra },
});

test('static pods referring to configMaps, secrets, tokens or claims are rejected; API pods and plain static pods are not', () => {
  const refs = { volumes: [{ name: 'v', configMap: { name: 'cm' } }, { name: 'd', emptyDir: {} }], containers: [{ name: 'c', image: 'i', envFrom: [{ secretRef: { name: 's' } }] }] };
  assert.deepEqual(admitStaticPodRefs(pod('file', refs)), {
    admit: false, reason: 'StaticPodReferencesAPIObjects',
    message: 'static pods may not refer to API objects; this one refers to configmap "cm", secret "s"',
  });
  assert.equal(admitStaticPodRefs(pod('http', { volumes: [{ name: 'v', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } }] })).admit, false);
  assert.equal(admitStaticPodRefs(pod('file', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] })).admit, false);
  assert.deepEqual(admitStaticPodRefs(pod('api', refs)), { admit: true });
  assert.deepEqual(admitStaticPodRefs(pod('file', { volumes: [{ name: 'd', emptyDir: {} }, { name: 'h', hostPath: { path: '/x' } }] })), { admit: true });
});
