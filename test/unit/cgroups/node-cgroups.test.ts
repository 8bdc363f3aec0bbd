import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { createLogger } from '../../../src/shared/logging/logger.js';
import { isCgroupError } from '../../../src/shared/cgroups/cgroup-errors.js';
import { burstableShares, NodeCgroups, QOS_UPDATE_INTERVAL_MS, type NodeCgroupsDeps } from '../../../src/main/cgroups/node-cgroups.js';
import { TempCgroupFs } from './temp-cgroup-fs.js';

const GiB = 1024 ** 3;

function deps(fs: TempCgroupFs, over: Partial<NodeCgroupsDeps['config']> = {}, simulated = false, lines: string[] = []): NodeCgroupsDeps {
  return {
    config: { cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', cgroupRoot: '/', enforceNodeAllocatable: ['pods'], ...over },
    simulatedRuntime: simulated,
    capacity: { cpuMillis: 4000, memoryBytes: 8 * GiB },
    allocatable: { cpuMillis: 3500, memoryBytes: 7 * GiB },
    clock: new FakeClock(0),
    logger: createLogger({ sink: (l) => lines.push(l) }),
    fs,
    detectLayout: async () => fs.layout,
  };
}

function burstablePod(uid: string, cpu: string): V1Pod {
  return { metadata: { uid }, spec: { containers: [{ name: 'c', resources: { requests: { cpu } } }] } };
}

test('start creates kubepods (allocatable with enforce=pods, else capacity), burstable and besteffort', async (t) => {
  const fs = new TempCgroupFs('v2');
  t.after(() => fs.remove());
  const nc = await NodeCgroups.start(deps(fs, { cgroupRoot: '/shardlet' }));
  assert.ok(nc);
  assert.deepEqual(nc.settings, { driver: 'cgroupfs', root: ['shardlet'], mode: { kind: 'host', layout: fs.layout } });
  assert.equal(fs.read('shardlet/kubepods/memory.max'), String(7 * GiB));
  assert.equal(fs.read('shardlet/kubepods/cpu.weight'), String(1 + Math.floor(((3584 - 2) * 9999) / 262142)));
  assert.equal(fs.read('shardlet/kubepods/burstable/cpu.weight'), '1');
  assert.equal(fs.read('shardlet/kubepods/besteffort/cpu.weight'), '1');

  const fs2 = new TempCgroupFs('v1');
  t.after(() => fs2.remove());
  await NodeCgroups.start(deps(fs2, { enforceNodeAllocatable: [] }));
  assert.equal(fs2.read('memory/kubepods/memory.limit_in_bytes'), String(8 * GiB), 'capacity without enforcement');
  assert.equal(fs2.read('cpu,cpuacct/kubepods/cpu.shares'), '4096');
  assert.equal(fs2.read('cpu,cpuacct/kubepods/besteffort/cpu.shares'), '2');
});

test('--cgroups-per-qos=false: nothing; simulated runtime: names only, said in the log, nothing written', async (t) => {
  const fs = new TempCgroupFs('v2');
  t.after(() => fs.remove());
  assert.equal(await NodeCgroups.start(deps(fs, { cgroupsPerQOS: false, enforceNodeAllocatable: [] })), undefined);
  const lines: string[] = [];
  const nc = await NodeCgroups.start(deps(fs, { cgroupDriver: 'systemd' }, true, lines));
  assert.deepEqual(nc?.settings.mode, { kind: 'names-only' });
  assert.equal(nc?.settings.driver, 'systemd');
  assert.ok(lines.some((l) => l.includes('not created on the host')), lines.join('\n'));
  assert.deepEqual(fs.calls.filter((c) => !c.startsWith('exists')), [], 'no host cgroup touched');
});

test('a host that cannot have the cgroups fails start with the cause and the opt-out, never a fallback', async (t) => {
  const cases: [string, (fs: TempCgroupFs) => void, string, RegExp][] = [
    ['not root', (fs) => fs.fail('mkdir', 'kubepods', 'EACCES'), 'ERR_CGROUP_PERMISSION', /permission denied/],
    ['read-only cgroupfs', (fs) => fs.fail('mkdir', 'kubepods', 'EROFS'), 'ERR_CGROUP_READONLY', /read-only/],
  ];
  for (const [what, inject, code, re] of cases) {
    const fs = new TempCgroupFs('v2');
    t.after(() => fs.remove());
    inject(fs);
    await assert.rejects(NodeCgroups.start(deps(fs)), (e: unknown) => isCgroupError(e) && e.code === code && re.test(e.message) && e.message.includes('--cgroups-per-qos=false'), what);
  }
  const noMem = new TempCgroupFs('v2', { rootControllers: 'cpu io pids' });
  t.after(() => noMem.remove());
  await assert.rejects(NodeCgroups.start(deps(noMem)), (e: unknown) => isCgroupError(e, 'ERR_CGROUP_CONTROLLER') && /memory controller is not available/.test(e.message));
  const fs = new TempCgroupFs('v2');
  t.after(() => fs.remove());
  await assert.rejects(NodeCgroups.start(deps(fs, { cgroupDriver: 'systemd' })), (e: unknown) => isCgroupError(e, 'ERR_CGROUP_CONFIG') && /--cgroup-driver=cgroupfs/.test(e.message));
  await assert.rejects(NodeCgroups.start({ ...deps(fs), detectLayout: async () => { throw new Error('statfs failed'); } }), (e: unknown) => isCgroupError(e, 'ERR_CGROUP_IO') && /statfs failed/.test(e.message));
});

test('housekeeping: Burstable cpu shares follow the active Burstable pods, on change or each minute', async (t) => {
  const fs = new TempCgroupFs('v1');
  t.after(() => fs.remove());
  const d = deps(fs);
  const clock = d.clock as FakeClock;
  const nc = (await NodeCgroups.start(d))!;
  const file = 'cpu,cpuacct/kubepods/burstable/cpu.shares';
  let active: V1Pod[] = [burstablePod('a', '500m'), burstablePod('b', '250m'), { metadata: { uid: 'g' }, spec: { containers: [{ name: 'c' }] } }];
  nc.maybeUpdate(() => active);
  await nc.settled();
  assert.equal(fs.read(file), String(burstableShares(active)));
  assert.equal(fs.read(file), '768');
  const writes = (): number => fs.calls.filter((c) => c === `writeFile ${file}`).length;
  const before = writes();
  nc.maybeUpdate(() => active);
  await nc.settled();
  assert.equal(writes(), before, 'same count, within a minute: nothing checked');
  active = [burstablePod('a', '500m')];
  nc.maybeUpdate(() => active);
  await nc.settled();
  assert.equal(fs.read(file), '512');
  // A failed write is retried at the next housekeeping.
  fs.fail('writeFile', 'burstable/cpu.shares', 'EIO');
  active = [burstablePod('a', '1')];
  nc.maybeUpdate(() => active);
  await nc.settled();
  assert.equal(fs.read(file), '512');
  fs.clearFaults();
  clock.step(QOS_UPDATE_INTERVAL_MS);
  nc.maybeUpdate(() => active);
  await nc.settled();
  assert.equal(fs.read(file), '1024');
});

test('housekeeping sweep: cgroups of unknown pods go once sources are ready, busy ones stay, once a minute', async (t) => {
  const fs = new TempCgroupFs('v2');
  t.after(() => fs.remove());
  const d = deps(fs);
  const clock = d.clock as FakeClock;
  const nc = (await NodeCgroups.start(d))!;
  for (const dir of ['kubepods/podknown1', 'kubepods/burstable/podgone1', 'kubepods/besteffort/podgone2', 'kubepods/besteffort/podbusy1', 'kubepods/besteffort/notapod']) {
    await fs.mkdir(`${fs.dir}/${dir}`);
  }
  fs.addProcess('kubepods/besteffort/podbusy1', 99);
  const known = (uid: string): boolean => uid === 'known1';
  let ready = false;
  nc.maybeSweep(known, () => ready);
  await nc.settled();
  assert.equal(fs.has('kubepods/burstable/podgone1'), true, 'nothing before the sources are ready');
  ready = true;
  nc.maybeSweep(known, () => ready);
  await nc.settled();
  assert.equal(fs.has('kubepods/podknown1'), true);
  assert.equal(fs.has('kubepods/burstable/podgone1'), false);
  assert.equal(fs.has('kubepods/besteffort/podgone2'), false);
  assert.equal(fs.has('kubepods/besteffort/podbusy1'), true, 'busy: left for later');
  assert.equal(fs.has('kubepods/besteffort/notapod'), true, 'not a pod cgroup');
  fs.clearProcesses('kubepods/besteffort/podbusy1');
  nc.maybeSweep(known, () => ready);
  await nc.settled();
  assert.equal(fs.has('kubepods/besteffort/podbusy1'), true, 'within the minute: no pass');
  clock.step(QOS_UPDATE_INTERVAL_MS);
  nc.maybeSweep(known, () => ready);
  await nc.settled();
  assert.equal(fs.has('kubepods/besteffort/podbusy1'), false);
});
