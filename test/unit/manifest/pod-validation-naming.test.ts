import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { validatePod } from '../../../src/shared/manifest/pod-validation.js';
import { formatFieldErrors } from '../../../src/shared/manifest/field-error.js';

function pod(spec: Record<string, unknown>): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'default' },
    spec: { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', containers: [{ name: 'c', image: 'busybox', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' }], ...spec },
  } as V1Pod;
}

function errors(spec: Record<string, unknown>): string {
  return formatFieldErrors(validatePod(pod(spec)));
}

test('a valid pod with dnsConfig, hostAliases, hostname and subdomain passes', () => {
  assert.equal(errors({ hostname: 'h', subdomain: 's', setHostnameAsFQDN: true, dnsPolicy: 'None', dnsConfig: { nameservers: ['10.0.0.1', 'fd00::1'], searches: ['a.example.'], options: [{ name: 'ndots', value: '2' }] }, hostAliases: [{ ip: '10.1.1.1', hostnames: ['x.example'] }] }), '');
});

test('ten nameservers, 100 search domains, bad IPs: errors naming the field', () => {
  const ten = Array.from({ length: 10 }, (_, i) => `10.0.0.${i}`);
  assert.match(errors({ dnsConfig: { nameservers: ten } }), /^spec\.dnsConfig\.nameservers: Invalid value: "10 items": must not have more than 3 nameservers/);
  const hundred = Array.from({ length: 100 }, (_, i) => `s${i}.example`);
  assert.equal(errors({ dnsConfig: { searches: hundred } }), 'spec.dnsConfig.searches: Invalid value: "100 items": must not have more than 32 search paths');
  assert.match(errors({ dnsConfig: { searches: Array.from({ length: 30 }, () => 'a'.repeat(80)) } }), /must not have more than 2048 characters \(including spaces\) in the search list/);
  assert.match(errors({ dnsConfig: { nameservers: ['not-an-ip'] } }), /spec\.dnsConfig\.nameservers\[0\]: Invalid value: "not-an-ip": must be a valid IP address/);
  assert.match(errors({ dnsConfig: { searches: ['Bad_Domain'] } }), /spec\.dnsConfig\.searches\[0\]: Invalid value: "Bad_Domain": a lowercase RFC 1123 subdomain/);
  assert.match(errors({ dnsConfig: { options: [{ name: 'ndots', value: '2\nnameserver 6.6.6.6' }] } }), /spec\.dnsConfig\.options\[0\]\.value: Invalid value: .*whitespace or control characters/);
  assert.match(errors({ dnsConfig: { options: [{ value: '1' }] } }), /spec\.dnsConfig\.options\[0\]: Required value: must not be empty/);
});

test('dnsPolicy None needs dnsConfig with a nameserver', () => {
  assert.equal(errors({ dnsPolicy: 'None' }), 'spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None');
  assert.equal(errors({ dnsPolicy: 'None', dnsConfig: { searches: ['a'] } }), 'spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None');
});

test('hostAliases with invalid IPs or hostnames; hostname and subdomain as DNS labels', () => {
  assert.equal(errors({ hostAliases: [{ ip: '999.1.1.1', hostnames: ['ok'] }] }), 'spec.hostAliases[0].ip: Invalid value: "999.1.1.1": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)');
  assert.match(errors({ hostAliases: [{ ip: '1.1.1.1', hostnames: ['a\nb'] }] }), /^spec\.hostAliases\[0\]\.hostnames: Invalid value: "a\\nb"/);
  assert.match(errors({ hostname: 'Bad.Name' }), /^spec\.hostname: Invalid value: "Bad\.Name": a lowercase RFC 1123 label/);
  assert.match(errors({ subdomain: 'x'.repeat(64) }), /^spec\.subdomain: Invalid value: .*must be no more than 63 characters/);
  assert.match(errors({ setHostnameAsFQDN: 'yes' }), /^spec\.setHostnameAsFQDN: Invalid value: "yes": must be a boolean/);
});

test('termination message policy and path', () => {
  const c = (o: Record<string, unknown>) => ({ containers: [{ name: 'c', image: 'busybox', ...o }] });
  assert.equal(errors(c({ terminationMessagePolicy: 'Sometimes' })), 'spec.containers[0].terminationMessagePolicy: Unsupported value: "Sometimes": supported values: "FallbackToLogsOnError", "File"');
  assert.equal(errors(c({ terminationMessagePath: 'relative/log' })), 'spec.containers[0].terminationMessagePath: Invalid value: "relative/log": must be an absolute path');
  assert.match(errors(c({ terminationMessagePath: `/${'a'.repeat(5000)}` })), /must be no more than 4096 bytes/);
});
