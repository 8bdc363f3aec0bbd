/**
 * Bad securityContext input in manifests (issue 24, "Bad input"): static pod files and manifest
 * URLs reach the node unvalidated, so the manifest path refuses what the API server would,
 * naming the file and the field — ids out of range, a Localhost seccomp profile that climbs out of
 * the profile root, sysctl names that are not sysctl names — and accepts the valid forms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podsFromManifest, type ManifestResult } from '../../../src/shared/manifest/manifest-pods.js';
import { podYaml } from './bad-input-corpus.js';

const file = { source: 'file' as const, origin: '/etc/kubernetes/manifests/web.yaml', nodeName: 'node-1', allowLists: false };

function err(r: ManifestResult): string {
  assert.equal(r.ok, false, `expected an error, got ${r.ok ? r.pods.length : 0} pods`);
  return r.ok ? '' : r.error.message;
}

test('runAsUser / runAsGroup / fsGroup / supplementalGroups out of range name the field', () => {
  const cases: [string, { spec?: string; container?: string }][] = [
    ['spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive', { spec: '  securityContext: {runAsUser: -1}' }],
    ['spec.securityContext.fsGroup: Invalid value: 2147483648', { spec: '  securityContext: {fsGroup: 2147483648}' }],
    ['spec.securityContext.supplementalGroups[1]: Invalid value: -5', { spec: '  securityContext: {supplementalGroups: [1, -5]}' }],
    ['spec.containers[0].securityContext.runAsUser: Invalid value: 4294967296', { container: '    securityContext: {runAsUser: 4294967296}' }],
    ['spec.containers[0].securityContext.runAsGroup: Invalid value: -2', { container: '    securityContext: {runAsGroup: -2}' }],
  ];
  for (const [want, o] of cases) {
    const m = err(podsFromManifest(podYaml('web', o), file));
    assert.ok(m.includes(want), `${m}\n  wants ${want}`);
    assert.ok(m.startsWith('/etc/kubernetes/manifests/web.yaml: '), m);
  }
});

test('a Localhost seccomp profile that climbs out of the profile root, or is absolute, is refused', () => {
  for (const [profile, want] of [
    ['../../../etc/shadow', `spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: "../../../etc/shadow": must not contain '..'`],
    ['/etc/shadow', 'spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: "/etc/shadow": must be a relative path'],
    ['a/../../b', "must not contain '..'"],
  ] as const) {
    const m = err(podsFromManifest(podYaml('web', { container: `    securityContext: {seccompProfile: {type: Localhost, localhostProfile: ${JSON.stringify(profile)}}}` }), file));
    assert.ok(m.includes(want), m);
  }
  const pod = err(podsFromManifest(podYaml('web', { spec: '  securityContext: {seccompProfile: {type: Localhost}}' }), file));
  assert.match(pod, /spec\.securityContext\.seccompProfile\.localhostProfile: Required value: must be set when seccomp type is Localhost/);
  const type = err(podsFromManifest(podYaml('web', { spec: '  securityContext: {seccompProfile: {type: Strict}}' }), file));
  assert.match(type, /spec\.securityContext\.seccompProfile\.type: Unsupported value: "Strict"/);
  assert.ok(podsFromManifest(podYaml('web', { container: '    securityContext: {seccompProfile: {type: Localhost, localhostProfile: profiles/audit.json}}' }), file).ok);
});

test('sysctl names with `..`, a leading `/`, spaces or a path are refused; dotted and slashed names are valid', () => {
  for (const name of ['../../proc/sysrq-trigger', 'net..ipv4', '/net/ipv4/ip_forward', 'net.ipv4.', 'kernel.shm_rmid_forced/../../x', 'Net.IPv4', 'a b']) {
    const m = err(podsFromManifest(podYaml('web', { spec: `  securityContext: {sysctls: [{name: ${JSON.stringify(name)}, value: "1"}]}` }), file));
    assert.ok(m.includes(`spec.securityContext.sysctls[0].name: Invalid value: ${JSON.stringify(name)}: must have at most 253 characters and match regex`), m);
  }
  const dup = err(podsFromManifest(podYaml('web', { spec: '  securityContext: {sysctls: [{name: kernel.shm_rmid_forced, value: "1"}, {name: kernel.shm_rmid_forced, value: "0"}]}' }), file));
  assert.match(dup, /spec\.securityContext\.sysctls\[1\]\.name: Duplicate value: "kernel\.shm_rmid_forced"/);
  const host = err(podsFromManifest(podYaml('web', { spec: '  hostNetwork: true\n  securityContext: {sysctls: [{name: net.ipv4.ip_local_port_range, value: "1024 65535"}]}' }), file));
  assert.match(host, /spec\.securityContext\.sysctls\[0\]\.name: Invalid value: "net\.ipv4\.ip_local_port_range": may not be specified when 'hostNetwork' is true/);
  for (const name of ['kernel.shm_rmid_forced', 'net/ipv4/ip_local_port_range', 'net.ipv4.conf.eth0/100.rp_filter']) {
    assert.ok(podsFromManifest(podYaml('web', { spec: `  securityContext: {sysctls: [{name: ${JSON.stringify(name)}, value: "1"}]}` }), file).ok, name);
  }
});

test('enums and contradictions: procMount, fsGroupChangePolicy, AppArmor, privileged without escalation', () => {
  assert.match(err(podsFromManifest(podYaml('web', { container: '    securityContext: {procMount: Masked}' }), file)), /spec\.containers\[0\]\.securityContext\.procMount: Unsupported value: "Masked"/);
  assert.match(err(podsFromManifest(podYaml('web', { spec: '  securityContext: {fsGroupChangePolicy: Sometimes}' }), file)), /spec\.securityContext\.fsGroupChangePolicy: Unsupported value/);
  assert.match(err(podsFromManifest(podYaml('web', { container: '    securityContext: {appArmorProfile: {type: Localhost}}' }), file)), /appArmorProfile\.localhostProfile: Required value/);
  assert.match(err(podsFromManifest(podYaml('web', { meta: '  annotations: {container.apparmor.security.beta.kubernetes.io/app: "bogus"}' }), file)), /metadata\.annotations\[container\.apparmor\.security\.beta\.kubernetes\.io\/app\]: Invalid value: "bogus": invalid AppArmor profile name/);
  assert.match(err(podsFromManifest(podYaml('web', { container: '    securityContext: {privileged: true, allowPrivilegeEscalation: false}' }), file)), /cannot set `allowPrivilegeEscalation` to false and `privileged` to true/);
  assert.ok(podsFromManifest(podYaml('web', { spec: '  securityContext: {runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, runAsNonRoot: true}', container: '    securityContext: {capabilities: {drop: [ALL]}, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false}' }), file).ok);
});
