/**
 * A kill never depends on a readable cached status (issue 30): terminatePod told the status is
 * unknown (the pod's cache entry holds an error) stops what the runtime lists under the pod's
 * UID label, not what the placeholder status says (nothing).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyPodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { container, makeHarness, makePod } from './kuberuntime-harness.js';

test('terminatePod with statusUnknown kills every listed container and sandbox of the pod, none of another pod', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const names = Array.from({ length: 20 }, (_, k) => `c${k}`);
  const pod = makePod({ containers: names.map((n) => container(n)) });
  const other = makePod({ containers: [container('keep')] }, { name: 'other', uid: 'uid-other' });
  await h.sync(pod);
  await h.sync(other);
  h.take();
  const out = await h.syncer.terminatePod({
    pod, runtimeStatus: emptyPodStatus('uid-web', 'web', 'default'), gracePeriodSeconds: 5, signal: new AbortController().signal,
    statusUnknown: { code: 'ERR_CACHE_ENTRY_TOO_LARGE', message: 'too large' },
  });
  assert.equal(out.error, undefined);
  const calls = h.take();
  const stops = calls.filter((c) => c.startsWith('StopContainer')).sort();
  assert.deepEqual(stops, names.map((n) => `StopContainer ${n} 5`).sort());
  assert.ok(calls.includes('StopPodSandbox web'));
  assert.ok(!calls.some((c) => c.includes('keep') || c.includes('other')), 'the other pod is untouched');
  // Without statusUnknown, the same empty status kills nothing (the cached status is trusted).
  const h2 = makeHarness();
  t.after(h2.cleanup);
  h2.rt.addImage('busybox:1');
  await h2.sync(pod);
  h2.take();
  await h2.syncer.terminatePod({ pod, runtimeStatus: emptyPodStatus('uid-web', 'web', 'default'), gracePeriodSeconds: 5, signal: new AbortController().signal });
  assert.deepEqual(h2.take().filter((c) => c.startsWith('Stop')), []);
});
