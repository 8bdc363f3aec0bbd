import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { admitResourceFields, UNSUPPORTED_POD_SPEC_REASON } from '../../../src/main/admission/pod-resource-fields.js';

function pod(spec: Record<string, unknown>): V1Pod {
  return { metadata: { name: 'p', uid: 'u' }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } } as V1Pod;
}

test('honoured resources and overhead are admitted', () => {
  assert.deepEqual(admitResourceFields(pod({
    containers: [{ name: 'c', image: 'b', resources: { requests: { cpu: '1', memory: '1Gi', 'ephemeral-storage': '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } }],
    overhead: { cpu: '100m' },
  })), { admit: true });
  assert.deepEqual(admitResourceFields(pod({ containers: [{ name: 'c', image: 'b', resources: { claims: [] } }] })), { admit: true }, 'an empty list is no use');
});

test('unsupported resource fields are refused with a message naming the field', () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ resources: { limits: { cpu: '1' } } }, 'spec.resources: pod-level resources are not supported'],
    [{ resourceClaims: [{ name: 'gpu' }] }, 'spec.resourceClaims: dynamic resource allocation'],
    [{ containers: [{ name: 'c', image: 'b', resources: { claims: [{ name: 'gpu' }] } }] }, 'spec.containers[0].resources.claims: dynamic resource allocation'],
    [{ initContainers: [{ name: 'i', image: 'b', resources: { limits: { 'hugepages-2Mi': '4Mi' } } }] }, 'spec.initContainers[0].resources.limits[hugepages-2Mi]: huge pages are not supported'],
    [{ containers: [{ name: 'a', image: 'b' }, { name: 'c', image: 'b', resources: { requests: { 'example.com/gpu': '1' } } }] }, 'spec.containers[1].resources.requests[example.com/gpu]: extended resources are not supported'],
  ];
  for (const [spec, message] of cases) {
    const r = admitResourceFields(pod(spec));
    assert.equal(r.admit, false, message);
    if (!r.admit) {
      assert.equal(r.reason, UNSUPPORTED_POD_SPEC_REASON);
      assert.ok(r.message.startsWith(message), r.message);
    }
  }
});
