/**
 * The graceful node shutdown scenario (cluster-shutdown-sim.test.ts, cluster-shutdown-containerd.test.ts):
 * against a real kube-apiserver, through the
 * product's own wiring and its own signal seam: the agent runs with --shutdown-grace-period 20s
 * --shutdown-grace-period-critical-pods 8s and receives SIGUSR1 (the kubelet's second shutdown
 * signal beside logind's PrepareForShutdown; --shutdown-signal-sources SIGUSR1 keeps the test
 * host's logind out of it). Then:
 *  - the Node's Ready condition turns False, KubeletNotReady "node is shutting down", and a
 *    NodeShutdown event is recorded on the Node;
 *  - the regular pods are killed first, both ignoring SIGTERM (trap "" TERM): one with
 *    terminationGracePeriodSeconds 2 is killed after its own 2 s (shorter than the group's
 *    share), one with 30 s at the regular group's 12 s (20 − 8), not before;
 *    the critical pod (priorityClassName system-node-critical: spec.priority 2000001000 from
 *    the API server's Priority admission) is killed only after that, with 8 s;
 *  - each ends with phase Failed, reason Terminated, message "Pod was terminated in response to
 *    imminent node shutdown.";
 *  - a pod created afterwards is refused: phase Failed, reason NodeShutdown, "Pod was rejected: Pod was rejected
 *    as the node is shutting down.".
 * Times are read from the API (container finishedAt, second precision) and the test's wall
 * clock; lower bounds are exact (the grace period was given), upper bounds allow for load.
 */
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { pollUntil } from './agent-harness.js';
import { coreApi, createPods, PodWatchRecorder, startClusterAgent, TEST_IMAGE, type ClusterFixture } from './cluster-harness.js';

const MESSAGE = 'Pod was terminated in response to imminent node shutdown.';

function sleeper(NS: string, NODE: string, name: string, opts: { ignoreTerm?: boolean; critical?: boolean; graceSeconds?: number } = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeName: NODE,
      // No pod network needed (containerd runs without CNI here), the same on both runtimes.
      hostNetwork: true,
      terminationGracePeriodSeconds: opts.graceSeconds ?? 30,
      ...(opts.critical ? { priorityClassName: 'system-node-critical' } : {}),
      containers: [{ name: 'c', image: TEST_IMAGE, imagePullPolicy: 'IfNotPresent', command: opts.ignoreTerm ? ['sh', '-c', 'trap "" TERM; sleep 3600'] : ['sleep', '3600'] }],
    },
  };
}

const finishedAt = (p: V1Pod | undefined): number => {
  const t = p?.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt;
  assert.ok(t, `${p?.metadata?.name}: a finished container`);
  return new Date(t).getTime();
};

/** The scenario on the fixture's runtime (sim or containerd), in namespace NS, node NODE. */
export async function shutdownScenario(f: ClusterFixture, NS: string, NODE: string): Promise<void> {
  const { core } = coreApi(f.cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(f.cp.adminKubeconfig, NS));
  await r.start();
  const agent = (f.agent = await startClusterAgent({ cp: f.cp, nodeName: NODE, endpoint: f.endpoint, extraArgs: ['--shutdown-grace-period', '20s', '--shutdown-grace-period-critical-pods', '8s', '--shutdown-signal-sources', 'SIGUSR1'] }));
  await pollUntil(() => (agent.logs.some((l) => l.includes('node shutdown manager watching') && l.includes('SIGUSR1')) ? true : undefined), { what: 'the SIGUSR1 source started', timeoutMs: 30_000, intervalMs: 200 });
  // logind is left out: a test host's logind must not be reconfigured or inhibited.
  assert.ok(!agent.logs.some((l) => l.includes('logind')), 'the logind source was not started');

  const created = await createPods(core, [sleeper(NS, NODE, 'quick', { ignoreTerm: true, graceSeconds: 2 }), sleeper(NS, NODE, 'stubborn', { ignoreTerm: true }), sleeper(NS, NODE, 'critical', { ignoreTerm: true, critical: true })]);
  const uid = new Map(created.map((p) => [p.metadata!.name!, p.metadata!.uid!]));
  assert.equal(created[2]!.spec?.priority, 2_000_001_000, 'the API server resolved the critical class');
  await r.waitFor(() => ([...uid.values()].every((u) => r.pods.get(u)?.status?.phase === 'Running') ? true : undefined), 'three pods running', 120_000);
  await pollUntil(async () => ((await core.readNode({ name: NODE })).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? true : undefined), { what: 'node Ready', timeoutMs: 60_000, intervalMs: 500 });

  const signalledMs = Date.now();
  process.kill(agent.pid, 'SIGUSR1');

  const ready = await pollUntil(async () => {
    const c = (await core.readNode({ name: NODE })).status?.conditions?.find((x) => x.type === 'Ready');
    return c?.status === 'False' ? c : undefined;
  }, { what: 'node NotReady', timeoutMs: 30_000, intervalMs: 250 });
  assert.equal(ready.reason, 'KubeletNotReady');
  assert.equal(ready.message, 'node is shutting down');

  const terminal = await r.waitFor(() => {
    const ps = [...uid.values()].map((u) => r.pods.get(u));
    return ps.every((p) => p?.status?.phase === 'Failed') ? ps : undefined;
  }, 'all three pods Failed', 120_000);
  for (const p of terminal) {
    assert.equal(p!.status?.reason, 'Terminated', p!.metadata?.name);
    assert.equal(p!.status?.message, MESSAGE, p!.metadata?.name);
  }
  const [quick, stubborn, critical] = terminal;
  const sec = (ms: number): number => ms / 1000;
  // finishedAt has second precision: allow 1 s of truncation on lower bounds.
  const quickAfter = sec(finishedAt(quick) - signalledMs);
  const stubbornAfter = sec(finishedAt(stubborn) - signalledMs);
  const criticalAfterStubborn = sec(finishedAt(critical) - finishedAt(stubborn));
  assert.ok(quickAfter >= 1 && quickAfter < 8, `quick got its own 2 s, shorter than the regular share (${quickAfter}s)`);
  assert.ok(stubbornAfter >= 11 && stubbornAfter < 25, `stubborn got the regular share, 12 s (${stubbornAfter}s)`);
  assert.ok(criticalAfterStubborn >= 7 && criticalAfterStubborn < 20, `critical was killed after the regular group, with 8 s (${criticalAfterStubborn}s after stubborn)`);

  const [late] = await createPods(core, [sleeper(NS, NODE, 'late')]);
  const refused = await r.waitFor(() => {
    const p = r.pods.get(late!.metadata!.uid!);
    return p?.status?.phase === 'Failed' ? p : undefined;
  }, 'the late pod refused', 60_000);
  assert.equal(refused.status?.reason, 'NodeShutdown');
  // The kubelet's rejectPod prefixes "Pod was rejected: ".
  assert.equal(refused.status?.message, 'Pod was rejected: Pod was rejected as the node is shutting down.');

  const events = await pollUntil(async () => {
    const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.kind=Node,involvedObject.name=${NODE},reason=NodeShutdown` });
    return list.items.length > 0 ? list.items : undefined;
  }, { what: 'a NodeShutdown event on the Node', timeoutMs: 30_000, intervalMs: 500 });
  assert.equal(events[0]!.message, 'Shutdown manager detected shutdown event');
  assert.equal(events[0]!.type, 'Normal');
}
