import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { getPodDNS } from '../../../workers/kuberuntime/pod-dns.js';
import { MAX_DNS_SEARCH_LIST_CHARS } from '../../../src/shared/dns/dns-limits.js';
import { sandboxNaming } from '../../../workers/kuberuntime/sandbox-dns.js';
import { parseResolvConf } from '../../../src/shared/dns/resolv-conf.js';
import type { NodeDnsSettings } from '../../../src/shared/protocol/node-dns-settings.js';

function node(o: Partial<NodeDnsSettings> = {}): NodeDnsSettings {
  return {
    clusterDNS: ['10.96.0.10'],
    clusterDomain: 'cluster.local',
    resolvConf: '/etc/resolv.conf',
    host: { ok: true, conf: { servers: ['192.0.2.1', '192.0.2.2'], searches: ['example.org'], options: ['timeout:2', 'ndots:1'] } },
    nodeIPs: ['192.0.2.100'],
    nodeHosts: { ok: true, content: '127.0.0.1 localhost\n' },
    ...o,
  };
}

function pod(spec: V1Pod['spec'] = { containers: [] }): V1Pod {
  return { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { ...spec, containers: spec.containers ?? [] } };
}

test('parseResolvConf: nameservers accumulate, last search and options win, trailing dots dropped, empty nameserver is an error', () => {
  const r = parseResolvConf('# c\nnameserver 1.1.1.1\nsearch a. b\nnameserver 2.2.2.2\nsearch c.example.\noptions ndots:3 rotate\n');
  assert.deepEqual(r, { ok: true, conf: { servers: ['1.1.1.1', '2.2.2.2'], searches: ['c.example'], options: ['ndots:3', 'rotate'] } });
  assert.deepEqual(parseResolvConf('nameserver\n'), { ok: false, message: 'nameserver list is empty ' });
});

test('ClusterFirst: cluster server, cluster searches before the host ones, ndots:5', () => {
  const r = getPodDNS(pod({ containers: [], dnsPolicy: 'ClusterFirst' }), node());
  assert.deepEqual(r, { ok: true, events: [], config: { servers: ['10.96.0.10'], searches: ['ns.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'example.org'], options: ['ndots:5'] } });
});

test('ClusterFirst on the host network is Default; ClusterFirstWithHostNet keeps the cluster server', () => {
  const host = getPodDNS(pod({ containers: [], hostNetwork: true, dnsPolicy: 'ClusterFirst' }), node());
  assert.ok(host.ok);
  assert.deepEqual(host.config, { servers: ['192.0.2.1', '192.0.2.2'], searches: ['example.org'], options: ['timeout:2', 'ndots:1'] });
  const withNet = getPodDNS(pod({ containers: [], hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), node());
  assert.ok(withNet.ok);
  assert.deepEqual(withNet.config.servers, ['10.96.0.10']);
});

test('ClusterFirst without --cluster-dns falls back to Default with the MissingClusterDNS event', () => {
  const r = getPodDNS(pod({ containers: [], dnsPolicy: 'ClusterFirst' }), node({ clusterDNS: [] }));
  assert.ok(r.ok);
  assert.deepEqual(r.config.servers, ['192.0.2.1', '192.0.2.2']);
  assert.deepEqual(r.events, [{ reason: 'MissingClusterDNS', message: 'pod: "p_ns(u1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.' }]);
});

test('Default with --resolv-conf "": localhost per node IP family and search "."', () => {
  const r = getPodDNS(pod({ containers: [], dnsPolicy: 'Default' }), node({ resolvConf: '', host: { ok: true, conf: { servers: [], searches: [], options: [] } }, nodeIPs: ['192.0.2.100', 'fd00::1'] }));
  assert.ok(r.ok);
  assert.deepEqual(r.config, { servers: ['127.0.0.1', '::1'], searches: ['.'], options: [] });
});

test('None uses only dnsConfig; options merge by name with the pod value winning', () => {
  const none = getPodDNS(pod({ containers: [], dnsPolicy: 'None', dnsConfig: { nameservers: ['10.0.0.1'], searches: ['x.example'], options: [{ name: 'ndots', value: '2' }] } }), node());
  assert.deepEqual(none, { ok: true, events: [], config: { servers: ['10.0.0.1'], searches: ['x.example'], options: ['ndots:2'] } });
  const merged = getPodDNS(pod({ containers: [], dnsPolicy: 'Default', dnsConfig: { nameservers: ['192.0.2.1'], options: [{ name: 'ndots', value: '4' }, { name: 'edns0' }] } }), node());
  assert.ok(merged.ok);
  assert.deepEqual(merged.config.servers, ['192.0.2.1', '192.0.2.2'], 'duplicates dropped');
  assert.deepEqual(merged.config.options, ['timeout:2', 'ndots:4', 'edns0']);
});

test('limits: 3 nameservers, 32 searches, 2048 characters, each path at most 253: trimmed with DNSConfigForming', () => {
  const servers = Array.from({ length: 10 }, (_, i) => `10.0.0.${i + 1}`);
  const searches = Array.from({ length: 100 }, (_, i) => `s${i}.example`);
  const r = getPodDNS(pod({ containers: [], dnsPolicy: 'None', dnsConfig: { nameservers: servers, searches: [...searches, 'x'.repeat(300)] } }), node());
  assert.ok(r.ok);
  assert.deepEqual(r.config.servers, servers.slice(0, 3));
  assert.deepEqual(r.config.searches, searches.slice(0, 32));
  assert.deepEqual(r.events.map((e) => e.reason), ['DNSConfigForming', 'DNSConfigForming']);
  assert.equal(r.events[0]!.message, 'Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.1 10.0.0.2 10.0.0.3');
  assert.match(r.events[1]!.message, /^Search Line limits were exceeded, some search paths have been omitted, the applied search line is: s0\.example s1\.example .* s31\.example$/);
  const long = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')}${'a'.repeat(148)}`);
  const byChars = getPodDNS(pod({ containers: [], dnsPolicy: 'None', dnsConfig: { nameservers: ['10.0.0.1'], searches: long } }), node());
  assert.ok(byChars.ok);
  assert.ok(byChars.config.searches.join(' ').length <= MAX_DNS_SEARCH_LIST_CHARS);
  assert.deepEqual(byChars.config.searches, long.slice(0, 13), '13 × 150 + 12 spaces = 1962 ≤ 2048 < 14 × 150 + 13');
});

test('an unreadable --resolv-conf fails the sandbox config with the reason', () => {
  const r = sandboxNaming(pod(), node({ host: { ok: false, message: 'open /nope: no such file or directory' } }));
  assert.deepEqual(r, { ok: false, message: 'Failed to generate sandbox config for pod "p_ns(u1)": open /nope: no such file or directory' });
});

test('hostname: spec.hostname, truncation, setHostnameAsFQDN and its 64-character limit; none on the host network', () => {
  const fqdn = sandboxNaming(pod({ containers: [], hostname: 'web', subdomain: 'svc1', setHostnameAsFQDN: true }), node());
  assert.ok(fqdn.ok);
  assert.equal(fqdn.hostname, 'web.svc1.ns.svc.cluster.local');
  const plain = sandboxNaming(pod({ containers: [], hostname: 'web', subdomain: 'svc1' }), node());
  assert.ok(plain.ok);
  assert.equal(plain.hostname, 'web');
  const long = sandboxNaming(pod({ containers: [], hostname: 'h'.repeat(40), subdomain: 'svc1', setHostnameAsFQDN: true }), node());
  assert.equal(long.ok, false);
  assert.match(long.ok ? '' : long.message, /FQDN h+\.svc1\.ns\.svc\.cluster\.local is too long \(64 characters is the max, 66 characters requested\)/);
  const host = sandboxNaming(pod({ containers: [], hostNetwork: true, hostname: 'web' }), node());
  assert.ok(host.ok);
  assert.equal(host.hostname, undefined);
});
