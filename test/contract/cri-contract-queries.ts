/**
 * Contract section: what the agent's relist and teardown paths depend on.
 *
 * - List filters: sandboxes by id (full or unique prefix), state, label selector (AND of all
 *   pairs); containers by id (full or prefix), state, pod sandbox id, label selector, combined.
 * - Unknown ids: status/start/stop/exec/create-in → NotFound; RemoveContainer and
 *   RemovePodSandbox of an unknown id succeed (containerd ignores NotFound there).
 * - Idempotency: stop twice and remove twice succeed; removing a running container or a READY
 *   sandbox force-stops it first. StopPodSandbox of a REMOVED sandbox is NotFound in containerd
 *   1.6 (the kubelet tolerates NotFound on stop).
 * - Name conflicts: the same sandbox metadata while the first exists, or the same container
 *   metadata in one sandbox, fail with UNKNOWN ("failed to reserve … name"); removal frees them.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { it } from 'node:test';
import type { ContractContextRef } from './cri-contract.js';
import { containerConfig, podConfig, rejectionOf, runPod, startContainer, uniqueName, waitContainerState } from './cri-contract-fixtures.js';

const unknownId = (): string => crypto.randomBytes(32).toString('hex');

export function defineQueryContract(ref: ContractContextRef): void {
  it('ListPodSandbox filters: id, id prefix, state, label selector', async () => {
    const { rt, logDir } = ref();
    const group = uniqueName('grp');
    const a = await runPod(rt, uniqueName('lsa'), { logDirectory: logDir, labels: { group, pick: 'yes' } });
    const b = await runPod(rt, uniqueName('lsb'), { logDirectory: logDir, labels: { group, pick: 'no' } });
    await rt.stopPodSandbox(b.sandboxId);

    const ids = (xs: { id: string }[]): string[] => xs.map((x) => x.id).sort();
    assert.deepEqual(ids(await rt.listPodSandbox({ id: a.sandboxId })), [a.sandboxId]);
    assert.deepEqual(ids(await rt.listPodSandbox({ id: a.sandboxId.slice(0, 16) })), [a.sandboxId]);
    assert.deepEqual(ids(await rt.listPodSandbox({ labelSelector: { group } })), [a.sandboxId, b.sandboxId].sort());
    assert.deepEqual(ids(await rt.listPodSandbox({ labelSelector: { group, pick: 'yes' } })), [a.sandboxId]);
    assert.deepEqual(ids(await rt.listPodSandbox({ labelSelector: { group, pick: 'maybe' } })), []);
    assert.deepEqual(ids(await rt.listPodSandbox({ labelSelector: { group }, state: { state: 'SANDBOX_READY' } })), [a.sandboxId]);
    assert.deepEqual(ids(await rt.listPodSandbox({ labelSelector: { group }, state: { state: 'SANDBOX_NOTREADY' } })), [b.sandboxId]);
    assert.deepEqual(await rt.listPodSandbox({ id: unknownId() }), []);

    const [item] = await rt.listPodSandbox({ id: a.sandboxId });
    assert.equal(item?.state, 'SANDBOX_READY');
    assert.deepEqual(item?.metadata, a.config.metadata);
    assert.deepEqual(item?.labels, a.config.labels);
    assert.match(item?.createdAt ?? '', /^\d{19}$/);
  });

  it('ListContainers filters: id, id prefix, state, pod sandbox id, label selector, combined', async () => {
    const { rt, logDir } = ref();
    const group = uniqueName('cgrp');
    const p1 = await runPod(rt, uniqueName('lc1'), { logDirectory: logDir });
    const p2 = await runPod(rt, uniqueName('lc2'), { logDirectory: logDir });
    const run1 = await startContainer(rt, p1, containerConfig('run', ['sleep', '1000'], { labels: { group, kind: 'run' } }));
    const done1 = await startContainer(rt, p1, containerConfig('done', ['true'], { labels: { group, kind: 'done' } }));
    const made2 = await rt.createContainer({ podSandboxId: p2.sandboxId, config: containerConfig('made', ['true'], { labels: { group, kind: 'made' } }), sandboxConfig: p2.config });
    await waitContainerState(rt, done1, 'CONTAINER_EXITED');

    const ids = (xs: { id: string }[]): string[] => xs.map((x) => x.id).sort();
    assert.deepEqual(ids(await rt.listContainers({ id: run1 })), [run1]);
    assert.deepEqual(ids(await rt.listContainers({ id: run1.slice(0, 16) })), [run1]);
    assert.deepEqual(ids(await rt.listContainers({ podSandboxId: p1.sandboxId })), [run1, done1].sort());
    assert.deepEqual(ids(await rt.listContainers({ podSandboxId: p2.sandboxId })), [made2]);
    assert.deepEqual(ids(await rt.listContainers({ labelSelector: { group } })), [run1, done1, made2].sort());
    assert.deepEqual(ids(await rt.listContainers({ labelSelector: { group, kind: 'done' } })), [done1]);
    assert.deepEqual(ids(await rt.listContainers({ labelSelector: { group }, state: { state: 'CONTAINER_RUNNING' } })), [run1]);
    assert.deepEqual(ids(await rt.listContainers({ labelSelector: { group }, state: { state: 'CONTAINER_EXITED' } })), [done1]);
    assert.deepEqual(ids(await rt.listContainers({ labelSelector: { group }, state: { state: 'CONTAINER_CREATED' } })), [made2]);
    assert.deepEqual(ids(await rt.listContainers({ podSandboxId: p1.sandboxId, state: { state: 'CONTAINER_EXITED' } })), [done1]);
    assert.deepEqual(await rt.listContainers({ id: unknownId() }), []);
    assert.deepEqual(await rt.listContainers({ podSandboxId: unknownId() }), []);

    const [item] = await rt.listContainers({ id: run1 });
    assert.equal(item?.podSandboxId, p1.sandboxId);
    assert.equal(item?.state, 'CONTAINER_RUNNING');
    assert.deepEqual(item?.metadata, { name: 'run', attempt: 0 });
    assert.equal(item?.image?.image, 'docker.io/local/busybox:1');
    assert.match(item?.imageRef ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.match(item?.createdAt ?? '', /^\d{19}$/);
  });

  it('unknown ids: status/start/stop/exec/create-in are NotFound; RemoveContainer/RemovePodSandbox succeed', async () => {
    const { rt } = ref();
    const id = unknownId();
    assert.equal((await rejectionOf(rt.containerStatus(id))).code, 'ERR_CRI_NOT_FOUND');
    assert.equal((await rejectionOf(rt.startContainer(id))).code, 'ERR_CRI_NOT_FOUND');
    assert.equal((await rejectionOf(rt.stopContainer(id, 0))).code, 'ERR_CRI_NOT_FOUND');
    assert.equal((await rejectionOf(rt.execSync({ containerId: id, cmd: ['true'], timeout: 5 }))).code, 'ERR_CRI_NOT_FOUND');
    assert.equal((await rejectionOf(rt.podSandboxStatus(id))).code, 'ERR_CRI_NOT_FOUND');
    assert.equal((await rejectionOf(rt.stopPodSandbox(id))).code, 'ERR_CRI_NOT_FOUND');
    const orphan = rt.createContainer({ podSandboxId: id, config: containerConfig('orphan', ['true']), sandboxConfig: podConfig(uniqueName('none')) });
    assert.equal((await rejectionOf(orphan)).code, 'ERR_CRI_NOT_FOUND');
    await rt.removeContainer(id);
    await rt.removePodSandbox(id);
  });

  it('idempotency: stop twice and remove twice succeed; StopPodSandbox after removal is NotFound', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('idem'), { logDirectory: logDir });
    const id = await startContainer(rt, pod, containerConfig('c', ['sleep', '1000']));
    await rt.stopContainer(id, 0);
    await rt.stopContainer(id, 0);
    assert.equal((await rt.containerStatus(id)).status?.exitCode, 137, 'a second stop does not change the recorded exit');
    await rt.removeContainer(id);
    await rt.removeContainer(id);
    await rt.stopPodSandbox(pod.sandboxId);
    await rt.stopPodSandbox(pod.sandboxId);
    await rt.removePodSandbox(pod.sandboxId);
    await rt.removePodSandbox(pod.sandboxId);
    assert.equal((await rejectionOf(rt.stopPodSandbox(pod.sandboxId))).code, 'ERR_CRI_NOT_FOUND');
  });

  it('force removal: RemoveContainer of a running container and RemovePodSandbox of a READY sandbox succeed and leave nothing', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('force'), { logDirectory: logDir });
    const a = await startContainer(rt, pod, containerConfig('a', ['sleep', '1000']));
    const b = await startContainer(rt, pod, containerConfig('b', ['sleep', '1000']));
    await rt.removeContainer(a);
    assert.equal((await rejectionOf(rt.containerStatus(a))).code, 'ERR_CRI_NOT_FOUND');
    await rt.removePodSandbox(pod.sandboxId);
    assert.equal((await rejectionOf(rt.podSandboxStatus(pod.sandboxId))).code, 'ERR_CRI_NOT_FOUND');
    assert.equal((await rejectionOf(rt.containerStatus(b))).code, 'ERR_CRI_NOT_FOUND');
    assert.deepEqual(await rt.listContainers({ podSandboxId: pod.sandboxId }), []);
  });

  it('name conflicts: same sandbox metadata or same container metadata in a sandbox fail (UNKNOWN) until removed', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('dup'), { logDirectory: logDir });
    assert.equal((await rejectionOf(rt.runPodSandbox({ config: pod.config }))).code, 'ERR_CRI_UNKNOWN');
    const cfg = containerConfig('twin', ['sleep', '1000']);
    const first = await rt.createContainer({ podSandboxId: pod.sandboxId, config: cfg, sandboxConfig: pod.config });
    assert.equal((await rejectionOf(rt.createContainer({ podSandboxId: pod.sandboxId, config: cfg, sandboxConfig: pod.config }))).code, 'ERR_CRI_UNKNOWN');
    // A new attempt number is a new name: how the kubelet restarts containers.
    const retry = await rt.createContainer({ podSandboxId: pod.sandboxId, config: containerConfig('twin', ['sleep', '1000'], { attempt: 1 }), sandboxConfig: pod.config });
    assert.notEqual(retry, first);
    await rt.removeContainer(first);
    const again = await rt.createContainer({ podSandboxId: pod.sandboxId, config: cfg, sandboxConfig: pod.config });
    assert.notEqual(again, first);

    await rt.stopPodSandbox(pod.sandboxId);
    assert.equal((await rejectionOf(rt.runPodSandbox({ config: pod.config }))).code, 'ERR_CRI_UNKNOWN', 'a stopped sandbox still holds its name');
    await rt.removePodSandbox(pod.sandboxId);
    const reborn = await rt.runPodSandbox({ config: pod.config });
    assert.notEqual(reborn, pod.sandboxId);
  });
}
