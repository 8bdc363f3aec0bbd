/**
 * Termination messages and pod DNS events against a real kube-apiserver (the API server's own
 * defaults: terminationMessagePath /dev/termination-log, policy File, dnsPolicy ClusterFirst) on
 * the simulated runtime: a message written to the file and one taken from the log reach the
 * API pod's status, and an agent without --cluster-dns records the kubelet's MissingClusterDNS
 * warning on the pod.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { pollUntil } from './agent-harness.js';
import { clusterSimFixture, coreApi, createPods, PodWatchRecorder, startClusterAgent, TEST_IMAGE } from './cluster-harness.js';

const NS = 'tmsg';
const NODE = 'node-tmsg';
const f = clusterSimFixture({ namespace: NS });

function terminatingPod(): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'tmsg', namespace: NS },
    spec: {
      nodeName: NODE,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [
        { name: 'file', image: TEST_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo -n "written to the file" > /dev/termination-log; exit 3'] },
        { name: 'logs', image: TEST_IMAGE, imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'FallbackToLogsOnError', command: ['sh', '-c', 'echo taken from the log; exit 5'] },
      ],
    },
  };
}

test('termination messages from the file and from the log reach the API status; MissingClusterDNS without --cluster-dns', { timeout: 300_000 }, async () => {
  const { core } = coreApi(f.cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(f.cp.adminKubeconfig, NS));
  await r.start();
  f.agent = await startClusterAgent({ cp: f.cp, nodeName: NODE, endpoint: f.endpoint });
  const [pod] = await createPods(core, [terminatingPod()]);
  const uid = pod!.metadata!.uid!;
  assert.equal(pod!.spec?.containers[0]?.terminationMessagePath, '/dev/termination-log', 'the API server defaulted the path');
  const done = await r.waitFor(() => {
    const p = r.pods.get(uid);
    const st = p?.status?.containerStatuses ?? [];
    return st.length === 2 && st.every((c) => c.state?.terminated) ? p : undefined;
  }, 'both containers terminated in the API status', 120_000);
  const byName = new Map((done.status?.containerStatuses ?? []).map((c) => [c.name, c.state?.terminated]));
  assert.equal(byName.get('file')?.exitCode, 3);
  assert.equal(byName.get('file')?.message, 'written to the file');
  assert.equal(byName.get('logs')?.exitCode, 5);
  assert.equal(byName.get('logs')?.message, 'taken from the log\n');
  assert.equal(done.status?.phase, 'Failed');

  const events = await pollUntil(async () => {
    const list = await core.listNamespacedEvent({ namespace: NS, fieldSelector: `involvedObject.uid=${uid}` });
    return list.items.some((e) => e.reason === 'MissingClusterDNS') ? list.items : undefined;
  }, { what: 'a MissingClusterDNS event on the pod', timeoutMs: 60_000, intervalMs: 500 });
  const missing = events.find((e) => e.reason === 'MissingClusterDNS')!;
  assert.equal(missing.type, 'Warning');
  assert.match(missing.message ?? '', /kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy\. Falling back to "Default" policy\./);
});
