/**
 * The post-sync status a pod worker publishes without re-reading (workers/kuberuntime/
 * post-sync-status.ts) against what a re-read of the simulated runtime says (getPodStatus, the
 * refresher's fallback), over real gRPC; and the CRI calls of the create path, counted by the
 * runtime itself (Status verbose op counts, what the bench reports).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../src/shared/clock/fake-clock.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { silentLogger } from '../../src/shared/logging/logger.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { SimulatedRuntime } from '../../src/simruntime/simulated-runtime.js';
import { KubeRuntimeSyncer } from '../../workers/kuberuntime/kuberuntime-syncer.js';
import { getPodStatus } from '../../workers/runtime-status/get-pod-status.js';
import { opCountsBetween, readOpCounts, type OpCounts } from '../../bench/runtime-op-counts.js';

function pod(name: string, containers: V1Container[], hostNetwork = false): V1Pod {
  return { metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { restartPolicy: 'Always', hostNetwork, containers } };
}

/** The status without what only the runtime's own clock says (the derived one uses the agent's). */
function comparable(s: RuntimePodStatus): unknown {
  return {
    ...s,
    sandboxes: s.sandboxes.map((x) => ({ ...x, createdAtNs: x.hostNetwork ? '-' : x.createdAtNs })),
    containers: s.containers.map((c) => ({ ...c, createdAtNs: '-', startedAtNs: c.startedAtNs === '0' ? '0' : 'set' })),
  };
}

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'post-sync-sim-'));
  const clock = new FakeClock();
  const sim = await SimulatedRuntime.start({ socketPath: path.join(dir, 'cri.sock'), clock, preloadImages: ['busybox:1.36'] });
  const client = new CriClient({ endpoint: sim.endpoint, timeoutMs: 10_000 });
  const syncer = new KubeRuntimeSyncer({
    runtime: client, images: client, clock, random: () => 0, logger: silentLogger,
    podLogsDir: path.join(dir, 'pods'), nodeName: 'node-1', hostIP: '192.168.1.10',
  });
  t.after(async () => {
    client.close();
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const reread = (p: V1Pod): Promise<RuntimePodStatus> => getPodStatus(client, p.metadata!.uid!, p.metadata!.name!, 'default');
  const sync = async (p: V1Pod, runtimeStatus?: RuntimePodStatus) =>
    syncer.syncPod({ updateType: 'create', pod: p, runtimeStatus: runtimeStatus ?? (await reread(p)), signal: new AbortController().signal });
  const counts = async (): Promise<OpCounts> => {
    const c = await readOpCounts(client);
    assert.ok(c, 'the sim runtime reports its op counts');
    return c;
  };
  return { client, reread, sync, counts };
}

test('sim: the post-sync status derived from the create path answers equals a re-read (but for the runtime clock stamps)', async (t) => {
  const h = await setup(t);
  const pods = [
    pod('one', [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000'] }]),
    pod('two', [{ name: 'a', image: 'busybox:1.36', command: ['sleep', '1000'] }, { name: 'b', image: 'busybox:1.36', command: ['sleep', '1000'] }]),
    pod('host', [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000'] }], true),
  ];
  for (const p of pods) {
    const out = await h.sync(p);
    assert.equal(out.error, undefined);
    assert.ok(out.runtimeAfter, `${p.metadata!.name}: derived`);
    assert.deepEqual(comparable(out.runtimeAfter), comparable(await h.reread(p)), p.metadata!.name);
  }
});

test('sim: a started pod costs 4 CRI calls (RunPodSandbox, PodSandboxStatus, CreateContainer, StartContainer) once the image is known', async (t) => {
  const h = await setup(t);
  await h.sync(pod('first', [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000'] }]));
  const p = pod('second', [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000'] }]);
  const status = await h.reread(p); // what the PLEG's cache hands the worker (not counted)
  const before = await h.counts();
  const out = await h.sync(p, status); // same syncer: its image view saw busybox:1.36 with the first pod
  const calls = opCountsBetween(before, await h.counts());
  assert.ok(out.runtimeAfter, 'no re-read needed after the sync');
  assert.deepEqual(calls, { RunPodSandbox: 1, PodSandboxStatus: 1, CreateContainer: 1, StartContainer: 1 });
});

test('sim: with an image pulled or an error, the status is re-read (not derived)', async (t) => {
  const h = await setup(t);
  const pulled = await h.sync(pod('pull', [{ name: 'app', image: 'nginx:1', command: ['sleep', '1000'] }]));
  assert.equal(pulled.error, undefined);
  assert.equal(pulled.runtimeAfter, undefined, 'PullImage tells only the id: re-read');
  const never = await h.sync(pod('never', [{ name: 'app', image: 'absent:1', imagePullPolicy: 'Never', command: ['sleep', '1000'] }]));
  assert.equal(never.error?.code !== undefined, true, 'ErrImageNeverPull');
  assert.equal(never.runtimeChanged, true, 'the sandbox was created');
  assert.equal(never.runtimeAfter, undefined, 'a failed start: re-read');
});
