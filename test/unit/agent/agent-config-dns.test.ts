import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentConfig, type AgentConfig } from '../../../src/main/agent/agent-config.js';

const base = ['--pod-manifest-path', '/m'];
const read = (p: string): string => {
  if (p === '/dns.yaml') return 'clusterDNS: ["10.96.0.10", "fd00::a"]\nclusterDomain: cluster.local\nresolvConf: ""\n';
  throw new Error(`ENOENT: ${p}`);
};

test('DNS flags: defaults, comma lists, the config file fields, --resolv-conf "" disables', () => {
  const d = parseAgentConfig(base) as AgentConfig;
  assert.deepEqual([d.clusterDNS, d.clusterDomain, d.resolvConf], [[], '', '/etc/resolv.conf']);
  const f = parseAgentConfig([...base, '--cluster-dns', '10.0.0.10,10.0.0.11', '--cluster-domain', 'k8s.local', '--resolv-conf', '']) as AgentConfig;
  assert.deepEqual([f.clusterDNS, f.clusterDomain, f.resolvConf], [['10.0.0.10', '10.0.0.11'], 'k8s.local', '']);
  const y = parseAgentConfig([...base, '--config', '/dns.yaml'], read) as AgentConfig;
  assert.deepEqual([y.clusterDNS, y.clusterDomain, y.resolvConf], [['10.96.0.10', 'fd00::a'], 'cluster.local', '']);
});

test('bad DNS flags name the flag', () => {
  assert.throws(() => parseAgentConfig([...base, '--cluster-dns', '10.0.0.1,nope']), /--cluster-dns: must be a list of IP addresses, got "nope"/);
  assert.throws(() => parseAgentConfig([...base, '--cluster-domain', 'bad domain\nnameserver 1.1.1.1']), /--cluster-domain: must be a DNS-1123 subdomain/);
});
