/**
 * Scenario tests on the lifecycle harness: the status fields as the kubelet reports them —
 * phase, conditions, podIP(s), hostIP(s), startTime, and per container state (waiting reasons,
 * running startedAt, terminated exitCode/reason/startedAt/finishedAt), lastState,
 * restartCount, ready, started, image, imageID and containerID — checked against the runtime.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ContainerStatus } from '@kubernetes/client-node';
import { LifecycleHarness, assertInOrder, conditions, container, containerView, pod } from './lifecycle-harness.js';

const T0 = 1_700_000_000_000;
const isoOf = (d: Date | string | undefined): string | undefined => (d === undefined ? undefined : new Date(d).toISOString());
const nsIso = (ns: string): string => new Date(Number(BigInt(ns) / 1_000_000n)).toISOString();

/** The container's fields next to what the runtime says about the same instance. */
async function checkAgainstRuntime(h: LifecycleHarness, cs: V1ContainerStatus): Promise<void> {
  const id = (cs.containerID ?? '').replace(/^containerd:\/\//, '');
  assert.match(cs.containerID ?? '', /^containerd:\/\/[0-9a-f]{64}$/, `${cs.name}: containerID`);
  const st = (await h.cri.containerStatus(id)).status!;
  assert.equal(st.metadata?.name, cs.name);
  assert.equal(cs.imageID, st.imageRef, `${cs.name}: imageID is the runtime's imageRef`);
  assert.equal(cs.image, 'docker.io/library/busybox:1.36', `${cs.name}: image as the runtime reports it`);
  if (cs.state?.running) assert.equal(isoOf(cs.state.running.startedAt), nsIso(st.startedAt), `${cs.name}: running.startedAt`);
  const term = cs.state?.terminated;
  if (term) {
    assert.equal(term.exitCode, st.exitCode);
    assert.equal(isoOf(term.startedAt), nsIso(st.startedAt));
    assert.equal(isoOf(term.finishedAt), nsIso(st.finishedAt));
    assert.equal(term.containerID, cs.containerID);
  }
}

test('a running pod: IPs, hostIP, startTime, conditions and container fields match the runtime', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('web', {
    initContainers: [container('init', { command: ['sh', '-c', 'sleep 1'] })],
    containers: [container('app', { command: ['sleep', '3600'] })],
  }));
  h.apply(pod('hostnet', { hostNetwork: true, containers: [container('app', { command: ['sleep', '3600'] })] }));
  await h.advance(5_000);
  // Conditions while the init container runs, then once the pod is up.
  assert.deepEqual(h.timeline('uid-web', conditions), [
    'PodReadyToStartContainers=True Initialized=False:ContainersNotInitialized ContainersReady=False:ContainersNotReady Ready=False:ContainersNotReady PodScheduled=True',
    'PodReadyToStartContainers=True Initialized=True ContainersReady=True Ready=True PodScheduled=True',
  ]);
  const s = h.status('uid-web')!;
  assert.equal(s.phase, 'Running');
  const [sb] = await h.cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-web' } });
  const ip = (await h.cri.podSandboxStatus(sb!.id)).status!.network!.ip;
  assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/);
  assert.equal(s.podIP, ip);
  assert.deepEqual(s.podIPs, [{ ip }]);
  assert.equal(s.hostIP, '127.0.0.1');
  assert.deepEqual(s.hostIPs, [{ ip: '127.0.0.1' }]);
  assert.equal(isoOf(s.startTime), new Date(T0).toISOString(), 'startTime: when the agent first saw the pod');
  assert.equal(s.qosClass, 'BestEffort');
  const init = s.initContainerStatuses![0]!;
  assert.deepEqual([init.state?.terminated?.reason, init.state?.terminated?.exitCode, init.ready, init.started, init.restartCount], ['Completed', 0, true, false, 0]);
  await checkAgainstRuntime(h, init);
  const app = s.containerStatuses![0]!;
  assert.deepEqual([!!app.state?.running, app.ready, app.started, app.restartCount, app.lastState?.terminated], [true, true, true, 0, undefined]);
  await checkAgainstRuntime(h, app);
  // Conditions keep their lastTransitionTime while unchanged: PodScheduled since the start.
  const scheduled = s.conditions!.find((c) => c.type === 'PodScheduled')!;
  assert.equal(isoOf(scheduled.lastTransitionTime), new Date(T0).toISOString());
  // A host-network pod's IP is the node's.
  const hn = h.status('uid-hostnet')!;
  assert.deepEqual([hn.podIP, hn.podIPs, hn.hostIP], ['127.0.0.1', [{ ip: '127.0.0.1' }], '127.0.0.1']);
});

test('terminated fields: Completed / Error with exit codes and times; OOMKilled; lastState and restartCount', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('job', { restartPolicy: 'Never', containers: [
    container('ok', { command: ['sh', '-c', 'sleep 1; exit 0'] }),
    container('bad', { command: ['sh', '-c', 'sleep 2; exit 2'] }),
  ] }));
  h.apply(pod('oom', { containers: [container('app', { command: ['sleep', '3600'] })] }, { 'sim.shardlet.io/oom-after-ms': '3000' }));
  h.apply(pod('done', { restartPolicy: 'OnFailure', containers: [container('app', { command: ['sh', '-c', 'exit 0'] })] }));
  await h.advance(5_000);
  const job = h.status('uid-job')!;
  assert.equal(job.phase, 'Failed', 'one container failed under Never');
  const [bad, ok] = job.containerStatuses!; // sorted by name
  assert.deepEqual([bad!.name, bad!.state?.terminated?.reason, bad!.state?.terminated?.exitCode, bad!.ready, bad!.started], ['bad', 'Error', 2, false, false]);
  assert.deepEqual([ok!.name, ok!.state?.terminated?.reason, ok!.state?.terminated?.exitCode], ['ok', 'Completed', 0]);
  assert.equal(isoOf(ok!.state?.terminated?.startedAt), new Date(T0).toISOString());
  assert.equal(isoOf(ok!.state?.terminated?.finishedAt), new Date(T0 + 1000).toISOString());
  assert.equal(isoOf(bad!.state?.terminated?.finishedAt), new Date(T0 + 2000).toISOString());
  await checkAgainstRuntime(h, bad!);
  await checkAgainstRuntime(h, ok!);
  assert.ok(h.history('uid-job').some((r) => r.status.phase === 'Running' && r.status.podIP !== undefined), 'the pod IP was reported while running');
  assert.equal(conditions(job), 'PodReadyToStartContainers=False Initialized=True ContainersReady=False:PodFailed Ready=False:PodFailed PodScheduled=True');

  // OOM-killed at 3 s: restarted at once; the killed instance is lastState with reason OOMKilled.
  assertInOrder(h.timeline('uid-oom', containerView('app')), ['running+ready', 'running/r1+ready']);
  const oom = h.status('uid-oom')!.containerStatuses![0]!;
  assert.deepEqual([oom.lastState?.terminated?.reason, oom.lastState?.terminated?.exitCode, oom.restartCount], ['OOMKilled', 137, 1]);
  assert.equal(isoOf(oom.lastState?.terminated?.finishedAt), new Date(T0 + 3000).toISOString());
  assert.notEqual(oom.lastState?.terminated?.containerID, oom.containerID, 'lastState is the previous instance');
  await checkAgainstRuntime(h, oom);

  // Succeeded: every container Completed; Ready false with reason PodCompleted.
  const done = h.status('uid-done')!;
  assert.equal(done.phase, 'Succeeded');
  assert.equal(containerView('app')(done), 'terminated:Completed:0');
  assert.match(conditions(done), /ContainersReady=False:PodCompleted Ready=False:PodCompleted/);
});

test('pod start latency: kubelet_pod_start_duration counts from first seen; the SLI from creation, minus image pulls and init containers', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  // Created at T0 (creationTimestamp), seen by the agent 2 s later.
  await h.advance(2_000);
  // A 5 s image pull (pull policy Always), no init containers.
  h.apply(pod('pull', { containers: [container('app', { image: 'busybox:1.36', imagePullPolicy: 'Always', command: ['sleep', '3600'] })] }, { 'sim.shardlet.io/pull-delay-ms': '5000' }));
  // An init container that runs 3 s, image already present.
  h.apply(pod('init', {
    initContainers: [container('setup', { imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'sleep 3'] })],
    containers: [container('app', { imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] })],
  }));
  // A control pod: no pull, no init: SLI = creation → running.
  h.apply(pod('plain', { containers: [container('app', { imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] })] }));
  await h.advance(20_000);

  const of = (uid: string): Record<string, number> => Object.fromEntries(h.startLatencies(uid).map((l) => [l.kind, l.seconds]));
  const pull = of('uid-pull');
  const init = of('uid-init');
  const plain = of('uid-plain');
  for (const [name, l] of Object.entries({ pull, init, plain })) {
    assert.equal(h.startLatencies(`uid-${name}`).length, 2, `${name}: each latency reported exactly once: ${JSON.stringify(h.startLatencies(`uid-${name}`))}`);
    assert.ok(l['seenToRunning'] !== undefined && l['sli'] !== undefined, name);
  }
  // The pull pod: running 5 s after it was seen; the SLI keeps the 2 s before it was seen and drops the pull.
  assert.ok(pull['seenToRunning']! >= 5 && pull['seenToRunning']! < 6, `pull: seen → running ${pull['seenToRunning']}`);
  assert.ok(pull['sli']! >= 2 && pull['sli']! < 3, `pull: SLI ${pull['sli']}`);
  // The init pod: its app starts after the 3 s init container (and the relist that sees it exit).
  assert.ok(init['seenToRunning']! >= 3, `init: seen → running ${init['seenToRunning']}`);
  const initExcluded = init['seenToRunning']! + 2 - init['sli']!;
  assert.ok(initExcluded >= 2.999 && initExcluded <= 4, `init: the init container's run time is excluded (${initExcluded} s)`);
  // The control: nothing excluded, 2 s before seen plus no start time.
  assert.ok(plain['seenToRunning']! < 1, `plain: seen → running ${plain['seenToRunning']}`);
  assert.ok(Math.abs(plain['sli']! - (plain['seenToRunning']! + 2)) < 1e-6, `plain: SLI ${plain['sli']} = seen → running + 2 s`);
});
