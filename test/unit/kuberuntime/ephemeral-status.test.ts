import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { emptyPodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { EPHEMERAL_NOT_SUPPORTED_REASON, generateAPIPodStatus } from '../../../workers/kuberuntime/api-status.js';

const pod: V1Pod = {
  metadata: { name: 'p', namespace: 'd', uid: 'u1' },
  spec: {
    containers: [{ name: 'app', image: 'busybox' }],
    ephemeralContainers: [{ name: 'debugger', image: 'busybox:1', targetContainerName: 'app' }],
  },
};

test('ephemeral containers are reported as waiting with a reason, never dropped without a word', () => {
  const s = generateAPIPodStatus({
    pod, runtimeStatus: emptyPodStatus('u1', 'p', 'd'), previous: undefined, podIsTerminal: false,
    startTime: new Date(0), now: new Date(1), reasonOf: () => undefined, runtimeName: 'containerd', hostIP: '10.0.0.1',
  });
  assert.deepEqual(s.ephemeralContainerStatuses?.map((c) => [c.name, c.image, c.ready, c.state?.waiting?.reason]), [['debugger', 'busybox:1', false, EPHEMERAL_NOT_SUPPORTED_REASON]]);
  const none = generateAPIPodStatus({
    pod: { ...pod, spec: { containers: pod.spec!.containers } }, runtimeStatus: emptyPodStatus('u1', 'p', 'd'), previous: undefined, podIsTerminal: false,
    startTime: new Date(0), now: new Date(1), reasonOf: () => undefined, runtimeName: 'containerd', hostIP: '10.0.0.1',
  });
  assert.equal(none.ephemeralContainerStatuses, undefined);
});
