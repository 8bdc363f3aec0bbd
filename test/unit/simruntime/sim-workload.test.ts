import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { CriError } from '../../../src/shared/cri/cri-errors.js';
import { runPod, startHarness, track, type Harness } from './sim-harness.js';

const ns = (ms: number): string => String(BigInt(ms) * 1_000_000n);

async function status(h: Harness, id: string) {
  const st = (await h.client.containerStatus(id)).status;
  assert.ok(st);
  return st;
}

test('sleep 5 exits 0 ("Completed") after exactly 5 s of fake time', async () => {
  const h = await startHarness();
  try {
    const t0 = h.clock.now();
    const { containerId } = await runPod(h, ['sleep', '5']);
    h.clock.step(4999);
    assert.equal((await status(h, containerId)).state, 'CONTAINER_RUNNING');
    h.clock.step(1);
    const st = await status(h, containerId);
    assert.equal(st.state, 'CONTAINER_EXITED');
    assert.equal(st.exitCode, 0);
    assert.equal(st.reason, 'Completed');
    assert.equal(st.startedAt, ns(t0));
    assert.equal(st.finishedAt, ns(t0 + 5000));
  } finally {
    await h.close();
  }
});

test('sh -c "echo hi; exit 3": exit 3, reason Error, CRI log lines written', async () => {
  const h = await startHarness();
  try {
    const logDirectory = path.join(h.dir, 'pods', 'p1');
    const { containerId } = await runPod(h, ['sh', '-c', 'echo hi; echo oops >&2; sleep 1; echo -n tail; exit 3'], { logPath: 'app/0.log' }, { logDirectory });
    h.clock.step(1000);
    const st = await status(h, containerId);
    assert.equal(st.exitCode, 3);
    assert.equal(st.reason, 'Error');
    assert.equal(st.logPath, path.join(logDirectory, 'app/0.log'));
    const lines = fs.readFileSync(st.logPath, 'utf8').split('\n');
    const t0 = new Date(h.clock.now() - 1000).toISOString().replace('.000Z', 'Z');
    const t1 = new Date(h.clock.now()).toISOString().replace('.000Z', 'Z');
    assert.deepEqual(lines, [`${t0} stdout F hi`, `${t0} stderr F oops`, `${t1} stdout F tail`, '']);
  } finally {
    await h.close();
  }
});

test('StopContainer: SIGTERM ends a workload with 143; timeout 0 kills with 137; stop is idempotent', async () => {
  const h = await startHarness();
  try {
    const a = await runPod(h, ['sleep', '1000']);
    await h.client.stopContainer(a.containerId, 30);
    let st = await status(h, a.containerId);
    assert.equal(st.state, 'CONTAINER_EXITED');
    assert.equal(st.exitCode, 143);
    await h.client.stopContainer(a.containerId, 30); // already stopped: OK
    const b = await runPod(h, ['nginx', '-g', 'daemon off;'], { image: { image: 'nginx:1.25' } }); // opaque: runs until stopped
    h.clock.step(60_000);
    assert.equal((await status(h, b.containerId)).state, 'CONTAINER_RUNNING');
    await h.client.stopContainer(b.containerId, 0);
    st = await status(h, b.containerId);
    assert.equal(st.exitCode, 137);
  } finally {
    await h.close();
  }
});

test('ignore-sigterm: StopContainer SIGKILLs (137) only after the timeout', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000'], { annotations: { 'sim.shardlet.io/ignore-sigterm': 'true' } });
    const stopAt = h.clock.now();
    const stop = track(h.client.stopContainer(containerId, 2));
    await h.clock.whenPendingTimers(2); // the grace timer is armed (plus the sleep's exit)
    h.clock.step(1999);
    assert.equal((await status(h, containerId)).state, 'CONTAINER_RUNNING');
    assert.equal(stop.done(), false);
    h.clock.step(1);
    await stop.promise;
    const st = await status(h, containerId);
    assert.equal(st.exitCode, 137);
    assert.equal(st.finishedAt, ns(stopAt + 2000));
  } finally {
    await h.close();
  }
});

test('trap "" TERM in the script ignores SIGTERM too', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sh', '-c', 'trap "" TERM; sleep 100']);
    const stop = track(h.client.stopContainer(containerId, 1));
    await h.clock.whenPendingTimers(2);
    h.clock.step(1000);
    await stop.promise;
    assert.equal((await status(h, containerId)).exitCode, 137);
  } finally {
    await h.close();
  }
});

test('annotations: crash-after-ms + exit-code, oom-after-ms, start-fail; pod-level per-container keys', async () => {
  const h = await startHarness();
  try {
    const crash = await runPod(h, ['sleep', '1000'], { annotations: { 'sim.shardlet.io/crash-after-ms': '250', 'sim.shardlet.io/exit-code': '42' } });
    const oom = await runPod(h, ['sleep', '1000'], {}, { annotations: { 'sim.shardlet.io/oom-after-ms.app': '100' } });
    h.clock.step(250);
    let st = await status(h, crash.containerId);
    assert.deepEqual([st.state, st.exitCode, st.reason], ['CONTAINER_EXITED', 42, 'Error']);
    st = await status(h, oom.containerId);
    assert.deepEqual([st.exitCode, st.reason], [137, 'OOMKilled']);

    await assert.rejects(runPod(h, ['sleep', '1'], { annotations: { 'sim.shardlet.io/start-fail': 'true' } }), (e: unknown) => (e as CriError).code === 'ERR_CRI_UNKNOWN');
    const failed = (await h.client.listContainers({ state: { state: 'CONTAINER_EXITED' } })).find((c) => !c.id.startsWith(crash.containerId) && c.id !== oom.containerId);
    assert.ok(failed);
    st = await status(h, failed.id);
    assert.deepEqual([st.exitCode, st.reason, st.startedAt], [128, 'StartError', '0']);
  } finally {
    await h.close();
  }
});

test('image defaults: busybox without command runs sh (exits 0); a missing executable fails to start', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, undefined);
    h.clock.step(0);
    assert.deepEqual([(await status(h, containerId)).state, (await status(h, containerId)).exitCode], ['CONTAINER_EXITED', 0]);
    await assert.rejects(runPod(h, ['/nonexistent']), /executable file not found in \$PATH/);
    await assert.rejects(runPod(h, ['exit', '3']), /executable file not found in \$PATH/);
  } finally {
    await h.close();
  }
});

test('ExecSync: outputs and exit code in the response; not through a shell; timeout → DEADLINE_EXCEEDED', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    const r = await h.client.execSync({ containerId, cmd: ['sh', '-c', 'echo out; echo err >&2; exit 7'] });
    assert.equal(r.stdout.toString(), 'out\n');
    assert.equal(r.stderr.toString(), 'err\n');
    assert.equal(r.exitCode, 7);
    assert.equal((await h.client.execSync({ containerId, cmd: ['echo', 'hi'] })).stdout.toString(), 'hi\n');
    await assert.rejects(h.client.execSync({ containerId, cmd: ['/nonexistent'] }), (e: unknown) => (e as CriError).code === 'ERR_CRI_UNKNOWN' && /executable file not found/.test((e as Error).message));
    const slow = track(h.client.execSync({ containerId, cmd: ['sleep', '3'], timeout: 1 }));
    await h.clock.whenPendingTimers(2);
    h.clock.step(1000);
    await assert.rejects(slow.promise, (e: unknown) => (e as CriError).code === 'ERR_CRI_DEADLINE_EXCEEDED');
    const ok = track(h.client.execSync({ containerId, cmd: ['sleep', '2'], timeout: 5 }));
    await h.clock.whenPendingTimers(2);
    h.clock.step(1999);
    await new Promise<void>((r) => setImmediate(r));
    assert.equal(ok.done(), false);
    h.clock.step(1);
    assert.equal((await ok.promise).exitCode, 0);
    await h.client.stopContainer(containerId, 0);
    await assert.rejects(h.client.execSync({ containerId, cmd: ['sh', '-c', 'true'] }), /CONTAINER_EXITED state/);
  } finally {
    await h.close();
  }
});

test('stats: running containers and ready sandboxes report plausible numbers', async () => {
  const h = await startHarness();
  try {
    const { sandboxId, containerId } = await runPod(h, ['sleep', '1000']);
    h.clock.step(10_000);
    const [cs] = await h.client.listContainerStats();
    assert.equal(cs?.attributes?.id, containerId);
    assert.equal(cs?.cpu?.usageCoreNanoSeconds?.value, String(10_000 * 2_000));
    assert.ok(Number(cs?.memory?.workingSetBytes?.value) >= 1024 * 1024);
    const [ps] = await h.client.listPodSandboxStats();
    assert.equal(ps?.attributes?.id, sandboxId);
  } finally {
    await h.close();
  }
});
