/**
 * The simulated runtime honours the security context it receives (sim-security.ts,
 * sim-process-context.ts) and reports it: through ExecSync (`id`, `cat /proc/self/status`,
 * `touch`, `> FILE`), verbose ContainerStatus/PodSandboxStatus, ImageStatus users, and a
 * CreateContainer that fails where containerd's would.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerConfig, LinuxContainerSecurityContext } from '../../../src/shared/cri/cri-types.js';
import { capHex, capMaskOf, DEFAULT_CAPABILITIES, simSecurityOf } from '../../../src/simruntime/sim-security.js';
import { criImageUserOf, imageUserDbOf } from '../../../src/simruntime/sim-image-users.js';
import { resolveArgv } from '../../../src/simruntime/sim-shell.js';
import { containerConfig, sandboxConfig, startHarness } from './sim-harness.js';

const ALL = (1n << 41n) - 1n;
const cfg = (sc: LinuxContainerSecurityContext, image = 'busybox'): ContainerConfig => ({ metadata: { name: 'c', attempt: 0 }, image: { image }, linux: { securityContext: sc } });

function sec(sc: LinuxContainerSecurityContext, image = 'busybox') {
  const r = simSecurityOf(cfg(sc, image), imageUserDbOf(image), ALL);
  assert.ok(r.ok, r.ok ? '' : r.message);
  return r.security;
}

test('identity: runAsUser/Group, groups (primary first, kernel-sorted), image users', () => {
  assert.deepEqual([sec({}).uid, sec({}).gid, sec({}).groups], [0, 0, [0]]);
  const s = sec({ runAsUser: { value: 1000 }, runAsGroup: { value: 3000 }, supplementalGroups: [4000, 2000] });
  assert.deepEqual([s.uid, s.gid, s.groups], [1000, 3000, [2000, 3000, 4000]]);
  assert.deepEqual([sec({ runAsUser: { value: 65534 } }).gid], [65534], 'the passwd group of a known uid');
  assert.equal(sec({}, 'busybox-user-1000:1').uid, 1000, "the image's Config.User");
  assert.deepEqual([sec({ runAsUsername: 'nginx' }, 'busybox-user-nginx:1').uid, sec({ runAsUsername: 'nginx' }, 'busybox-user-nginx:1').gid], [101, 101]);
  const missing = simSecurityOf(cfg({ runAsUsername: 'nope' }), imageUserDbOf('busybox'), ALL);
  assert.deepEqual(missing, { ok: false, message: 'no users found' });
  assert.deepEqual(criImageUserOf('docker.io/library/busybox-user-1000:1'), { uid: { value: '1000' }, username: '' });
  assert.deepEqual(criImageUserOf('busybox-user-nginx'), { uid: null, username: 'nginx' });
  assert.deepEqual(criImageUserOf('busybox:1'), { uid: null, username: '' });
});

test('capabilities: default set, drop ALL then add, privileged = all, non-root has none effective', () => {
  assert.equal(sec({}).capEff, '00000000a80425fb');
  assert.equal(capHex(capMaskOf(DEFAULT_CAPABILITIES)), '00000000a80425fb');
  assert.equal(sec({ capabilities: { dropCapabilities: ['ALL'], addCapabilities: ['NET_ADMIN', 'chown'] } }).capEff, capHex((1n << 12n) | 1n));
  assert.equal(sec({ capabilities: { dropCapabilities: ['NET_RAW', 'BOGUS'] } }).capEff, capHex(0xa80425fbn & ~(1n << 13n)));
  assert.equal(sec({ privileged: true }).capEff, capHex(ALL));
  assert.equal(sec({ capabilities: { addCapabilities: ['ALL'] } }).capEff, capHex(ALL));
  const nonRoot = sec({ runAsUser: { value: 1000 } });
  assert.deepEqual([nonRoot.capEff, nonRoot.capBnd], ['0000000000000000', '00000000a80425fb']);
  assert.deepEqual([sec({ seccomp: { profileType: 'RuntimeDefault' } }).seccompMode, sec({ seccomp: { profileType: 'Unconfined' } }).seccompMode, sec({ privileged: true, seccomp: { profileType: 'RuntimeDefault' } }).seccompMode], [2, 0, 0]);
});

test('shell: id, touch and > FILE follow the identity and the read-only root', () => {
  const ctx = (sc: LinuxContainerSecurityContext) => ({ security: sec(sc), users: imageUserDbOf('busybox'), mounts: [] });
  const out = (argv: string[], sc: LinuxContainerSecurityContext) => {
    const r = resolveArgv(argv, {}, ctx(sc));
    assert.equal(r.kind, 'timeline');
    if (r.kind !== 'timeline') return { stdout: '', stderr: '', code: -1 };
    const text = (s: string) => r.timeline.outputs.filter((o) => o.stream === s).map((o) => o.text).join('');
    return { stdout: text('stdout'), stderr: text('stderr'), code: r.timeline.exit?.code ?? -1 };
  };
  assert.deepEqual(out(['id'], {}), { stdout: 'uid=0(root) gid=0(root) groups=0(root)\n', stderr: '', code: 0 });
  assert.equal(out(['id'], { runAsUser: { value: 1000 }, runAsGroup: { value: 3000 }, supplementalGroups: [65534] }).stdout, 'uid=1000 gid=3000 groups=3000,65534(nogroup)\n');
  assert.equal(out(['id', '-u'], { runAsUser: { value: 65534 } }).stdout, '65534\n');
  assert.equal(out(['id', '-un'], { runAsUser: { value: 65534 } }).stdout, 'nobody\n');
  assert.equal(out(['id', '-G'], { runAsUser: { value: 1000 }, supplementalGroups: [7] }).stdout, '0 7\n');
  assert.equal(out(['sh', '-c', 'id -g'], { runAsGroup: { value: 5 }, runAsUser: { value: 1 } }).stdout, '5\n');
  assert.deepEqual(out(['touch', '/x'], { readonlyRootfs: true }), { stdout: '', stderr: 'touch: /x: Read-only file system\n', code: 1 });
  assert.deepEqual(out(['sh', '-c', 'echo a > /x; echo after'], { readonlyRootfs: true }), { stdout: 'after\n', stderr: "sh: can't create /x: Read-only file system\n", code: 0 });
  assert.deepEqual(out(['sh', '-c', 'echo a >/x'], { runAsUser: { value: 1000 } }), { stdout: '', stderr: "sh: can't create /x: Permission denied\n", code: 1 });
  assert.deepEqual(out(['touch', '/tmp/x'], { runAsUser: { value: 1000 } }), { stdout: '', stderr: '', code: 0 });
  assert.deepEqual(out(['sh', '-c', 'echo hidden > /x && echo shown'], {}), { stdout: 'shown\n', stderr: '', code: 0 });
});

test('over CRI: ExecSync reads it from inside, verbose status reports it, a missing Localhost profile fails CreateContainer', async () => {
  const h = await startHarness();
  try {
    const sb = await h.client.runPodSandbox({ config: sandboxConfig({ linux: { securityContext: { runAsUser: { value: 1000 }, seccomp: { profileType: 'RuntimeDefault' } }, sysctls: { 'kernel.shm_rmid_forced': '1' } } }) });
    const sbCfg = sandboxConfig();
    const sc: LinuxContainerSecurityContext = { runAsUser: { value: 1000 }, runAsGroup: { value: 3000 }, supplementalGroups: [2000], noNewPrivs: true, readonlyRootfs: true, seccomp: { profileType: 'RuntimeDefault' }, capabilities: { dropCapabilities: ['ALL'] } };
    const id = await h.client.createContainer({ podSandboxId: sb, config: containerConfig('app', ['sleep', '1000'], { linux: { securityContext: sc } }), sandboxConfig: sbCfg });
    await h.client.startContainer(id);
    const status = (await h.client.execSync({ containerId: id, cmd: ['cat', '/proc/self/status'] })).stdout.toString();
    for (const line of ['Uid:\t1000\t1000\t1000\t1000', 'Gid:\t3000\t3000\t3000\t3000', 'Groups:\t2000 3000 ', 'CapEff:\t0000000000000000', 'NoNewPrivs:\t1', 'Seccomp:\t2']) {
      assert.ok(status.split('\n').includes(line), `${line} in\n${status}`);
    }
    const sysctl = await h.client.execSync({ containerId: id, cmd: ['cat', '/proc/sys/kernel/shm_rmid_forced'] });
    assert.equal(sysctl.stdout.toString(), '1\n');
    const touch = await h.client.execSync({ containerId: id, cmd: ['touch', '/x'] });
    assert.deepEqual([touch.exitCode, touch.stderr.toString()], [1, 'touch: /x: Read-only file system\n']);

    const v = await h.client.containerStatus(id, { verbose: true });
    const info = JSON.parse(v.info['info'] ?? '{}') as { config: ContainerConfig; runtimeSpec: { process: { user: unknown; noNewPrivileges: boolean; capabilities: { bounding: string[] } }; root: { readonly: boolean }; linux: { seccomp?: unknown } } };
    assert.deepEqual(info.runtimeSpec.process.user, { uid: 1000, gid: 3000, additionalGids: [2000, 3000] });
    assert.deepEqual([info.runtimeSpec.process.noNewPrivileges, info.runtimeSpec.root.readonly, info.runtimeSpec.process.capabilities.bounding], [true, true, []]);
    assert.ok(info.runtimeSpec.linux.seccomp !== undefined);
    assert.deepEqual(info.config.linux?.securityContext?.supplementalGroups?.map(Number), [2000]);
    assert.deepEqual((await h.client.containerStatus(id)).info, {}, 'not verbose: no info');
    const sv = await h.client.podSandboxStatus(sb, { verbose: true });
    const sinfo = JSON.parse(sv.info['info'] ?? '{}') as { runtimeSpec: { process: { user: { uid: number } }; linux: { sysctl: Record<string, string> } } };
    assert.deepEqual([sinfo.runtimeSpec.process.user.uid, sinfo.runtimeSpec.linux.sysctl], [1000, { 'kernel.shm_rmid_forced': '1' }]);

    await assert.rejects(
      h.client.createContainer({ podSandboxId: sb, config: containerConfig('lh', ['sleep', '1'], { linux: { securityContext: { seccomp: { profileType: 'Localhost', localhostRef: '/nonexistent/profile.json' } } } }), sandboxConfig: sbCfg }),
      /cannot load seccomp profile "\/nonexistent\/profile.json"/,
    );
    const img = await h.client.imageStatus({ image: 'busybox' });
    assert.deepEqual([img.image?.uid ?? null, img.image?.username], [null, '']);
  } finally {
    await h.close();
  }
});
