import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simCgroupsPath, simProcSelfCgroup, simSandboxVerboseInfo, simVirtualFile } from '../../../src/simruntime/sim-cgroup.js';
import type { ContainerConfig, PodSandboxConfig } from '../../../src/shared/cri/cri-types.js';

test('a container\'s cgroup path follows containerd\'s spelling for cgroupfs and systemd parents', () => {
  assert.equal(simCgroupsPath('/kubepods/besteffort/podu1', 'abc'), '/kubepods/besteffort/podu1/abc');
  assert.equal(simCgroupsPath('/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu1.slice', 'abc'), '/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu1.slice/cri-containerd-abc.scope');
  assert.equal(simCgroupsPath(undefined, 'abc'), '/abc');
  assert.equal(simProcSelfCgroup('/kubepods/podu1', 'c1'), '0::/kubepods/podu1/c1\n');
});

test('virtual files and the verbose sandbox info report what the runtime was given', () => {
  const sb = { metadata: { name: 'p', uid: 'u1', namespace: 'd', attempt: 0 }, linux: { cgroupParent: '/kubepods/burstable/podu1' } } as PodSandboxConfig;
  const ctr = { id: 'c9', config: { metadata: { name: 'c' }, image: { image: 'i' }, linux: { resources: { oomScoreAdj: 875 } } } as ContainerConfig };
  assert.equal(simVirtualFile('/proc/self/cgroup', sb, ctr), '0::/kubepods/burstable/podu1/c9\n');
  assert.equal(simVirtualFile('/proc/self/oom_score_adj', sb, ctr), '875\n');
  assert.equal(simVirtualFile('/etc/hosts', sb, ctr), undefined);
  const base = { info: JSON.stringify({ runtimeSpec: { process: { user: { uid: 7 } }, linux: { sysctl: { a: '1' } } } }) };
  const info = JSON.parse(simSandboxVerboseInfo(base, 'sb1', sb)['info']!) as { cgroupParent: string; config: PodSandboxConfig; runtimeSpec: { process: { user: { uid: number } }; linux: { cgroupsPath: string; sysctl: Record<string, string> } } };
  assert.deepEqual([info.runtimeSpec.process.user.uid, info.runtimeSpec.linux.sysctl], [7, { a: '1' }], 'what the runtime built is kept');
  assert.equal(info.cgroupParent, '/kubepods/burstable/podu1');
  assert.equal(info.config.linux?.cgroupParent, '/kubepods/burstable/podu1');
  assert.equal(info.runtimeSpec.linux.cgroupsPath, '/kubepods/burstable/podu1/sb1');
});
