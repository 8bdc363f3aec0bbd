/**
 * Contract section: the sandbox and container state machines as the agent observes them.
 *
 *   sandbox:   RunPodSandbox → READY → StopPodSandbox → NOTREADY → RemovePodSandbox → NotFound
 *   container: CreateContainer → CREATED → StartContainer → RUNNING → (exit | StopContainer)
 *              → EXITED (exitCode, reason) → RemoveContainer → NotFound
 *
 * Values asserted are containerd 1.6.20's: reason "Completed" for exit 0 and "Error" otherwise;
 * StopContainer sends SIGTERM (busybox `sleep` exits 143) and SIGKILL after the grace period
 * (137); a failed start is EXITED/128/"StartError" with startedAt 0; timestamps are int64
 * nanoseconds since the epoch, 0 meaning "not yet" (and finishedAt may trail startedAt by
 * under a millisecond for a process that exits at once: see QUICK_EXIT_SLACK_NS).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { it } from 'node:test';
import type { ContractContextRef } from './cri-contract.js';
import { BUSYBOX_IMAGE, containerConfig, nowNs, ns, rejectionOf, runPod, startContainer, uniqueName, waitContainerState } from './cri-contract-fixtures.js';

/** A 19-digit decimal: nanoseconds since the epoch in this century. */
const NANOS = /^\d{19}$/;

/**
 * containerd 1.6 records startedAt itself after the task's Start returns, but finishedAt comes
 * from the shim's exit event: for a process that exits at once, finishedAt can precede startedAt
 * (measured: by up to ~0.5 ms in 3 of 10 runs). The contract is therefore createdAt ≤ startedAt
 * and finishedAt ≥ startedAt − this slack; consumers must not assume a non-negative run time.
 */
const QUICK_EXIT_SLACK_NS = 10_000_000n;

function assertTimestampOrder(st: { createdAt: string; startedAt: string; finishedAt: string }): void {
  assert.match(st.finishedAt, NANOS);
  assert.ok(ns(st.createdAt) <= ns(st.startedAt), `createdAt ${st.createdAt} > startedAt ${st.startedAt}`);
  assert.ok(ns(st.finishedAt) >= ns(st.startedAt) - QUICK_EXIT_SLACK_NS, `finishedAt ${st.finishedAt} ≪ startedAt ${st.startedAt}`);
}

export function defineLifecycleContract(ref: ContractContextRef): void {
  it('sandbox lifecycle: READY with metadata/labels/annotations and a ns createdAt, NOTREADY after stop, NotFound after remove', async () => {
    const { rt, logDir } = ref();
    const name = uniqueName('sb-life');
    const t0 = nowNs();
    const pod = await runPod(rt, name, { logDirectory: logDir, labels: { tier: 'contract' }, annotations: { note: 'kept verbatim' } });
    const t1 = nowNs();
    assert.match(pod.sandboxId, /^[0-9a-f]{64}$/);
    const st = (await rt.podSandboxStatus(pod.sandboxId)).status;
    assert.ok(st);
    assert.equal(st.id, pod.sandboxId);
    assert.equal(st.state, 'SANDBOX_READY');
    assert.deepEqual(st.metadata, pod.config.metadata);
    assert.deepEqual(st.labels, pod.config.labels);
    assert.deepEqual(st.annotations, pod.config.annotations);
    assert.match(st.createdAt, NANOS);
    assert.ok(ns(st.createdAt) >= t0 - 1_000_000_000n && ns(st.createdAt) <= t1, `createdAt ${st.createdAt} outside [${t0}, ${t1}]`);
    assert.equal(st.network?.ip, '', 'host-network sandboxes report no pod IP');

    await rt.stopPodSandbox(pod.sandboxId);
    const stopped = (await rt.podSandboxStatus(pod.sandboxId)).status;
    assert.equal(stopped?.state, 'SANDBOX_NOTREADY');
    assert.equal(stopped?.createdAt, st.createdAt);

    await rt.removePodSandbox(pod.sandboxId);
    assert.equal((await rejectionOf(rt.podSandboxStatus(pod.sandboxId))).code, 'ERR_CRI_NOT_FOUND');
    assert.deepEqual(await rt.listPodSandbox({ id: pod.sandboxId }), []);
  });

  it('container lifecycle: CREATED → RUNNING → EXITED (SIGKILL at timeout 0: 137 "Error") → removed, with ordered ns timestamps', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('ctr-life'), { logDirectory: logDir });
    const config = containerConfig('main', ['sleep', '1000'], { labels: { role: 'main' } });
    const t0 = nowNs();
    const id = await rt.createContainer({ podSandboxId: pod.sandboxId, config, sandboxConfig: pod.config });
    assert.match(id, /^[0-9a-f]{64}$/);

    const created = (await rt.containerStatus(id)).status;
    assert.ok(created);
    assert.equal(created.state, 'CONTAINER_CREATED');
    assert.match(created.createdAt, NANOS);
    assert.ok(ns(created.createdAt) >= t0 - 1_000_000_000n);
    assert.equal(created.startedAt, '0');
    assert.equal(created.finishedAt, '0');
    assert.equal(created.exitCode, 0);
    assert.equal(created.reason, '');
    assert.deepEqual(created.metadata, config.metadata);
    assert.equal(created.image?.image, BUSYBOX_IMAGE);
    assert.deepEqual(created.labels, config.labels);
    assert.equal(created.logPath, path.join(logDir, config.logPath ?? ''));
    const image = (await rt.imageStatus({ image: BUSYBOX_IMAGE })).image;
    assert.equal(created.imageRef, image?.id, 'imageRef is the image id');

    await rt.startContainer(id);
    const running = (await rt.containerStatus(id)).status;
    assert.equal(running?.state, 'CONTAINER_RUNNING');
    assert.match(running?.startedAt ?? '', NANOS);
    assert.ok(ns(running?.startedAt ?? '0') >= ns(created.createdAt));
    assert.equal(running?.finishedAt, '0');

    await rt.stopContainer(id, 0);
    const exited = (await rt.containerStatus(id)).status;
    assert.ok(exited);
    assert.equal(exited.state, 'CONTAINER_EXITED', 'StopContainer returns only once the container has exited');
    assert.equal(exited.exitCode, 137);
    assert.equal(exited.reason, 'Error');
    assert.match(exited.finishedAt, NANOS);
    assert.ok(ns(exited.finishedAt) >= ns(exited.startedAt));
    assert.ok(ns(exited.finishedAt) <= nowNs());
    assert.equal(exited.startedAt, running?.startedAt);
    assert.equal(exited.createdAt, created.createdAt);

    await rt.removeContainer(id);
    assert.equal((await rejectionOf(rt.containerStatus(id))).code, 'ERR_CRI_NOT_FOUND');
    assert.deepEqual(await rt.listContainers({ id }), []);
  });

  it('exit codes and reasons: `sh -c "exit 3"` → 3 "Error"; `true` → 0 "Completed"', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('exits'), { logDirectory: logDir });
    const failing = await startContainer(rt, pod, containerConfig('fail', ['sh', '-c', 'exit 3']));
    const ok = await startContainer(rt, pod, containerConfig('ok', ['true']));
    const f = await waitContainerState(rt, failing, 'CONTAINER_EXITED');
    assert.equal(f.exitCode, 3);
    assert.equal(f.reason, 'Error');
    assertTimestampOrder(f);
    const o = await waitContainerState(rt, ok, 'CONTAINER_EXITED');
    assert.equal(o.exitCode, 0);
    assert.equal(o.reason, 'Completed');
    assert.equal(o.message, '');
    assertTimestampOrder(o);
  });

  it('StopContainer sends SIGTERM first: `sleep 1000` with timeout 2 exits 143 "Error" well before the grace period ends', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('sigterm'), { logDirectory: logDir });
    const id = await startContainer(rt, pod, containerConfig('sleeper', ['sleep', '1000']));
    const began = performance.now();
    await rt.stopContainer(id, 2);
    const tookMs = performance.now() - began;
    const st = (await rt.containerStatus(id)).status;
    assert.equal(st?.state, 'CONTAINER_EXITED');
    assert.equal(st?.exitCode, 143);
    assert.equal(st?.reason, 'Error');
    assert.ok(tookMs < 1_900, `SIGTERM should end sleep at once, StopContainer took ${tookMs.toFixed(0)} ms`);
  });

  it('StopContainer escalates to SIGKILL after the grace period when SIGTERM is ignored (137)', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('sigkill'), { logDirectory: logDir });
    const id = await startContainer(rt, pod, containerConfig('stubborn', ['sh', '-c', 'trap "" TERM; sleep 1000']));
    const began = performance.now();
    await rt.stopContainer(id, 1);
    const tookMs = performance.now() - began;
    const st = (await rt.containerStatus(id)).status;
    assert.equal(st?.state, 'CONTAINER_EXITED');
    assert.equal(st?.exitCode, 137);
    assert.equal(st?.reason, 'Error');
    assert.ok(tookMs >= 950, `the grace period (1 s) must be honoured, StopContainer took ${tookMs.toFixed(0)} ms`);
  });

  it('in its own PID namespace `sleep` is PID 1: SIGTERM is dropped, SIGKILL at the timeout ends it (137)', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('pid1'), { logDirectory: logDir });
    const id = await startContainer(rt, pod, containerConfig('pid1', ['sleep', '1000'], { pidNamespace: 'CONTAINER' }));
    const began = performance.now();
    await rt.stopContainer(id, 1);
    const tookMs = performance.now() - began;
    const st = (await rt.containerStatus(id)).status;
    assert.equal(st?.exitCode, 137);
    assert.ok(tookMs >= 950, `PID 1 ignores SIGTERM: the 1 s grace period must run out, StopContainer took ${tookMs.toFixed(0)} ms`);
  });

  it('a start failure (missing executable): StartContainer rejects; status EXITED, 128, "StartError", startedAt 0, message set', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('starterr'), { logDirectory: logDir });
    const id = await rt.createContainer({ podSandboxId: pod.sandboxId, config: containerConfig('bad', ['/nonexistent']), sandboxConfig: pod.config });
    assert.equal((await rejectionOf(rt.startContainer(id))).code, 'ERR_CRI_UNKNOWN');
    const st = (await rt.containerStatus(id)).status;
    assert.equal(st?.state, 'CONTAINER_EXITED');
    assert.equal(st?.exitCode, 128);
    assert.equal(st?.reason, 'StartError');
    assert.equal(st?.startedAt, '0');
    assert.match(st?.finishedAt ?? '', NANOS);
    assert.notEqual(st?.message, '');
  });

  it('StartContainer on a running container fails (UNKNOWN) and leaves it running', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('start2'), { logDirectory: logDir });
    const id = await startContainer(rt, pod, containerConfig('once', ['sleep', '1000']));
    assert.equal((await rejectionOf(rt.startContainer(id))).code, 'ERR_CRI_UNKNOWN');
    assert.equal((await rt.containerStatus(id)).status?.state, 'CONTAINER_RUNNING');
  });

  it('StopPodSandbox kills its containers (137 "Error"); no new containers in a stopped sandbox (NotFound)', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('sbstop'), { logDirectory: logDir });
    const id = await startContainer(rt, pod, containerConfig('victim', ['sleep', '1000']));
    await rt.stopPodSandbox(pod.sandboxId);
    const st = (await rt.containerStatus(id)).status;
    assert.equal(st?.state, 'CONTAINER_EXITED');
    assert.equal(st?.exitCode, 137);
    assert.equal(st?.reason, 'Error');
    const late = rt.createContainer({ podSandboxId: pod.sandboxId, config: containerConfig('late', ['true']), sandboxConfig: pod.config });
    assert.equal((await rejectionOf(late)).code, 'ERR_CRI_NOT_FOUND');
  });
}
