/** Pod/container securityContext → CRI (security-context.ts, seccomp-profile.ts, run-as-non-root.ts) and its wiring into CreateContainer. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { containerSecurityContext, DEFAULT_MASKED_PATHS, DEFAULT_READONLY_PATHS, effectiveSecurityContext, sandboxSecurity, type ContainerSecurityOptions } from '../../../workers/kuberuntime/security-context.js';
import { imageUserOf } from '../../../workers/kuberuntime/image-user.js';
import { verifyRunAsNonRoot } from '../../../workers/kuberuntime/run-as-non-root.js';
import { generatePodSandboxConfig } from '../../../workers/kuberuntime/sandbox-config.js';
import { container, makeHarness, makePod } from './kuberuntime-harness.js';

const opts: ContainerSecurityOptions = {
  seccompProfileRoot: '/var/lib/shardlet/seccomp', seccompDefault: false,
  fieldPath: 'spec.containers[0].securityContext', namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
};

function sc(pod: V1Pod, user = { uid: 0 }, o: Partial<ContainerSecurityOptions> = {}) {
  const r = containerSecurityContext(pod, pod.spec!.containers[0]!, user, { ...opts, ...o });
  assert.ok(r.ok, r.ok ? '' : r.message);
  return r.securityContext;
}

test('no securityContext: the image user, default masked/readonly paths, Unconfined seccomp, no no_new_privs', () => {
  const pod = makePod({ containers: [container('app')] });
  assert.deepEqual(sc(pod), {
    runAsUser: { value: 0 },
    seccomp: { profileType: 'Unconfined' },
    namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
    noNewPrivs: false,
    maskedPaths: [...DEFAULT_MASKED_PATHS],
    readonlyPaths: [...DEFAULT_READONLY_PATHS],
  });
  assert.deepEqual(sc(pod, { uid: 1000 } as never).runAsUser, { value: 1000 });
  const named = sc(pod, { username: 'nginx' } as never);
  assert.equal(named.runAsUser, undefined);
  assert.equal(named.runAsUsername, 'nginx');
  assert.equal(sc(pod, {} as never, { seccompDefault: true }).seccomp?.profileType, 'RuntimeDefault', '--seccomp-default');
});

test('every field maps: the container overrides the pod; groups are fsGroup then supplementalGroups', () => {
  const pod = makePod({
    securityContext: {
      runAsUser: 1000, runAsGroup: 3000, runAsNonRoot: true, fsGroup: 2000, supplementalGroups: [4000, 5000],
      seLinuxOptions: { level: 's0:c1,c2' }, seccompProfile: { type: 'RuntimeDefault' },
    },
    containers: [container('app', {
      securityContext: {
        runAsUser: 1001, capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] }, readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false, privileged: false, procMount: 'Default',
      },
    })],
  });
  assert.deepEqual(sc(pod, { uid: 0 }), {
    capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] },
    selinuxOptions: { user: '', role: '', type: '', level: 's0:c1,c2' },
    runAsUser: { value: 1001 },
    runAsGroup: { value: 3000 },
    privileged: false,
    readonlyRootfs: true,
    seccomp: { profileType: 'RuntimeDefault' },
    namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
    supplementalGroups: [2000, 4000, 5000],
    noNewPrivs: true,
    maskedPaths: [...DEFAULT_MASKED_PATHS],
    readonlyPaths: [...DEFAULT_READONLY_PATHS],
  });
  const eff = effectiveSecurityContext(pod, pod.spec!.containers[0]!);
  assert.equal(eff.runAsUser, 1001);
  assert.equal(eff.runAsGroup, 3000);
  assert.equal(eff.runAsNonRoot, true);
});

test('allowPrivilegeEscalation: only an explicit false sets no_new_privs; procMount Unmasked clears the path lists', () => {
  const mk = (extra: object) => makePod({ containers: [container('app', { securityContext: extra })] });
  assert.equal(sc(mk({ allowPrivilegeEscalation: true })).noNewPrivs, false);
  assert.equal(sc(mk({})).noNewPrivs, false);
  assert.equal(sc(mk({ allowPrivilegeEscalation: false })).noNewPrivs, true);
  const unmasked = sc(mk({ procMount: 'Unmasked' }));
  assert.deepEqual([unmasked.maskedPaths, unmasked.readonlyPaths], [[], []]);
  assert.equal(sc(mk({ privileged: true })).privileged, true);
});

test('seccomp: container over pod; Localhost under <root-dir>/seccomp; a path that climbs out is refused naming the field', () => {
  const pod = (podProfile: object | undefined, ctrProfile: object | undefined): V1Pod =>
    makePod({ securityContext: podProfile ? { seccompProfile: podProfile as never } : {}, containers: [container('app', ctrProfile ? { securityContext: { seccompProfile: ctrProfile as never } } : {})] });
  assert.deepEqual(sc(pod({ type: 'RuntimeDefault' }, { type: 'Unconfined' })).seccomp, { profileType: 'Unconfined' });
  assert.deepEqual(sc(pod({ type: 'Localhost', localhostProfile: 'profiles/audit.json' }, undefined)).seccomp, { profileType: 'Localhost', localhostRef: '/var/lib/shardlet/seccomp/profiles/audit.json' });
  for (const bad of ['../../etc/shadow', '/etc/shadow', 'a/../../b', '..', '']) {
    const p = pod(undefined, { type: 'Localhost', localhostProfile: bad });
    const r = containerSecurityContext(p, p.spec!.containers[0]!, { uid: 0 }, opts);
    assert.equal(r.ok, false, bad);
    assert.match(r.ok ? '' : r.message, bad === '' ? /localhostProfile must be set/ : /^spec\.containers\[0\]\.securityContext\.seccompProfile\.localhostProfile .* must be a path below the seccomp profile root/);
  }
});

test('AppArmor: the container field, else the beta annotation, else the pod field; deprecated string form too', () => {
  const pod = makePod({ securityContext: { appArmorProfile: { type: 'RuntimeDefault' } }, containers: [container('app'), container('side', { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'k8s-deny' } } })] });
  assert.deepEqual([sc(pod).apparmor, sc(pod).apparmorProfile], [{ profileType: 'RuntimeDefault' }, 'runtime/default']);
  const side = containerSecurityContext(pod, pod.spec!.containers[1]!, { uid: 0 }, opts);
  assert.ok(side.ok);
  assert.deepEqual([side.securityContext.apparmor, side.securityContext.apparmorProfile], [{ profileType: 'Localhost', localhostRef: 'k8s-deny' }, 'localhost/k8s-deny']);
  pod.metadata!.annotations!['container.apparmor.security.beta.kubernetes.io/app'] = 'unconfined';
  assert.deepEqual(sc(pod).apparmor, { profileType: 'Unconfined' }, 'the annotation wins over the pod field');
  assert.equal(sc(makePod({ containers: [container('app')] })).apparmor, undefined);
});

test('sandbox: pod user/group/groups/SELinux, privileged when any container is, RuntimeDefault seccomp, sysctls', () => {
  const pod = makePod({
    securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [7], seLinuxOptions: { type: 'spc_t' }, sysctls: [{ name: 'kernel.shm_rmid_forced', value: '1' }, { name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }] },
    initContainers: [container('init', { securityContext: { privileged: true } })],
    containers: [container('app')],
  });
  const cfg = generatePodSandboxConfig(pod, 0, { podLogsDir: '/logs' });
  assert.deepEqual(cfg.linux, {
    securityContext: {
      namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' }, privileged: true, seccomp: { profileType: 'RuntimeDefault' },
      runAsUser: { value: 1000 }, runAsGroup: { value: 3000 }, supplementalGroups: [2000, 7], selinuxOptions: { user: '', role: '', type: 'spc_t', level: '' },
    },
    sysctls: { 'kernel.shm_rmid_forced': '1', 'net.ipv4.ip_local_port_range': '1024 65535' },
  });
  assert.deepEqual(sandboxSecurity(makePod({ containers: [container('a')] }), {}).securityContext, { namespaceOptions: {}, privileged: false, seccomp: { profileType: 'RuntimeDefault' } });
});

test('image user from ImageStatus: numeric uid, else the name, else root', () => {
  assert.deepEqual(imageUserOf({ uid: { value: '1000' }, username: '' }), { uid: 1000 });
  assert.deepEqual(imageUserOf({ uid: null, username: 'nginx' }), { username: 'nginx' });
  assert.deepEqual(imageUserOf({ uid: null, username: '' }), { uid: 0 });
  assert.deepEqual(imageUserOf(null), { uid: 0 });
});

test('runAsNonRoot: the kubelet messages for runAsUser 0, a root image, a non-numeric image user', () => {
  const pod = (sc: object, ctr: object = {}) => makePod({ securityContext: sc, containers: [container('app', { securityContext: ctr })] });
  const who = '(pod: "web_default(uid-web)", container: app)';
  const c = (p: V1Pod) => p.spec!.containers[0]!;
  let p = pod({ runAsNonRoot: true, runAsUser: 0 });
  assert.equal(verifyRunAsNonRoot(p, c(p), { uid: 1000 }), `container's runAsUser breaks non-root policy ${who}`);
  p = pod({ runAsNonRoot: true });
  assert.equal(verifyRunAsNonRoot(p, c(p), { uid: 0 }), `container has runAsNonRoot and image will run as root ${who}`);
  assert.equal(verifyRunAsNonRoot(p, c(p), { username: 'nginx' }), `container has runAsNonRoot and image has non-numeric user (nginx), cannot verify user is non-root ${who}`);
  assert.equal(verifyRunAsNonRoot(p, c(p), { uid: 1000 }), undefined);
  p = pod({ runAsNonRoot: true }, { runAsNonRoot: false });
  assert.equal(verifyRunAsNonRoot(p, c(p), { uid: 0 }), undefined, 'the container may allow root');
  p = pod({ runAsNonRoot: true }, { runAsUser: 5 });
  assert.equal(verifyRunAsNonRoot(p, c(p), { uid: 0 }), undefined, 'a non-zero runAsUser passes whatever the image says');
});

test('wired: CreateContainer carries the security context; a root image with runAsNonRoot is a CreateContainerConfigError, nothing created', async () => {
  const h = makeHarness({ seccompProfileRoot: '/srv/agent/seccomp' });
  try {
    h.rt.addImage('busybox:1');
    const ok = makePod({ securityContext: { runAsUser: 1000, seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' } }, containers: [container('app', { securityContext: { capabilities: { drop: ['ALL'] } } })] });
    await h.sync(ok);
    const cfg = h.rt.lastConfigOf('app');
    assert.deepEqual(cfg.linux?.securityContext?.runAsUser, { value: 1000 });
    assert.deepEqual(cfg.linux?.securityContext?.capabilities, { addCapabilities: [], dropCapabilities: ['ALL'] });
    assert.deepEqual(cfg.linux?.securityContext?.seccomp, { profileType: 'Localhost', localhostRef: '/srv/agent/seccomp/p.json' });

    const bad = makePod({ securityContext: { runAsNonRoot: true }, containers: [container('app')] }, { name: 'strict' });
    h.take();
    const out = await h.sync(bad);
    assert.deepEqual(h.take().filter((c) => c.startsWith('CreateContainer')), [], 'no container is created');
    const st = out.apiStatus.containerStatuses?.[0]?.state?.waiting;
    assert.equal(st?.reason, 'CreateContainerConfigError');
    assert.equal(st?.message, 'container has runAsNonRoot and image will run as root (pod: "strict_default(uid-strict)", container: app)');

    // A pod that reached the worker unvalidated (no API server): an escaping Localhost profile.
    const escape = makePod({ containers: [container('app', { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '../../../etc/passwd' } } })] }, { name: 'escape' });
    const esc = await h.sync(escape);
    assert.deepEqual(h.take().filter((c) => c.startsWith('CreateContainer')), [], 'nothing is created');
    assert.equal(esc.apiStatus.containerStatuses?.[0]?.state?.waiting?.reason, 'CreateContainerConfigError');
    assert.match(esc.apiStatus.containerStatuses?.[0]?.state?.waiting?.message ?? '', /^spec\.containers\[0\]\.securityContext\.seccompProfile\.localhostProfile "\.\.\/\.\.\/\.\.\/etc\/passwd" must be a path below the seccomp profile root "\/srv\/agent\/seccomp"$/);

    h.rt.imageUsers.set('busybox:1', { username: 'nginx' });
    h.clock.step(60_000);
    const named = await h.sync(bad);
    assert.equal(named.apiStatus.containerStatuses?.[0]?.state?.waiting?.message, 'container has runAsNonRoot and image has non-numeric user (nginx), cannot verify user is non-root (pod: "strict_default(uid-strict)", container: app)');

    h.rt.imageUsers.set('busybox:1', { uid: 1000 });
    h.take();
    h.clock.step(60_000); // past the image view's TTL: ImageStatus is asked again
    await h.sync(bad);
    assert.deepEqual(h.take().filter((c) => /^(ImageStatus|CreateContainer|StartContainer) /.test(c)), ['ImageStatus busybox:1', 'CreateContainer app', 'StartContainer app'], 'a non-root image starts');
    assert.deepEqual(h.rt.lastConfigOf('app').linux?.securityContext?.runAsUser, { value: 1000 });
  } finally {
    h.cleanup();
  }
});

test('wired: --seccomp-default gives containers without a profile RuntimeDefault; an explicit Unconfined stays', async () => {
  const h = makeHarness({ seccompDefault: true });
  try {
    h.rt.addImage('busybox:1');
    await h.sync(makePod({ containers: [container('app'), container('open', { securityContext: { seccompProfile: { type: 'Unconfined' } } })] }));
    assert.deepEqual(h.rt.lastConfigOf('app').linux?.securityContext?.seccomp, { profileType: 'RuntimeDefault' });
    assert.deepEqual(h.rt.lastConfigOf('open').linux?.securityContext?.seccomp, { profileType: 'Unconfined' });
  } finally {
    h.cleanup();
  }
});
