/**
 * The pod cgroup and oom_score_adj through the syncer the pod workers run (the product's wiring:
 * KubeRuntimeSyncer deps podCgroups + memoryCapacityBytes, as pod-worker-factory.ts builds them):
 * the cgroup exists before RunPodSandbox, the sandbox names it as cgroupParent, containers get
 * the QoS oom_score_adj, a cgroup that cannot be made stops the sandbox with the kubelet's
 * message, and cleanupPod removes it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CgroupfsManager } from '../../../src/shared/cgroups/cgroupfs-manager.js';
import type { CgroupManager } from '../../../src/shared/cgroups/cgroup-manager.js';
import { PodCgroups } from '../../../workers/cgroups/pod-cgroups.js';
import { TempCgroupFs } from '../cgroups/temp-cgroup-fs.js';
import { container, makeHarness, makePod } from './kuberuntime-harness.js';

const GiB = 1024 ** 3;
const UID = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';

function setup(t: { after(fn: () => void): void }, version: 'v1' | 'v2' = 'v2', removeAttempts = 5) {
  const fs = new TempCgroupFs(version);
  t.after(() => fs.remove());
  const calls: string[] = [];
  const real = new CgroupfsManager({ fs, layout: fs.layout });
  // Records the cgroup steps in the fake runtime's call log, so their order against CRI calls shows.
  const manager: CgroupManager = {
    writesHost: true,
    name: (n) => real.name(n),
    exists: (n) => real.exists(n),
    children: (n) => real.children(n),
    update: (n, r) => real.update(n, r),
    create: async (n, r) => (calls.push(`cgroup create ${real.name(n)}`), real.create(n, r)),
    destroy: async (n) => (calls.push(`cgroup destroy ${real.name(n)}`), real.destroy(n)),
  };
  const h = makeHarness({ podCgroups: new PodCgroups({ manager, root: [], clock: new FakeClock(0), removeAttempts }), memoryCapacityBytes: 8 * GiB });
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  return { fs, h, calls };
}

test('burstable pod: cgroup before RunPodSandbox, cgroupParent, limits, oom_score_adj; cleanup removes it', async (t) => {
  const { fs, h, calls } = setup(t);
  const pod = makePod({ containers: [container('app', { resources: { requests: { cpu: '250m', memory: '1Gi' }, limits: { memory: '2Gi' } } })] }, { uid: UID });
  const order: string[] = [];
  const sandboxCreated = h.rt.waitForCall('RunPodSandbox').then(() => order.push(`RunPodSandbox after ${calls.join(',')}`));
  const out = await h.sync(pod);
  await sandboxCreated;
  assert.equal(out.error, undefined);
  assert.deepEqual(order, [`RunPodSandbox after cgroup create /kubepods/burstable/pod${UID}`]);
  assert.equal(h.rt.sandboxConfigs()[0]?.linux?.cgroupParent, `/kubepods/burstable/pod${UID}`);
  assert.equal(fs.read(`kubepods/burstable/pod${UID}/cpu.weight`), '10');
  assert.equal(fs.read(`kubepods/burstable/pod${UID}/memory.max`), String(2 * GiB));
  assert.equal(fs.has(`kubepods/burstable/pod${UID}/cpu.max`), false, 'no cpu limit declared: no quota');
  assert.equal(h.rt.lastConfigOf('app').linux?.resources?.oomScoreAdj, 875, '1000 - 1000*1Gi/8Gi');
  assert.equal(out.apiStatus.qosClass, 'Burstable');

  await h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus(UID), gracePeriodSeconds: 1, signal: new AbortController().signal });
  calls.length = 0;
  assert.deepEqual(await h.syncer.cleanupPod({ pod, runtimeStatus: h.rt.podStatus(UID), signal: new AbortController().signal }), {});
  assert.deepEqual(calls, [`cgroup destroy /kubepods/pod${UID}`, `cgroup destroy /kubepods/burstable/pod${UID}`, `cgroup destroy /kubepods/besteffort/pod${UID}`]);
  assert.equal(fs.has(`kubepods/burstable/pod${UID}`), false);
  assert.equal(fs.has('kubepods/burstable'), true);
});

test('guaranteed and besteffort pods: their QoS parents and oom_score_adj', async (t) => {
  const { h } = setup(t, 'v1');
  const g = makePod({ containers: [container('app', { resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } })] }, { name: 'g', uid: 'g1' });
  await h.sync(g);
  assert.equal(h.rt.sandboxConfigs()[0]?.linux?.cgroupParent, '/kubepods/podg1');
  assert.equal(h.rt.lastConfigOf('app').linux?.resources?.oomScoreAdj, -997);
  const be = makePod({ containers: [container('be')] }, { name: 'be', uid: 'be1' });
  await h.sync(be);
  assert.equal(h.rt.sandboxConfigs()[1]?.linux?.cgroupParent, '/kubepods/besteffort/podbe1');
  assert.equal(h.rt.lastConfigOf('be').linux?.resources?.oomScoreAdj, 1000);
});

test('a pod cgroup that cannot be made: no sandbox, the kubelet\'s message, retried next sync', async (t) => {
  const { fs, h } = setup(t);
  const pod = makePod({ containers: [container('app')] }, { uid: UID });
  fs.fail('mkdir', `pod${UID}`, 'EACCES');
  const out = await h.sync(pod);
  assert.equal(h.rt.sandboxCount, 0);
  assert.equal(out.error?.code, 'ERR_CREATE_POD_SANDBOX');
  assert.match(out.error?.message ?? '', new RegExp(`^failed to ensure that the pod: ${UID} cgroups exist and are correctly applied: create cgroup .*pod${UID}: permission denied`));
  fs.clearFaults();
  const again = await h.sync(pod);
  assert.equal(again.error, undefined);
  assert.equal(h.rt.sandboxCount, 1);
});

test('a pod UID unfit for a path: refused before anything is made, naming metadata.uid', async (t) => {
  const { fs, h } = setup(t);
  const pod = makePod({ containers: [container('app')] }, { uid: '../../escape' });
  const out = await h.sync(pod);
  assert.equal(h.rt.sandboxCount, 0);
  assert.match(out.error?.message ?? '', /metadata\.uid "..\/..\/escape" cannot name a pod cgroup/);
  assert.deepEqual(fs.calls, []);
});

test('a pod cgroup that cannot be removed does not hold the pod back: logged, left for the sweep', async (t) => {
  const { fs, h } = setup(t, 'v2', 1);
  const pod = makePod({ containers: [container('app')] }, { uid: UID });
  await h.sync(pod);
  await h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus(UID), gracePeriodSeconds: 1, signal: new AbortController().signal });
  fs.addProcess(`kubepods/besteffort/pod${UID}`, 1234);
  assert.deepEqual(await h.syncer.cleanupPod({ pod, runtimeStatus: h.rt.podStatus(UID), signal: new AbortController().signal }), {});
  assert.equal(h.rt.sandboxCount, 0);
  assert.equal(fs.has(`kubepods/besteffort/pod${UID}`), true);
  assert.ok(h.logLines.some((l) => l.includes('remove pod cgroup failed') && l.includes('busy')), 'the failure is logged');
});
