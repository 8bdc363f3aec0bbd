import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CgroupfsManager } from '../../../src/shared/cgroups/cgroupfs-manager.js';
import { NamesOnlyCgroupManager } from '../../../src/shared/cgroups/names-only-cgroup-manager.js';
import { PodCgroups } from '../../../workers/cgroups/pod-cgroups.js';
import { TempCgroupFs } from './temp-cgroup-fs.js';
import { pollUntil } from '../../harness/poll.js';

const UID = '11111111-2222-3333-4444-555555555555';

function pod(uid: string, resources?: { requests?: Record<string, string>; limits?: Record<string, string> }): V1Pod {
  return { metadata: { name: 'p', namespace: 'default', uid }, spec: { containers: [{ name: 'c', image: 'busybox', ...(resources ? { resources } : {}) }] } };
}

test('ensure creates the pod cgroup under its QoS parent with ResourceConfigForPod, once', async (t) => {
  const fs = new TempCgroupFs('v2');
  t.after(() => fs.remove());
  const pc = new PodCgroups({ manager: new CgroupfsManager({ fs, layout: fs.layout }), root: [], clock: new FakeClock(0) });
  const g = pod(UID, { requests: { cpu: '500m', memory: '128Mi' }, limits: { cpu: '500m', memory: '128Mi' } });
  assert.equal(pc.parentOf(g), `/kubepods/pod${UID}`);
  assert.equal(await pc.ensure(g), undefined);
  assert.equal(fs.read(`kubepods/pod${UID}/cpu.max`), '50000 100000');
  assert.equal(fs.read(`kubepods/pod${UID}/memory.max`), String(128 << 20));
  const writes = fs.calls.filter((c) => c.startsWith('writeFile')).length;
  assert.equal(await pc.ensure(g), undefined);
  assert.equal(fs.calls.filter((c) => c.startsWith('writeFile')).length, writes, 'an existing pod cgroup is left as it is');
  const be = pod('22222222-2222-3333-4444-555555555555');
  assert.equal(pc.parentOf(be), '/kubepods/besteffort/pod22222222-2222-3333-4444-555555555555');
  assert.equal(await pc.ensure(be), undefined);
  assert.equal(fs.read('kubepods/besteffort/pod22222222-2222-3333-4444-555555555555/cpu.weight'), '1');
});

test('a UID unfit for a path: an error naming metadata.uid, nothing on the host, no cgroupParent', async (t) => {
  const fs = new TempCgroupFs('v2');
  t.after(() => fs.remove());
  const pc = new PodCgroups({ manager: new CgroupfsManager({ fs, layout: fs.layout }), root: [], clock: new FakeClock(0) });
  const bad = pod('../../../../etc');
  assert.equal(pc.parentOf(bad), undefined);
  assert.match((await pc.ensure(bad)) ?? '', /^metadata\.uid "..\/..\/..\/..\/etc" cannot name a pod cgroup/);
  assert.equal(await pc.remove(bad), undefined);
  assert.deepEqual(fs.calls, []);
});

test('remove retries a busy cgroup on the clock, bounded, then reports it', async (t) => {
  const fs = new TempCgroupFs('v1');
  t.after(() => fs.remove());
  const clock = new FakeClock(0);
  const pc = new PodCgroups({ manager: new CgroupfsManager({ fs, layout: fs.layout }), root: ['r'], clock, removeAttempts: 3, removeRetryMs: 100 });
  const p = pod(UID);
  await pc.ensure(p);
  fs.addProcess(`memory/r/kubepods/besteffort/pod${UID}`, 77);
  let done: string | undefined | null = null;
  const removal = pc.remove(p).then((r) => (done = r));
  // Each step lets the sleeping retry run; the cgroup empties before the third try.
  const rmdirs = (): number => fs.calls.filter((c) => c === `rmdir memory/r/kubepods/besteffort/pod${UID}`).length;
  await waitFor(() => rmdirs() === 1);
  clock.step(100);
  await waitFor(() => rmdirs() === 2);
  fs.clearProcesses(`memory/r/kubepods/besteffort/pod${UID}`);
  clock.step(100);
  await removal;
  assert.equal(done, undefined);
  assert.equal(fs.has(`memory/r/kubepods/besteffort/pod${UID}`), false);

  await pc.ensure(p);
  fs.addProcess(`cpu,cpuacct/r/kubepods/besteffort/pod${UID}`, 78);
  const failing = pc.remove(p);
  for (let i = 0; i < 2; i++) {
    const n = fs.calls.length;
    await waitFor(() => fs.calls.length > n && fs.calls.at(-1)!.startsWith('rmdir'));
    clock.step(100);
  }
  assert.match((await failing) ?? '', /busy .*after 3 attempts/);
});

test('an orphan (a pod object without its spec) has its cgroup removed whatever its QoS class was', async (t) => {
  const fs = new TempCgroupFs('v2');
  t.after(() => fs.remove());
  const pc = new PodCgroups({ manager: new CgroupfsManager({ fs, layout: fs.layout }), root: [], clock: new FakeClock(0) });
  await pc.ensure(pod(UID, { requests: { cpu: '100m' } }));
  assert.equal(fs.has(`kubepods/burstable/pod${UID}`), true);
  const orphan: V1Pod = { metadata: { name: 'p', namespace: 'default', uid: UID } };
  assert.equal(await pc.remove(orphan), undefined);
  assert.equal(fs.has(`kubepods/burstable/pod${UID}`), false);
});

test('names-only manager (simulated runtime): the driver spelling, nothing created', async () => {
  const pc = new PodCgroups({ manager: new NamesOnlyCgroupManager('systemd'), root: [], clock: new FakeClock(0) });
  const p = pod(UID, { requests: { cpu: '100m' } });
  assert.equal(pc.parentOf(p), `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID.replaceAll('-', '_')}.slice`);
  assert.equal(await pc.ensure(p), undefined);
  assert.equal(await pc.remove(p), undefined);
});

/** Waits, bounded, for a condition (the removal's I/O is real async fs): the harness's pollUntil. */
async function waitFor(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  await pollUntil(() => (cond() ? true : undefined), { what: 'the pod cgroup removal', timeoutMs, intervalMs: 5 });
}
