/**
 * Ephemeral containers (`kubectl debug`) through KubeRuntimeSyncer.syncPod over the fake CRI
 * runtime: when they start (once, never restarted, before init containers, never with a new
 * sandbox), the PID namespace of a target container, their statuses, validation refusals that
 * name the field, and that they go with the pod.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1EphemeralContainer, V1Pod } from '@kubernetes/client-node';
import { emptyPodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { computePodActions } from '../../../workers/kuberuntime/compute-pod-actions.js';
import { validateEphemeralContainer, validateNoEphemeralContainersOnCreate } from '../../../src/shared/manifest/ephemeral-container-validation.js';
import { formatFieldErrors } from '../../../src/shared/manifest/field-error.js';
import { container, makeHarness, makePod, summary } from './kuberuntime-harness.js';

function withEphemeral(pod: V1Pod, ...ecs: V1EphemeralContainer[]): V1Pod {
  return { ...pod, spec: { ...pod.spec!, ephemeralContainers: ecs } };
}

function ephemeralSummary(pod: { ephemeralContainerStatuses?: Array<{ name: string; ready: boolean; state?: { running?: object; terminated?: { reason?: string; exitCode: number }; waiting?: { reason?: string; message?: string } } }> }): string[] {
  return (pod.ephemeralContainerStatuses ?? []).map((c) => {
    const st = c.state;
    return `${c.name}=${st?.running ? 'running' : st?.terminated ? `terminated:${st.terminated.reason}:${st.terminated.exitCode}` : `waiting:${st?.waiting?.reason ?? ''}`}${c.ready ? ':ready' : ''}`;
  });
}

const debug: V1EphemeralContainer = { name: 'debugger', image: 'busybox:1', command: ['sh', '-c', 'echo hi'], targetContainerName: 'app' };

test('an added ephemeral container starts once in the current sandbox, joins the target PID namespace, and is never restarted', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app', { command: ['sleep', '1000'] })] });
  await h.sync(pod);
  await h.sync(pod);
  h.take();
  const appId = h.rt.containerIdOf('app');

  const updated = withEphemeral(pod, debug);
  const first = await h.sync(updated);
  assert.equal(first.error, undefined);
  assert.deepEqual(h.take().filter((c) => !c.startsWith('ImageStatus')), ['CreateContainer debugger', 'StartContainer debugger']);
  const cfg = h.rt.lastConfigOf('debugger');
  assert.deepEqual(cfg.linux?.securityContext?.namespaceOptions, { network: 'POD', pid: 'TARGET', ipc: 'POD', targetId: appId });
  assert.equal(cfg.logPath, 'debugger/0.log');
  assert.equal(cfg.metadata.attempt, 0);
  assert.equal(cfg.labels?.['io.kubernetes.container.name'], 'debugger');

  const running = await h.sync(updated);
  assert.deepEqual(h.take(), [], 'a running ephemeral container changes nothing');
  assert.deepEqual(ephemeralSummary(running.apiStatus), ['debugger=running']);
  assert.match(running.apiStatus.ephemeralContainerStatuses![0]!.containerID!, /^containerd:\/\/c-\d+$/);
  assert.equal(summary(running.apiStatus), 'Running app=running', 'the app containers and the phase are not touched');

  h.rt.exitContainer('debugger', 0);
  const done = await h.sync(updated);
  assert.deepEqual(h.take(), [], 'an exited ephemeral container is not restarted (restartPolicy Always)');
  assert.deepEqual(ephemeralSummary(done.apiStatus), ['debugger=terminated:Completed:0']);
  h.rt.exitContainer('app', 1);
  await h.sync(updated);
  assert.deepEqual(h.take().filter((c) => c.includes('debugger')), [], 'an app restart does not restart it either');
});

test('with a shared PID namespace the target is not joined (as the kubelet: TARGET only replaces CONTAINER)', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ shareProcessNamespace: true, containers: [container('app', { command: ['sleep', '1000'] })] });
  await h.sync(pod);
  await h.sync(withEphemeral(pod, debug));
  assert.deepEqual(h.rt.lastConfigOf('debugger').linux?.securityContext?.namespaceOptions, { network: 'POD', pid: 'POD', ipc: 'POD' });
});

test('a target that is not running: waiting with CreateContainerConfigError naming the target', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ restartPolicy: 'Never', containers: [container('app', { command: ['sleep', '1000'] }), container('other', { command: ['sleep', '1000'] })] });
  await h.sync(pod);
  h.rt.exitContainer('app', 0);
  h.take();
  const updated = withEphemeral(pod, debug);
  const out = await h.sync(updated);
  assert.deepEqual(h.take().filter((c) => c.includes('debugger')), []);
  const st = out.apiStatus.ephemeralContainerStatuses![0]!;
  assert.equal(st.state?.waiting?.reason, 'CreateContainerConfigError');
  assert.equal(st.state?.waiting?.message, 'unable to find target container app');
  assert.match(String(out.error?.message ?? ''), /unable to find target container app/);
});

test('fields an ephemeral container may not set are refused alone, naming the field; the pod keeps running', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app', { command: ['sleep', '1000'] })] });
  await h.sync(pod);
  h.take();
  const bad: V1EphemeralContainer = { name: 'bad', image: 'busybox:1', ports: [{ containerPort: 80 }], readinessProbe: { exec: { command: ['true'] } }, resources: { limits: { cpu: '1' } }, lifecycle: { preStop: { exec: { command: ['true'] } } } };
  const unknownTarget: V1EphemeralContainer = { name: 'lost', image: 'busybox:1', targetContainerName: 'nope' };
  const good: V1EphemeralContainer = { name: 'good', image: 'busybox:1', command: ['sleep', '1000'] };
  const updated = withEphemeral(pod, bad, unknownTarget, good);
  const out = await h.sync(updated);
  assert.deepEqual(h.take().filter((c) => c.startsWith('Create') || c.startsWith('Start') || c.startsWith('Stop') || c.startsWith('Run')), ['CreateContainer good', 'StartContainer good']);
  const [b, l] = out.apiStatus.ephemeralContainerStatuses!;
  assert.equal(b!.state?.waiting?.reason, 'CreateContainerConfigError');
  assert.equal(b!.state?.waiting?.message, [
    'spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container',
  ].join('; '));
  assert.equal(l!.state?.waiting?.message, 'spec.ephemeralContainers[1].targetContainerName: Not found: "nope"');
  assert.equal(summary(out.apiStatus), 'Running app=running');
});

test('validation: names unique across all containers, image required, subPath forbidden; static pods may not carry them', () => {
  const pod = withEphemeral(makePod({ initContainers: [container('init')], containers: [container('app')] }),
    { name: 'app', image: '' }, { name: 'x', image: 'busybox:1', volumeMounts: [{ name: 'v', mountPath: '/v', subPath: 'a' }] }, { name: 'x', image: 'busybox:1', targetContainerName: 'init' });
  assert.equal(formatFieldErrors(validateEphemeralContainer(pod, 0)), 'spec.ephemeralContainers[0].name: Duplicate value: "app"; spec.ephemeralContainers[0].image: Required value');
  assert.equal(formatFieldErrors(validateEphemeralContainer(pod, 1)), 'spec.ephemeralContainers[1].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container');
  assert.equal(formatFieldErrors(validateEphemeralContainer(pod, 2)), 'spec.ephemeralContainers[2].name: Duplicate value: "x"');
  assert.equal(formatFieldErrors(validateEphemeralContainer(pod, 3)), 'spec.ephemeralContainers[3]: Invalid value: <nil>: must be an object');
  assert.equal(formatFieldErrors(validateNoEphemeralContainersOnCreate(pod)), 'spec.ephemeralContainers: Forbidden: cannot be set on create');
  assert.deepEqual(validateNoEphemeralContainersOnCreate(makePod({ containers: [container('app')] })), []);
});

test('action computation: none with a new sandbox; started before init containers finish; not when already in the runtime', async (t) => {
  const pod = withEphemeral(makePod({ initContainers: [container('init', { command: ['sleep', '1000'] })], containers: [container('app')] }), { name: 'debugger', image: 'busybox:1' });
  const fresh = computePodActions(pod, emptyPodStatus('uid-web', 'web', 'default'));
  assert.equal(fresh.createSandbox, true);
  assert.deepEqual(fresh.ephemeralContainersToStart, [], 'never with a new sandbox');

  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  await h.sync(pod); // sandbox + the first init container (still running)
  h.take();
  const during = computePodActions(pod, h.rt.podStatus('uid-web'));
  assert.deepEqual(during.ephemeralContainersToStart, [0]);
  assert.equal(during.nextInitContainerToStart, undefined, 'the init container is still running');
  await h.sync(pod);
  assert.deepEqual(h.take().filter((c) => c.startsWith('StartContainer')), ['StartContainer debugger'], 'it starts while initialization runs');
  assert.deepEqual(computePodActions(pod, h.rt.podStatus('uid-web')).ephemeralContainersToStart, []);
});

test('ephemeral containers are killed with the pod', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app', { command: ['sleep', '1000'] })] });
  await h.sync(pod);
  const updated = withEphemeral(pod, { name: 'debugger', image: 'busybox:1', command: ['sleep', '1000'] });
  await h.sync(updated);
  h.take();
  await h.syncer.terminatePod({ pod: updated, runtimeStatus: h.rt.podStatus("uid-web"), gracePeriodSeconds: 30, signal: new AbortController().signal });
  const calls = h.take();
  assert.ok(calls.some((c) => c.startsWith('StopContainer debugger')), calls.join('\n'));
  assert.ok(calls.some((c) => c.startsWith('StopContainer app')), calls.join('\n'));
  assert.ok(h.rt.podStatus('uid-web').containers.every((c) => c.state !== 'CONTAINER_RUNNING'));
});
