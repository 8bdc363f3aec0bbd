import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CriClient } from '../../../src/shared/cri/cri-client.js';
import { isDeadlineExceeded, isUnavailable } from '../../../src/shared/cri/cri-errors.js';
import { FaultConfigError } from '../../../src/simruntime/sim-faults.js';
import { SimulatedRuntime } from '../../../src/simruntime/simulated-runtime.js';
import { containerConfig, runPod, sandboxConfig, startHarness } from './sim-harness.js';

/** A Random that replays `values` in a loop. */
const scripted = (values: number[]) => {
  let i = 0;
  return () => values[i++ % values.length] as number;
};

test('faults: UNAVAILABLE before effect, DEADLINE_EXCEEDED after effect, limited to chosen methods', async () => {
  const h = await startHarness({ random: scripted([0.05]) });
  try {
    h.rt.setFaults({ unavailableRate: 0.1, methods: ['RunPodSandbox'] });
    const cfg = sandboxConfig({ name: 'f1' });
    await assert.rejects(h.client.runPodSandbox({ config: cfg }), (e) => isUnavailable(e));
    assert.deepEqual(await h.client.listPodSandbox(), []); // no effect
    assert.equal((await h.client.version()).runtimeName, 'shardlet-sim'); // other methods unaffected

    h.rt.setFaults({ deadlineRate: 0.1, methods: ['RunPodSandbox'] });
    await assert.rejects(h.client.runPodSandbox({ config: cfg }), (e) => isDeadlineExceeded(e));
    assert.equal((await h.client.listPodSandbox()).length, 1); // it took effect
    h.rt.setFaults({});
    await assert.rejects(h.client.runPodSandbox({ config: cfg }), /is reserved for/); // the retry meets the reservation
    assert.throws(() => h.rt.setFaults({ hangRate: 2 }), FaultConfigError);
  } finally {
    await h.close();
  }
});

test('faults: a hung call never answers until the client deadline', async () => {
  const h = await startHarness({ random: scripted([0.5]), faults: { hangRate: 1, methods: ['ListContainers'] } });
  try {
    const short = new CriClient({ endpoint: h.rt.endpoint, timeoutMs: 300 });
    try {
      await assert.rejects(short.listContainers(), (e) => isDeadlineExceeded(e));
      assert.equal((await short.version()).runtimeApiVersion, 'v1');
    } finally {
      short.close();
    }
  } finally {
    await h.close();
  }
});

test('restart keeping state: sandboxes, containers, images and running workloads come back', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simrt-state-'));
  const statePath = path.join(dir, 'state.json');
  const clock = new FakeClock();
  const h = await startHarness({ clock, statePath, stateSaveIntervalMs: 0 });
  try {
    const { sandboxId, containerId } = await runPod(h, ['sleep', '100']);
    const opaque = await runPod(h, ['nginx'], { image: { image: 'nginx:1.25' } });
    const ip = (await h.client.podSandboxStatus(sandboxId)).status?.network?.ip;
    clock.step(30_000);
    await h.close(); // graceful: saves
    clock.step(20_000); // "down" for 20 s

    const h2 = await startHarness({ clock, statePath, preloadImages: [] });
    try {
      const sb = (await h2.client.podSandboxStatus(sandboxId)).status;
      assert.equal(sb?.state, 'SANDBOX_READY');
      assert.equal(sb?.network?.ip, ip);
      assert.equal((await h2.client.containerStatus(containerId)).status?.state, 'CONTAINER_RUNNING');
      assert.equal((await h2.client.listImages()).length, 3);
      // 50 s of the 100 s sleep are left
      clock.step(49_999);
      assert.equal((await h2.client.containerStatus(containerId)).status?.state, 'CONTAINER_RUNNING');
      clock.step(1);
      const st = (await h2.client.containerStatus(containerId)).status;
      assert.equal(st?.state, 'CONTAINER_EXITED');
      assert.equal(st?.exitCode, 0);
      assert.equal((await h2.client.containerStatus(opaque.containerId)).status?.state, 'CONTAINER_RUNNING');
      // names stay reserved across the restart
      await assert.rejects(h2.client.createContainer({ podSandboxId: sandboxId, config: containerConfig('app', ['sh']), sandboxConfig: opaque.sandbox }), /is reserved for|failed to reserve/);
    } finally {
      await h2.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('restart dropping state: a crash before any save comes back empty; a workload that ended while down exits at its time', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simrt-state-'));
  const statePath = path.join(dir, 'state.json');
  const clock = new FakeClock();
  try {
    const rt = await SimulatedRuntime.start({ socketPath: path.join(dir, 'a.sock'), clock, statePath, stateSaveIntervalMs: 0, preloadImages: ['busybox'] });
    const client = new CriClient({ endpoint: rt.endpoint });
    const cfg = sandboxConfig();
    const sb = await client.runPodSandbox({ config: cfg });
    const t0 = clock.now();
    const c = await client.createContainer({ podSandboxId: sb, config: containerConfig('app', ['sleep', '10']), sandboxConfig: cfg });
    await client.startContainer(c);
    rt.saveState();
    await client.runPodSandbox({ config: sandboxConfig() }); // after the save: lost in the crash
    client.close();
    rt.destroy();
    assert.equal(fs.existsSync(path.join(dir, 'a.sock')), false);
    clock.step(60_000);

    const rt2 = await SimulatedRuntime.start({ socketPath: path.join(dir, 'a.sock'), clock, statePath });
    const client2 = new CriClient({ endpoint: rt2.endpoint });
    try {
      assert.equal((await client2.listPodSandbox()).length, 1);
      clock.step(0);
      const st = (await client2.containerStatus(c)).status;
      assert.equal(st?.state, 'CONTAINER_EXITED');
      assert.equal(st?.finishedAt, String(BigInt(t0 + 10_000) * 1_000_000n));
    } finally {
      client2.close();
      rt2.destroy();
    }
    const rt3 = await SimulatedRuntime.start({ socketPath: path.join(dir, 'a.sock'), clock }); // no state file: empty
    const client3 = new CriClient({ endpoint: rt3.endpoint });
    try {
      assert.deepEqual(await client3.listPodSandbox(), []);
    } finally {
      client3.close();
      await rt3.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
