import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CgroupfsManager } from '../../../src/shared/cgroups/cgroupfs-manager.js';
import { isCgroupError } from '../../../src/shared/cgroups/cgroup-errors.js';
import { v1MountsFromMountinfo } from '../../../src/shared/cgroups/cgroup-layout.js';
import { TempCgroupFs } from './temp-cgroup-fs.js';

const NAME = ['kubepods', 'burstable', 'pod1234'];

test('v2: ancestors enable cpu and memory, then cpu.weight, cpu.max and memory.max are written', async (t) => {
  const fs = new TempCgroupFs('v2');
  t.after(() => fs.remove());
  const m = new CgroupfsManager({ fs, layout: fs.layout });
  assert.equal(m.name(NAME), '/kubepods/burstable/pod1234');
  assert.equal(await m.exists(NAME), false);
  await m.create(NAME, { cpuShares: 1024, cpuQuotaUs: 50_000, cpuPeriodUs: 100_000, memoryLimitBytes: 64 << 20 });
  assert.equal(await m.exists(NAME), true);
  for (const dir of ['', 'kubepods/', 'kubepods/burstable/']) assert.equal(fs.read(`${dir}cgroup.subtree_control`), 'cpu memory', dir);
  assert.equal(fs.read('kubepods/burstable/pod1234/cpu.weight'), '39');
  assert.equal(fs.read('kubepods/burstable/pod1234/cpu.max'), '50000 100000');
  assert.equal(fs.read('kubepods/burstable/pod1234/memory.max'), String(64 << 20));
  await m.update(NAME, { cpuQuotaUs: -1, cpuPeriodUs: 100_000 });
  assert.equal(fs.read('kubepods/burstable/pod1234/cpu.max'), 'max 100000');
  assert.deepEqual(await m.children(['kubepods', 'burstable']), ['pod1234']);
  await m.destroy(NAME);
  assert.equal(fs.has('kubepods/burstable/pod1234'), false);
  assert.equal(fs.has('kubepods/burstable'), true, 'only the named cgroup goes');
  await m.destroy(NAME); // gone already: success
});

test('v1: the cgroup is made in every hierarchy; cpu files in cpu, memory files in memory', async (t) => {
  const fs = new TempCgroupFs('v1');
  t.after(() => fs.remove());
  const m = new CgroupfsManager({ fs, layout: fs.layout });
  await m.create(NAME, { cpuShares: 512, cpuQuotaUs: 25_000, cpuPeriodUs: 100_000, memoryLimitBytes: 1 << 30 });
  for (const h of ['cpu,cpuacct', 'memory', 'pids', 'unified']) assert.equal(fs.has(`${h}/kubepods/burstable/pod1234`), true, h);
  assert.equal(fs.read('cpu,cpuacct/kubepods/burstable/pod1234/cpu.shares'), '512');
  assert.equal(fs.read('cpu,cpuacct/kubepods/burstable/pod1234/cpu.cfs_period_us'), '100000');
  assert.equal(fs.read('cpu,cpuacct/kubepods/burstable/pod1234/cpu.cfs_quota_us'), '25000');
  assert.equal(fs.read('memory/kubepods/burstable/pod1234/memory.limit_in_bytes'), String(1 << 30));
  const order = fs.calls.filter((c) => c.startsWith('writeFile') && c.includes('cfs'));
  assert.deepEqual(order.map((c) => c.split('/').pop()), ['cpu.cfs_period_us', 'cpu.cfs_quota_us'], 'period before quota');
  // The runtime's container cgroup (runc leaves an empty one behind at worst) goes first.
  await fs.mkdir(`${fs.dir}/memory/kubepods/burstable/pod1234/ctr`);
  await fs.mkdir(`${fs.dir}/unified/kubepods/burstable/pod1234/ctr`);
  await m.destroy(NAME);
  for (const h of ['cpu,cpuacct', 'memory', 'pids', 'unified']) assert.equal(fs.has(`${h}/kubepods/burstable/pod1234`), false, h);
});

test('errors carry the cause as a code: busy, permission, read-only, missing controller', async (t) => {
  const fs = new TempCgroupFs('v2', { rootControllers: 'cpu io' });
  t.after(() => fs.remove());
  const m = new CgroupfsManager({ fs, layout: fs.layout });
  await assert.rejects(m.create(NAME, { cpuShares: 2 }), (e: unknown) => isCgroupError(e, 'ERR_CGROUP_CONTROLLER') && /memory/.test(e.message));

  const ok = new TempCgroupFs('v2');
  t.after(() => ok.remove());
  const m2 = new CgroupfsManager({ fs: ok, layout: ok.layout });
  await m2.create(NAME, { cpuShares: 2 });
  ok.addProcess('kubepods/burstable/pod1234', 4242);
  await assert.rejects(m2.destroy(NAME), (e: unknown) => isCgroupError(e, 'ERR_CGROUP_BUSY'));
  ok.fail('mkdir', 'pod999', 'EACCES');
  await assert.rejects(m2.create(['kubepods', 'pod999'], {}), (e: unknown) => isCgroupError(e, 'ERR_CGROUP_PERMISSION') && e.message.includes('pod999') && /root/.test(e.message));
  ok.fail('mkdir', 'pod998', 'EROFS');
  await assert.rejects(m2.create(['kubepods', 'pod998'], {}), (e: unknown) => isCgroupError(e, 'ERR_CGROUP_READONLY'));
  assert.throws(() => new CgroupfsManager({ fs: ok, layout: { version: 'v1', mounts: { cpu: '/x' } } }), (e: unknown) => isCgroupError(e, 'ERR_CGROUP_CONTROLLER') && /memory/.test(e.message));
  await assert.rejects(m2.destroy([]), (e: unknown) => isCgroupError(e, 'ERR_CGROUP_CONFIG'));
});

test('v1 hierarchies are read from mountinfo (combined mounts, named hierarchies, a hybrid host\'s cgroup2 tree)', () => {
  const text = [
    '25 20 0:22 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755',
    '26 25 0:23 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw',
    '27 25 0:24 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd',
    '28 25 0:25 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct',
    '29 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory',
  ].join('\n');
  assert.deepEqual(v1MountsFromMountinfo(text), {
    unified: '/sys/fs/cgroup/unified', 'name=systemd': '/sys/fs/cgroup/systemd', cpu: '/sys/fs/cgroup/cpu,cpuacct', cpuacct: '/sys/fs/cgroup/cpu,cpuacct', memory: '/sys/fs/cgroup/memory',
  });
});
