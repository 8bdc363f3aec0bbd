/**
 * Scenario test on the lifecycle harness: a removed pod whose log directory could not be
 * removed (the first removals fail) is retried by the sync loop's requeue until the directory
 * is gone, though no source wants the pod any more (the kubelet retries its cleanups every
 * housekeeping pass).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { LifecycleHarness, container, pod } from './lifecycle-harness.js';

test('a removed pod whose log directory removal failed is retried until the directory is gone', async (t) => {
  const h = await LifecycleHarness.start({ failLogDirRemovals: 2 });
  t.after(() => h.close());
  h.apply(pod('logs-stuck', { terminationGracePeriodSeconds: 1, containers: [container('app', { command: ['sleep', '3600'] })] }));
  await h.until('the pod runs', () => h.status('uid-logs-stuck')?.phase === 'Running', 30_000);
  const dir = path.join(h.podLogsDir, 'default_logs-stuck_uid-logs-stuck');
  assert.ok(fs.existsSync(dir), 'the pod has a log directory');
  const removedAt = h.clock.now();
  h.remove('uid-logs-stuck');
  await h.advance(5_000);
  assert.ok(fs.existsSync(dir), 'the first removal failed (EBUSY)');
  assert.deepEqual(await h.cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-logs-stuck' } }), [], 'runtime objects are removed anyway');
  // Retried on the pod's PLEG events (its containers going away), then after the error backoff
  // (10 s, no jitter in the harness): the second attempt fails too, the third succeeds.
  await h.until('the log directory is removed', () => !fs.existsSync(dir), 60_000);
  const rms = h.calls.filter((c) => c.endsWith(' rm')).length;
  assert.equal(rms, 3, 'removed on the third attempt, then never again');
  const rmAt = h.calls.filter((c) => c.endsWith(' rm')).map((c) => (Number(c.split(' ')[0]) - removedAt) / 1000);
  assert.ok(rmAt[2]! - rmAt[1]! >= 10, `retries follow the error backoff: ${rmAt.join(', ')}`);
  await h.advance(60_000);
  assert.equal(h.calls.filter((c) => c.endsWith(' rm')).length, 3, 'a forgotten pod is not cleaned up again');
});

test('NetworkReady=false holds back pods that are not host-network; host-network pods start; the rest start once the network is ready', async (t) => {
  let networkError: string | undefined = 'network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized';
  const h = await LifecycleHarness.start({ networkError: () => networkError });
  t.after(() => h.close());
  h.apply(pod('host', { hostNetwork: true, containers: [container('app', { command: ['sleep', '3600'] })] }));
  h.apply(pod('net', { containers: [container('app', { command: ['sleep', '3600'] })] }));
  await h.until('the host-network pod runs', () => h.status('uid-host')?.phase === 'Running', 30_000);
  await h.advance(30_000);
  assert.deepEqual(await h.cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-net' } }), [], 'no sandbox while the network is not ready');
  assert.equal(h.status('uid-net')?.phase, 'Pending', 'the held-back pod is reported Pending');
  const readyAt = h.clock.now();
  networkError = undefined;
  await h.until('the other pod runs', () => h.status('uid-net')?.phase === 'Running', 30_000);
  // Retried on the error backoff (10 s, no jitter in the harness), as the kubelet.
  assert.ok(h.clock.now() - readyAt <= 16_000, `started ${(h.clock.now() - readyAt) / 1000} s after the network became ready`);
});
