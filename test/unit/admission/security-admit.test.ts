/** Security admission (sysctl allowlist, AppArmor, unsupported settings) and the --allowed-unsafe-sysctls flag. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { SysctlAllowlist, SysctlAllowlistError } from '../../../src/main/admission/sysctl-allowlist.js';
import { admitSecurity, hostAppArmorEnabled } from '../../../src/main/admission/security-admit.js';
import { parseAgentConfig, type AgentConfig } from '../../../src/main/agent/agent-config.js';
import { normalizeSysctlName, safeSysctls } from '../../../src/shared/kubetypes/sysctl-names.js';

function pod(spec: Partial<V1PodSpec> = {}, annotations: Record<string, string> = {}): V1Pod {
  return { metadata: { name: 'p', namespace: 'default', uid: 'u', annotations }, spec: { containers: [{ name: 'app', image: 'busybox' }], ...spec } };
}
const sysctls = (...names: string[]): Partial<V1PodSpec> => ({ securityContext: { sysctls: names.map((name) => ({ name, value: '1' })) } });

test('sysctls: the safe set is admitted; others fail SysctlForbidden with the kubelet message unless allowed', () => {
  const node = SysctlAllowlist.forNode('6.1.0', []);
  assert.deepEqual(node.admit(pod(sysctls('kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_rmem'))), { admit: true });
  assert.deepEqual(node.admit(pod(sysctls('kernel.msgmax'))), { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "kernel.msgmax" not allowlisted' });
  assert.deepEqual(node.admit(pod(sysctls('net/ipv4/ip_local_port_range'))), { admit: true }, 'slash-separated names are normalized');
  const host = node.admit(pod({ hostNetwork: true, ...sysctls('net.ipv4.ip_local_port_range') }));
  assert.deepEqual(host, { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "net.ipv4.ip_local_port_range" not allowed with host Net enabled' });

  const unsafe = SysctlAllowlist.forNode('6.1.0', ['kernel.msg*', 'net.core.somaxconn']);
  assert.deepEqual(unsafe.admit(pod(sysctls('kernel.msgmax', 'net.core.somaxconn'))), { admit: true });
  assert.equal(unsafe.admit(pod({ hostIPC: true, ...sysctls('kernel.msgmax') })).admit, false);
  assert.equal(unsafe.admit(pod(sysctls('kernel.sem'))).admit, false);
});

test('sysctl allowlist patterns: invalid or not namespaced patterns are refused; the safe set follows the kernel', () => {
  assert.throws(() => new SysctlAllowlist(['kernel.panic']), (e: unknown) => e instanceof SysctlAllowlistError && /the sysctls "kernel.panic" are not known to be namespaced/.test(e.message));
  assert.throws(() => new SysctlAllowlist(['../x']), SysctlAllowlistError);
  assert.throws(() => new SysctlAllowlist(['net.*.x']), SysctlAllowlistError);
  assert.ok(new SysctlAllowlist(['net.*', 'fs.mqueue.*', 'kernel.shm*']));
  assert.ok(!safeSysctls('4.4.0').includes('net.ipv4.tcp_keepalive_time'));
  assert.ok(safeSysctls('4.5.0-generic').includes('net.ipv4.tcp_keepalive_time'));
  assert.ok(safeSysctls('garbage').includes('kernel.shm_rmid_forced'));
  assert.equal(normalizeSysctlName('net/ipv4/conf/eno2.100/rp_filter'), 'net.ipv4.conf.eno2/100.rp_filter');
});

test('AppArmor: refused on a host without it (the kubelet message), admitted when it is enforced or unconfined', () => {
  const deps = { sysctls: SysctlAllowlist.forNode('6.1.0', []), appArmorEnabled: false };
  const field = pod({ securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } });
  assert.deepEqual(admitSecurity(field, deps), { admit: false, reason: 'AppArmor', message: 'Cannot enforce AppArmor: AppArmor is not enabled on the host' });
  const ann = pod({}, { 'container.apparmor.security.beta.kubernetes.io/app': 'localhost/k8s-deny' });
  assert.equal(admitSecurity(ann, deps).admit, false, 'the annotation counts too');
  assert.deepEqual(admitSecurity(pod({}, { 'container.apparmor.security.beta.kubernetes.io/app': 'unconfined' }), deps), { admit: true });
  assert.deepEqual(admitSecurity(field, { ...deps, appArmorEnabled: true }), { admit: true });
  const running = { ...field, status: { phase: 'Running' } };
  assert.deepEqual(admitSecurity(running, deps), { admit: true }, 'only pending pods are checked');
  assert.equal(hostAppArmorEnabled(() => false, () => 'Y'), false);
  assert.equal(hostAppArmorEnabled(() => true, () => 'Y\n'), true);
  assert.equal(hostAppArmorEnabled(() => true, () => { throw new Error('ENOENT'); }), false);
});

test('settings shardlet does not implement are refused naming the field, never dropped', () => {
  const deps = { sysctls: SysctlAllowlist.forNode('6.1.0', []), appArmorEnabled: true };
  const strict = admitSecurity(pod({ securityContext: { supplementalGroupsPolicy: 'Strict' } }), deps);
  assert.deepEqual(strict, { admit: false, reason: 'SupplementalGroupsPolicyNotSupported', message: 'spec.securityContext.supplementalGroupsPolicy: SupplementalGroupsPolicy=Strict is not supported in this node' });
  assert.deepEqual(admitSecurity(pod({ securityContext: { supplementalGroupsPolicy: 'Merge' } }), deps), { admit: true });
  const ann = admitSecurity(pod({}, { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' }), deps);
  assert.equal(ann.admit, false);
  assert.match(ann.admit ? '' : ann.message, /^metadata\.annotations\[seccomp\.security\.alpha\.kubernetes\.io\/pod\]: /);
  const ctr = admitSecurity(pod({}, { 'container.seccomp.security.alpha.kubernetes.io/app': 'localhost/p.json' }), deps);
  assert.equal(ctr.admit ? '' : ctr.reason, 'SeccompAnnotationNotSupported');
  assert.deepEqual(admitSecurity(pod({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }, { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' }), deps), { admit: true }, 'synced into the field: honoured');
  assert.deepEqual(admitSecurity(pod({}, { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' }), deps), { admit: true }, 'unconfined is what runs anyway');
});

test('--allowed-unsafe-sysctls / allowedUnsafeSysctls: comma list or YAML list; a bad pattern fails startup naming the flag', () => {
  const read = (p: string): string => ({ '/c.yaml': 'staticPodPath: /m\nallowedUnsafeSysctls: ["kernel.msg*", net.core.somaxconn]\n', '/bad.yaml': 'staticPodPath: /m\nallowedUnsafeSysctls: 3\n' })[p] ?? '';
  const flag = parseAgentConfig(['--pod-manifest-path', '/m', '--allowed-unsafe-sysctls', 'kernel.msg*, net.core.somaxconn'], read) as AgentConfig;
  assert.deepEqual(flag.allowedUnsafeSysctls, ['kernel.msg*', 'net.core.somaxconn']);
  assert.deepEqual((parseAgentConfig(['--config', '/c.yaml'], read) as AgentConfig).allowedUnsafeSysctls, ['kernel.msg*', 'net.core.somaxconn']);
  assert.deepEqual((parseAgentConfig(['--pod-manifest-path', '/m'], read) as AgentConfig).allowedUnsafeSysctls, []);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/m', '--allowed-unsafe-sysctls', 'kernel.panic'], read), /--allowed-unsafe-sysctls: the sysctls "kernel.panic" are not known to be namespaced/);
  assert.throws(() => parseAgentConfig(['--config', '/bad.yaml'], read), /allowedUnsafeSysctls: must be a list of strings/);
});

test('--seccomp-default / seccompDefault reach the pod-worker threads', async () => {
  const { podWorkerThreadConfig } = await import('../../../src/main/agent/agent-dispatch.js');
  const { emptyNodeDnsSettings } = await import('../../../src/shared/protocol/node-dns-settings.js');
  const on = parseAgentConfig(['--pod-manifest-path', '/m', '--seccomp-default'], () => '') as AgentConfig;
  assert.equal(on.seccompDefault, true);
  assert.equal((parseAgentConfig(['--pod-manifest-path', '/m'], () => '') as AgentConfig).seccompDefault, false);
  const cfg = podWorkerThreadConfig({ config: on, endpoint: 'unix:///x', runtimeName: 'containerd', cacheBuffer: new SharedArrayBuffer(8), metricsBuffer: new SharedArrayBuffer(8), recordEvents: false, dns: emptyNodeDnsSettings() });
  assert.equal(cfg.seccompDefault, true);
});
