import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isNotFound, type CriError } from '../../../src/shared/cri/cri-errors.js';
import { within } from '../../harness/poll.js';
import { containerConfig, runPod, sandboxConfig, startHarness } from './sim-harness.js';
import { subscribeContainerEvents } from './sim-events-client.js';

const code = (e: unknown): string => (e as CriError).code;

test('Version and Status answer like a ready runtime', async () => {
  const h = await startHarness();
  try {
    const v = await h.client.version();
    assert.equal(v.runtimeName, 'shardlet-sim');
    assert.equal(v.runtimeApiVersion, 'v1');
    const s = await h.client.status();
    const conds = Object.fromEntries((s.status?.conditions ?? []).map((c) => [c.type, c.status]));
    assert.deepEqual(conds, { RuntimeReady: true, NetworkReady: true });
  } finally {
    await h.close();
  }
});

test('sandbox lifecycle: READY → NOTREADY → removed, with IPs, labels and annotations echoed', async () => {
  const h = await startHarness();
  try {
    const cfg = sandboxConfig({ name: 'web' });
    const id = await h.client.runPodSandbox({ config: cfg });
    assert.match(id, /^[0-9a-f]{64}$/);
    const st = (await h.client.podSandboxStatus(id)).status;
    assert.equal(st?.state, 'SANDBOX_READY');
    assert.deepEqual(st?.metadata, cfg.metadata);
    assert.deepEqual(st?.labels, cfg.labels);
    assert.deepEqual(st?.annotations, cfg.annotations);
    assert.equal(st?.createdAt, String(BigInt(h.clock.now()) * 1_000_000n));
    assert.match(st?.network?.ip ?? '', /^10\.88\.\d+\.\d+$/);
    const id2 = await h.client.runPodSandbox({ config: sandboxConfig() });
    const ip2 = (await h.client.podSandboxStatus(id2)).status?.network?.ip;
    assert.notEqual(ip2, st?.network?.ip);
    const hostId = await h.client.runPodSandbox({ config: sandboxConfig({ hostNetwork: true }) });
    assert.equal((await h.client.podSandboxStatus(hostId)).status?.network?.ip, '');

    await h.client.stopPodSandbox(id);
    await h.client.stopPodSandbox(id); // idempotent
    const stopped = (await h.client.podSandboxStatus(id)).status;
    assert.equal(stopped?.state, 'SANDBOX_NOTREADY');
    assert.equal(stopped?.network?.ip, ''); // netns closed: containerd reports no IP
    await h.client.removePodSandbox(id);
    await h.client.removePodSandbox(id); // unknown id: OK like containerd 1.6
    await assert.rejects(h.client.podSandboxStatus(id), (e) => isNotFound(e));
    await assert.rejects(h.client.stopPodSandbox(id), (e) => isNotFound(e));
  } finally {
    await h.close();
  }
});

test('sandbox and container names are reserved while the object exists ("is reserved for")', async () => {
  const h = await startHarness();
  try {
    const cfg = sandboxConfig({ name: 'dup' });
    const id = await h.client.runPodSandbox({ config: cfg });
    await assert.rejects(h.client.runPodSandbox({ config: cfg }), (e: unknown) => code(e) === 'ERR_CRI_UNKNOWN' && /is reserved for/.test((e as Error).message));
    const cid = await h.client.createContainer({ podSandboxId: id, config: containerConfig('c', ['sleep', '9']), sandboxConfig: cfg });
    await assert.rejects(h.client.createContainer({ podSandboxId: id, config: containerConfig('c', ['sleep', '9']), sandboxConfig: cfg }), /is reserved for/);
    await h.client.removeContainer(cid);
    await h.client.createContainer({ podSandboxId: id, config: containerConfig('c', ['sleep', '9']), sandboxConfig: cfg }); // name free again
    await h.client.stopPodSandbox(id);
    await assert.rejects(h.client.runPodSandbox({ config: cfg }), /is reserved for/); // stopped still holds the name
    await h.client.removePodSandbox(id);
    await h.client.runPodSandbox({ config: cfg });
  } finally {
    await h.close();
  }
});

test('container lifecycle, status fields, and sandbox stop/remove cascading to containers', async () => {
  const h = await startHarness();
  try {
    const { sandboxId, containerId, sandbox } = await runPod(h, ['sleep', '1000']);
    let st = (await h.client.containerStatus(containerId)).status;
    assert.equal(st?.state, 'CONTAINER_RUNNING');
    assert.equal(st?.image?.image, 'docker.io/library/busybox:latest');
    assert.match(st?.imageRef ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.equal(st?.exitCode, 0);
    assert.equal(st?.finishedAt, '0');
    assert.notEqual(st?.startedAt, '0');
    assert.deepEqual(st?.labels, { 'io.kubernetes.container.name': 'app' });
    assert.deepEqual(st?.annotations, { 'io.kubernetes.container.hash': 'abc' });
    const c2 = await h.client.createContainer({ podSandboxId: sandboxId, config: containerConfig('side', ['sleep', '5']), sandboxConfig: sandbox });
    assert.equal((await h.client.containerStatus(c2)).status?.state, 'CONTAINER_CREATED');
    await assert.rejects(h.client.startContainer(containerId), (e: unknown) => code(e) === 'ERR_CRI_UNKNOWN' && /CONTAINER_RUNNING state/.test((e as Error).message));

    await h.client.stopPodSandbox(sandboxId); // kills running containers at once
    st = (await h.client.containerStatus(containerId)).status;
    assert.equal(st?.state, 'CONTAINER_EXITED');
    assert.equal(st?.exitCode, 137);
    assert.equal(st?.reason, 'Error');
    assert.equal((await h.client.containerStatus(c2)).status?.state, 'CONTAINER_CREATED'); // never started: stays created
    await h.client.removePodSandbox(sandboxId);
    await assert.rejects(h.client.containerStatus(containerId), (e) => isNotFound(e));
    assert.deepEqual(await h.client.listContainers(), []);
  } finally {
    await h.close();
  }
});

test('RemoveContainer: running containers are force-killed and removed (containerd 1.6); unknown ids OK', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    await h.client.removeContainer(containerId);
    await assert.rejects(h.client.containerStatus(containerId), (e) => isNotFound(e));
    await h.client.removeContainer(containerId);
    await h.client.removeContainer('f'.repeat(64));
    await assert.rejects(h.client.removeContainer(''), (e: unknown) => code(e) === 'ERR_CRI_UNKNOWN');
  } finally {
    await h.close();
  }
});

test('List filters: id (and id prefix), state, sandbox id, label selector', async () => {
  const h = await startHarness();
  try {
    const a = await runPod(h, ['sleep', '1000'], { labels: { tier: 'a' } });
    const b = await runPod(h, ['sleep', '1000'], { labels: { tier: 'b' } }, { labels: { app: 'db' } });
    await h.client.stopPodSandbox(b.sandboxId);
    assert.equal((await h.client.listPodSandbox()).length, 2);
    assert.deepEqual((await h.client.listPodSandbox({ id: a.sandboxId.slice(0, 12) })).map((s) => s.id), [a.sandboxId]);
    assert.deepEqual((await h.client.listPodSandbox({ state: { state: 'SANDBOX_NOTREADY' } })).map((s) => s.id), [b.sandboxId]);
    assert.deepEqual((await h.client.listPodSandbox({ labelSelector: { app: 'db' } })).map((s) => s.id), [b.sandboxId]);
    assert.deepEqual(await h.client.listPodSandbox({ labelSelector: { app: 'none' } }), []);

    assert.deepEqual((await h.client.listContainers({ id: a.containerId.slice(0, 8) })).map((c) => c.id), [a.containerId]);
    assert.deepEqual((await h.client.listContainers({ state: { state: 'CONTAINER_RUNNING' } })).map((c) => c.id), [a.containerId]);
    assert.deepEqual((await h.client.listContainers({ podSandboxId: b.sandboxId })).map((c) => c.id), [b.containerId]);
    assert.deepEqual((await h.client.listContainers({ labelSelector: { tier: 'b' } })).map((c) => c.id), [b.containerId]);
    assert.deepEqual(await h.client.listContainers({ podSandboxId: a.sandboxId, labelSelector: { tier: 'b' } }), []);
    const [c] = await h.client.listContainers({ id: a.containerId });
    assert.equal(c?.podSandboxId, a.sandboxId);
    assert.deepEqual(c?.metadata, { name: 'app', attempt: 0 });
    assert.equal(c?.image?.image, 'busybox');
    // a unique prefix works for lookups too (containerd truncindex)
    assert.equal((await h.client.containerStatus(a.containerId.slice(0, 10))).status?.id, a.containerId);
  } finally {
    await h.close();
  }
});

test('bad requests get containerd statuses, never a crash', async () => {
  const h = await startHarness();
  try {
    const raw = h.client.runPodSandbox.bind(h.client) as (req: unknown) => Promise<string>;
    await assert.rejects(raw({}), (e: unknown) => code(e) === 'ERR_CRI_UNKNOWN' && /must include metadata/.test((e as Error).message));
    const sb = sandboxConfig();
    const id = await h.client.runPodSandbox({ config: sb });
    await assert.rejects(h.client.createContainer({ podSandboxId: 'nope', config: containerConfig('x', ['sh']), sandboxConfig: sb }), (e) => isNotFound(e));
    await assert.rejects(h.client.createContainer({ podSandboxId: '', config: containerConfig('x', ['sh']), sandboxConfig: sb }), (e: unknown) => code(e) === 'ERR_CRI_UNKNOWN');
    const rawCreate = h.client.createContainer.bind(h.client) as (req: unknown) => Promise<string>;
    await assert.rejects(rawCreate({ podSandboxId: id, sandboxConfig: sb }), /must include metadata/);
    await assert.rejects(h.client.createContainer({ podSandboxId: id, config: containerConfig('x', ['sh'], { image: { image: 'never-pulled:1' } }), sandboxConfig: sb }), (e) => isNotFound(e));
    await assert.rejects(h.client.startContainer('0123'), (e) => isNotFound(e));
    await assert.rejects(h.client.stopContainer('0123', 1), (e) => isNotFound(e));
    await assert.rejects(h.client.containerStatus(''), (e: unknown) => code(e) === 'ERR_CRI_UNKNOWN');
    await assert.rejects(h.client.runPodSandbox({ config: sandboxConfig(), runtimeHandler: 'kata' }), /no runtime for "kata"/);
    // the server is still healthy
    assert.equal((await h.client.version()).runtimeName, 'shardlet-sim');
  } finally {
    await h.close();
  }
});

test('images: pull, status (null when absent), list, remove (idempotent), fs info, pull failures', async () => {
  const h = await startHarness({ preloadImages: [] });
  try {
    assert.equal((await h.client.imageStatus({ image: 'alpine:3.19' })).image, null);
    const ref = await h.client.pullImage({ image: { image: 'alpine:3.19' } });
    assert.match(ref, /^sha256:[0-9a-f]{64}$/);
    const img = (await h.client.imageStatus({ image: 'docker.io/library/alpine:3.19' })).image;
    assert.equal(img?.id, ref);
    assert.deepEqual(img?.repoTags, ['docker.io/library/alpine:3.19']);
    assert.equal((await h.client.imageStatus({ image: ref })).image?.id, ref);
    assert.equal((await h.client.listImages()).length, 1);
    assert.equal((await h.client.imageFsInfo()).imageFilesystems.length, 1);
    await assert.rejects(h.client.pullImage({ image: { image: 'example.com/notfound:1' } }), (e: unknown) => code(e) === 'ERR_CRI_UNKNOWN' && /not found/.test((e as Error).message));
    await assert.rejects(h.client.pullImage({ image: { image: 'x:1', annotations: { 'sim.shardlet.io/pull-fail': 'true' } } }), (e: unknown) => code(e) === 'ERR_CRI_UNKNOWN');
    await h.client.removeImage({ image: 'alpine:3.19' });
    await h.client.removeImage({ image: 'alpine:3.19' });
    assert.deepEqual(await h.client.listImages(), []);
  } finally {
    await h.close();
  }
});

test('GetContainerEvents streams created/started/stopped/deleted in order', async () => {
  const h = await startHarness();
  try {
    const events: string[] = [];
    let wanted = Infinity;
    let gotAll: () => void = () => {};
    const allEvents = new Promise<void>((resolve) => (gotAll = resolve));
    const sub = subscribeContainerEvents(h.rt.endpoint, {
      onEvent: (ev) => {
        events.push(`${ev.containerEventType}:${ev.containerId.slice(0, 6)}`);
        if (events.length >= wanted) gotAll();
      },
      onError: (e) => assert.fail(e),
    });
    await within(h.rt.whenEventSubscribers(1), 'the events stream to be open');
    const { sandboxId, containerId } = await runPod(h, ['sleep', '1000']);
    await h.client.stopPodSandbox(sandboxId);
    await h.client.removePodSandbox(sandboxId);
    const s = sandboxId.slice(0, 6);
    const c = containerId.slice(0, 6);
    const want = [`CONTAINER_STARTED_EVENT:${s}`, `CONTAINER_CREATED_EVENT:${c}`, `CONTAINER_STARTED_EVENT:${c}`, `CONTAINER_STOPPED_EVENT:${c}`, `CONTAINER_STOPPED_EVENT:${s}`, `CONTAINER_DELETED_EVENT:${c}`, `CONTAINER_DELETED_EVENT:${s}`];
    wanted = want.length;
    if (events.length >= wanted) gotAll();
    await within(allEvents, `${want.length} events`);
    assert.deepEqual(events, want);
    sub.cancel();
    await within(h.rt.whenEventSubscribers(0), 'the events stream to be closed');
  } finally {
    await h.close();
  }
});

test('GetContainerEvents is UNIMPLEMENTED when disabled (containerd 1.6.20)', async () => {
  const h = await startHarness({ containerEvents: false });
  try {
    const err = await new Promise<Error>((resolve) => subscribeContainerEvents(h.rt.endpoint, { onEvent: () => {}, onError: resolve }));
    assert.equal(code(err), 'ERR_CRI_UNIMPLEMENTED');
  } finally {
    await h.close();
  }
});
