import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CgroupNameError, checkPodUID, driverName, parseCgroupRoot, podCgroupName, podUIDOfComponent, qosCgroupNames, toCgroupfs, toSystemd,
} from '../../../src/shared/cgroups/cgroup-name.js';

const UID = '6d0c2a4e-5b1f-4c3a-9e8d-0a1b2c3d4e5f';

test('cgroupfs names: kubepods, QoS parents and pod<uid> under the root', () => {
  const n = qosCgroupNames([]);
  assert.equal(toCgroupfs(n.kubepods), '/kubepods');
  assert.equal(toCgroupfs(n.burstable), '/kubepods/burstable');
  assert.equal(toCgroupfs(n.besteffort), '/kubepods/besteffort');
  assert.equal(toCgroupfs(podCgroupName(n, 'Guaranteed', UID)), `/kubepods/pod${UID}`);
  assert.equal(toCgroupfs(podCgroupName(n, 'Burstable', UID)), `/kubepods/burstable/pod${UID}`);
  assert.equal(toCgroupfs(podCgroupName(n, 'BestEffort', UID)), `/kubepods/besteffort/pod${UID}`);
  const under = qosCgroupNames(parseCgroupRoot('cgroupfs', '/shardlet/e2e'));
  assert.equal(toCgroupfs(podCgroupName(under, 'BestEffort', UID)), `/shardlet/e2e/kubepods/besteffort/pod${UID}`);
});

test('systemd names: nested slices, "-" escaped to "_" in each component', () => {
  const n = qosCgroupNames([]);
  assert.equal(toSystemd([]), '/');
  assert.equal(toSystemd(n.kubepods), '/kubepods.slice');
  assert.equal(toSystemd(n.burstable), '/kubepods.slice/kubepods-burstable.slice');
  const u = UID.replaceAll('-', '_');
  assert.equal(toSystemd(podCgroupName(n, 'Burstable', UID)), `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${u}.slice`);
  assert.equal(toSystemd(podCgroupName(n, 'Guaranteed', UID)), `/kubepods.slice/kubepods-pod${u}.slice`);
  assert.equal(driverName('systemd', podCgroupName(n, 'BestEffort', UID)), `/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${u}.slice`);
  assert.equal(driverName('cgroupfs', n.besteffort), '/kubepods/besteffort');
});

test('--cgroup-root for systemd is a slice path that must be the expansion of its last slice', () => {
  assert.deepEqual(parseCgroupRoot('systemd', '/'), []);
  assert.deepEqual(parseCgroupRoot('systemd', '/shardlet.slice'), ['shardlet']);
  assert.deepEqual(parseCgroupRoot('systemd', '/a.slice/a-b.slice'), ['a', 'b']);
  const n = qosCgroupNames(parseCgroupRoot('systemd', '/a.slice/a-b.slice'));
  assert.equal(toSystemd(n.besteffort), '/a.slice/a-b.slice/a-b-kubepods.slice/a-b-kubepods-besteffort.slice');
  assert.throws(() => parseCgroupRoot('systemd', '/shardlet'), CgroupNameError);
  assert.throws(() => parseCgroupRoot('systemd', '/x.slice/a-b.slice'), /not the expansion/);
  assert.throws(() => parseCgroupRoot('cgroupfs', 'relative'), /absolute/);
  assert.throws(() => parseCgroupRoot('cgroupfs', '/a/../etc'), /invalid cgroup name component/);
});

test('a pod UID becomes a path component only when it is a plain id', () => {
  const n = qosCgroupNames([]);
  assert.equal(checkPodUID(UID), undefined);
  assert.equal(checkPodUID('0123456789abcdef0123456789abcdef'), undefined, 'static pod md5 uid');
  for (const bad of ['', '../../etc', 'a/b', '.', '..', 'a b', 'x'.repeat(65), '-leading', 'uid\0']) {
    assert.match(checkPodUID(bad) ?? '', /^metadata\.uid /, JSON.stringify(bad));
    assert.throws(() => podCgroupName(n, 'BestEffort', bad), (e: unknown) => e instanceof CgroupNameError && e.code === 'ERR_CGROUP_NAME' && /metadata\.uid/.test(e.message));
  }
  assert.equal(podUIDOfComponent(`pod${UID}`), UID);
  assert.equal(podUIDOfComponent('burstable'), undefined);
  assert.equal(podUIDOfComponent('pod../x'), undefined);
});
