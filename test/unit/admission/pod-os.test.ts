/** The kubelet's OS admission checks (pod-os.ts): order, reasons and messages. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { admitPodOS } from '../../../src/main/admission/pod-os.js';

function pod(o: { os?: string; label?: string; selector?: string } = {}): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u', ...(o.label !== undefined ? { labels: { 'kubernetes.io/os': o.label } } : {}) },
    spec: {
      ...(o.os !== undefined ? { os: { name: o.os } } : {}),
      ...(o.selector !== undefined ? { nodeSelector: { 'kubernetes.io/os': o.selector } } : {}),
      containers: [{ name: 'c', image: 'busybox' }],
    },
  };
}

test('spec.os.name windows → PodOSNotSupported; linux or unset admitted', () => {
  assert.deepEqual(admitPodOS(pod({ os: 'windows' })), { admit: false, reason: 'PodOSNotSupported', message: "Failed to admit pod as the OS field doesn't match node OS" });
  assert.deepEqual(admitPodOS(pod({ os: 'linux' })), { admit: true });
  assert.deepEqual(admitPodOS(pod()), { admit: true });
});

test('a kubernetes.io/os pod label other than linux → PodOSSelectorNodeLabelDoesNotMatch, checked first', () => {
  const msg = "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label";
  assert.deepEqual(admitPodOS(pod({ label: 'windows' })), { admit: false, reason: 'PodOSSelectorNodeLabelDoesNotMatch', message: msg });
  assert.deepEqual(admitPodOS(pod({ label: 'windows', os: 'windows' })), { admit: false, reason: 'PodOSSelectorNodeLabelDoesNotMatch', message: msg });
  assert.deepEqual(admitPodOS(pod({ label: 'linux' })), { admit: true });
  // As the kubelet: the nodeSelector is the scheduler's business, not admission's.
  assert.deepEqual(admitPodOS(pod({ selector: 'windows' })), { admit: true });
});
