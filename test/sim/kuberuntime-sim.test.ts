/**
 * Scenario tests: KubeRuntimeSyncer against the in-process simulated runtime (real gRPC over a
 * unix socket, FakeClock shared by the sim and the syncer). Between syncs the test reads the
 * pod's runtime status from CRI the way a PLEG relist would.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { FakeClock } from '../../src/shared/clock/fake-clock.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { silentLogger } from '../../src/shared/logging/logger.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { SimulatedRuntime } from '../../src/simruntime/simulated-runtime.js';
import { KubeRuntimeSyncer } from '../../workers/kuberuntime/kuberuntime-syncer.js';
import type { SyncPodOutcome } from '../../workers/pod-sync.js';
import { relist } from './cri-relist.js';

interface SimHarness {
  clock: FakeClock;
  client: CriClient;
  syncer: KubeRuntimeSyncer;
  logsDir: string;
  status(uid: string): Promise<RuntimePodStatus>;
  sync(pod: V1Pod): Promise<SyncPodOutcome>;
  close(): Promise<void>;
}

async function startSim(): Promise<SimHarness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kuberuntime-sim-'));
  const clock = new FakeClock();
  const sim = await SimulatedRuntime.start({ socketPath: path.join(dir, 'cri.sock'), clock, preloadImages: ['busybox:1.36'] });
  const client = new CriClient({ endpoint: sim.endpoint, timeoutMs: 10_000 });
  const logsDir = path.join(dir, 'pods');
  const syncer = new KubeRuntimeSyncer({
    runtime: client, images: client, clock, random: () => 0, logger: silentLogger,
    podLogsDir: logsDir, nodeName: 'node-1', hostIP: '192.168.1.10',
  });
  const status = (uid: string): Promise<RuntimePodStatus> => relist(client, uid);
  return {
    clock, client, syncer, logsDir, status,
    sync: async (pod) => syncer.syncPod({ updateType: 'sync', pod, runtimeStatus: await status(pod.metadata!.uid!), signal: new AbortController().signal }),
    async close() {
      client.close();
      await sim.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pod(name: string, spec: Partial<V1PodSpec> & { containers: V1Container[] }, annotations: Record<string, string> = {}): V1Pod {
  return { metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations }, spec: { restartPolicy: 'Always', ...spec } };
}

const line = (o: SyncPodOutcome): string =>
  [o.apiStatus.phase, ...[...(o.apiStatus.initContainerStatuses ?? []), ...(o.apiStatus.containerStatuses ?? [])].map((c) => {
    const s = c.state;
    return `${c.name}=${s?.running ? 'running' : s?.terminated ? `terminated:${s.terminated.reason}:${s.terminated.exitCode}` : `waiting:${s?.waiting?.reason}`}/r${c.restartCount}`;
  })].join(' ');

test('sim: init container then app; Running with the sim pod IP; terminate with preStop; cleanup removes logs', async (t) => {
  const h = await startSim();
  t.after(() => h.close());
  const p = pod('web', {
    terminationGracePeriodSeconds: 10,
    // A shared PID namespace: `sleep` is not PID 1, so SIGTERM ends it (143), as on containerd.
    shareProcessNamespace: true,
    initContainers: [{ name: 'init', image: 'busybox:1.36', command: ['sh', '-c', 'sleep 2'] }],
    containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '100000'], lifecycle: { preStop: { exec: { command: ['sh', '-c', 'sleep 3'] } } } }],
  });
  const seen = [line(await h.sync(p))];
  h.clock.step(2_000); // the init container finishes
  seen.push(line(await h.sync(p)));
  const running = await h.sync(p);
  seen.push(line(running));
  assert.deepEqual(seen, [
    'Pending init=waiting:PodInitializing/r0 app=waiting:PodInitializing/r0',
    'Pending init=terminated:Completed:0/r0 app=waiting:PodInitializing/r0',
    'Running init=terminated:Completed:0/r0 app=running/r0',
  ]);
  assert.match(running.apiStatus.podIP ?? '', /^\d+\.\d+\.\d+\.\d+$/);
  assert.ok(fs.existsSync(path.join(h.logsDir, 'default_web_uid-web')), 'pod log directory exists');

  const began = h.clock.now();
  let done = false;
  const term = h.syncer.terminatePod({ pod: p, runtimeStatus: await h.status('uid-web'), gracePeriodSeconds: 10, signal: new AbortController().signal }).finally(() => (done = true));
  assert.equal(await h.clock.runUntil(() => done, { stepMs: 250, maxMs: 30_000 }), true);
  const out = await term;
  assert.equal(out.error, undefined);
  assert.ok(h.clock.now() - began >= 3_000, 'the preStop hook ran for its 3 s');
  assert.equal(out.apiStatus.phase, 'Failed', 'sleep ends on SIGTERM with 143');
  const app = out.apiStatus.containerStatuses![0]!;
  assert.equal(app.state?.terminated?.exitCode, 143);

  const res = await h.syncer.cleanupPod({ pod: p, runtimeStatus: await h.status('uid-web'), signal: new AbortController().signal });
  assert.deepEqual(res, {});
  const after = await h.status('uid-web');
  assert.equal(after.containers.length + after.sandboxes.length, 0);
  assert.equal(fs.existsSync(path.join(h.logsDir, 'default_web_uid-web')), false);
});

test('sim: a crashing container goes through CrashLoopBackOff 10s, 20s with restart counts', async (t) => {
  const h = await startSim();
  t.after(() => h.close());
  const p = pod('crash', { containers: [{ name: 'app', image: 'busybox:1.36', command: ['sh', '-c', 'sleep 1; exit 2'] }] });
  await h.sync(p);
  const seen: string[] = [];
  for (const delay of [0, 10_000, 20_000]) {
    h.clock.step(1_000); // the process exits
    const out = await h.sync(p);
    seen.push(`${line(out)} requeue=${out.requeueAfterMs ?? '-'}`);
    if (delay > 0) {
      h.clock.step(delay);
      await h.sync(p);
    }
  }
  assert.deepEqual(seen, [
    'Running app=terminated:Error:2/r0 requeue=-', // restarted at once; the status is of the relist before it
    'Running app=waiting:CrashLoopBackOff/r1 requeue=10000',
    'Running app=waiting:CrashLoopBackOff/r2 requeue=20000',
  ]);
  const st = await h.status('uid-crash');
  assert.equal(st.containers[0]!.state, 'CONTAINER_RUNNING');
  assert.equal(st.containers[0]!.restartCount, 3);
  assert.ok(st.containers.filter((c) => c.state === 'CONTAINER_EXITED').length <= 1, 'dead instances pruned');
});

test('sim: pull failure shows ErrImagePull then ImagePullBackOff; Never pod completes Succeeded', async (t) => {
  const h = await startSim();
  t.after(() => h.close());
  const bad = pod('bad', { containers: [{ name: 'app', image: 'example.com/missing:1', command: ['sleep', '10'] }] }, { 'sim.shardlet.io/pull-fail': 'true' });
  const first = await h.sync(bad);
  assert.equal(line(first), 'Pending app=waiting:ErrImagePull/r0');
  assert.equal(first.error?.code, 'ERR_IMAGE_PULL');
  h.clock.step(1_000);
  assert.equal(line(await h.sync(bad)), 'Pending app=waiting:ImagePullBackOff/r0');

  const job = pod('job', { restartPolicy: 'Never', containers: [{ name: 'app', image: 'busybox:1.36', command: ['sh', '-c', 'sleep 1; exit 0'] }] });
  await h.sync(job);
  h.clock.step(1_000);
  const done = await h.sync(job);
  assert.equal(done.isTerminal, true);
  assert.equal(line(done), 'Succeeded app=terminated:Completed:0/r0');
});
