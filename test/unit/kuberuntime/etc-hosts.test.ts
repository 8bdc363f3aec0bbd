import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { managedHostsFileContent, nodeHostsFileContent, shouldMountHostsFile } from '../../../workers/kuberuntime/etc-hosts.js';
import { kubeletManagedMounts } from '../../../workers/kuberuntime/kubelet-managed-mounts.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { emptyNodeDnsSettings } from '../../../src/shared/protocol/node-dns-settings.js';

test('managed hosts file: localhost lines, pod IPs with FQDN and hostname, then the aliases (the kubelet\'s bytes)', () => {
  const s = managedHostsFileContent(['10.1.0.5', 'fd00::5'], 'web', 'sub.ns.svc.cluster.local', [{ ip: '10.9.9.9', hostnames: ['a', 'b.example'] }]);
  assert.equal(s, '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n10.1.0.5\tweb.sub.ns.svc.cluster.local\tweb\nfd00::5\tweb.sub.ns.svc.cluster.local\tweb\n\n# Entries added by HostAliases.\n10.9.9.9\ta\tb.example\n');
  assert.match(managedHostsFileContent(['10.1.0.5'], 'web', '', undefined), /\n10\.1\.0\.5\tweb\n$/);
  assert.equal(nodeHostsFileContent('127.0.0.1 localhost\n', [{ ip: '1.2.3.4', hostnames: ['x'] }]), '# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n\n# Entries added by HostAliases.\n1.2.3.4\tx\n');
});

test('mounted only once the pod has IPs, and not over a volume at /etc/hosts', () => {
  const c: V1Container = { name: 'c' };
  assert.equal(shouldMountHostsFile([], c), false);
  assert.equal(shouldMountHostsFile(['10.0.0.1'], c), true);
  assert.equal(shouldMountHostsFile(['10.0.0.1'], { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/etc/hosts' }] }), false);
});

test('kubelet-managed mounts: hosts file and a fresh 0666 termination-log per instance under <root>/pods/<uid>', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-managed-'));
  try {
    let n = 0;
    const mounts = kubeletManagedMounts({ rootDir: root, dns: { ...emptyNodeDnsSettings(), clusterDomain: 'cluster.local' }, hostIP: '192.0.2.100', random: () => (n++ % 2) * 0.5, logger: silentLogger });
    const pod: V1Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { hostname: 'h', subdomain: 's', containers: [{ name: 'c', terminationMessagePath: '/dev/termination-log' }] } };
    const r = await mounts(pod, pod.spec!.containers[0]!, ['10.0.0.7']);
    assert.ok(r.ok);
    assert.deepEqual(r.mounts.map((m) => [m.containerPath, m.hostPath]), [
      ['/etc/hosts', path.join(root, 'pods', 'u1', 'etc-hosts')],
      ['/dev/termination-log', path.join(root, 'pods', 'u1', 'containers', 'c', '00000000')],
    ]);
    assert.match(fs.readFileSync(path.join(root, 'pods', 'u1', 'etc-hosts'), 'utf8'), /\n10\.0\.0\.7\th\.s\.ns\.svc\.cluster\.local\th\n$/);
    assert.equal(fs.statSync(r.mounts[1]!.hostPath).mode & 0o777, 0o666);
    // A second instance gets its own file; a name collision is retried (random 0 again → 0.5).
    const again = await mounts(pod, pod.spec!.containers[0]!, ['10.0.0.7']);
    assert.ok(again.ok);
    assert.equal(again.mounts[1]!.hostPath, path.join(root, 'pods', 'u1', 'containers', 'c', '80000000'));
    // A bad uid never becomes a path.
    const bad = await mounts({ ...pod, metadata: { ...pod.metadata, uid: '../x' } }, pod.spec!.containers[0]!, ['10.0.0.7']);
    assert.equal(bad.ok, false);
    // A symlink planted at the hosts file is not followed.
    fs.rmSync(path.join(root, 'pods', 'u1', 'etc-hosts'));
    fs.symlinkSync('/etc/passwd', path.join(root, 'pods', 'u1', 'etc-hosts'));
    const sym = await mounts(pod, pod.spec!.containers[0]!, ['10.0.0.7']);
    assert.equal(sym.ok, false);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('host-network pods get the node file plus aliases, or fail with the reason it could not be read', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-managed-'));
  try {
    const pod: V1Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u2' }, spec: { hostNetwork: true, hostAliases: [{ ip: '1.2.3.4', hostnames: ['x'] }], containers: [{ name: 'c', terminationMessagePath: '' }] } };
    const ok = kubeletManagedMounts({ rootDir: root, dns: { ...emptyNodeDnsSettings(), nodeHosts: { ok: true, content: '10.0.0.1 nodehost\n' } }, hostIP: '192.0.2.100', random: () => 0, logger: silentLogger });
    const r = await ok(pod, pod.spec!.containers[0]!, []);
    assert.ok(r.ok);
    assert.equal(r.mounts.length, 1, 'no termination-log mount for an empty path');
    assert.equal(fs.readFileSync(r.mounts[0]!.hostPath, 'utf8'), '# Kubernetes-managed hosts file (host network).\n10.0.0.1 nodehost\n\n# Entries added by HostAliases.\n1.2.3.4\tx\n');
    const failing = kubeletManagedMounts({ rootDir: root, dns: { ...emptyNodeDnsSettings(), nodeHosts: { ok: false, message: 'EACCES: /etc/hosts' } }, hostIP: '192.0.2.100', random: () => 0, logger: silentLogger });
    assert.deepEqual(await failing(pod, pod.spec!.containers[0]!, []), { ok: false, message: 'EACCES: /etc/hosts' });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
