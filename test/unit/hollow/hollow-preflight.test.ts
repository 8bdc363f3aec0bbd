/**
 * Hollow preflight against a fake PreflightApi: a node identity is refused before any API call,
 * a denied verb is named, a taken name is named, and a clean run makes exactly the access checks
 * and one node listing. The certificates are self-signed fixtures (openssl, 100 years).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hollowPreflight, HollowPreflightError, NODE_ACCESS, nodeIdentityOf, type AccessCheck, type PreflightApi } from '../../../src/main/hollow/hollow-preflight.js';

/** O=system:nodes, CN=system:node:n1 */
const NODE_CERT = `-----BEGIN CERTIFICATE-----
MIIBtzCCAV2gAwIBAgIUD2IwnF/kKciGkdjhV4H6V+FiVnUwCgYIKoZIzj0EAwIw
MDEVMBMGA1UECgwMc3lzdGVtOm5vZGVzMRcwFQYDVQQDDA5zeXN0ZW06bm9kZTpu
MTAgFw0yNjExMjcyMzA1MDlaGA8yMTI2MTEwMzIzMDUwOVowMDEVMBMGA1UECgwM
c3lzdGVtOm5vZGVzMRcwFQYDVQQDDA5zeXN0ZW06bm9kZTpuMTBZMBMGByqGSM49
AgEGCCqGSM49AwEHA0IABMkb7WJSyeSjz4R5wjMzbxtfpSU/Bh5YFV++wq/1R76h
3Trl1Em8IVLHp9xznjDQUjvjU9Z/aSufYMWQIp+cAvqjUzBRMB0GA1UdDgQWBBTe
TkK3R1sZKYQXyNU3hxRpIJjcZjAfBgNVHSMEGDAWgBTeTkK3R1sZKYQXyNU3hxRp
IJjcZjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQC2E2NhRWDb
4JnVcYqbSCHdX+r7eYq04pJtlYFiIdRnYgIgd/8TzI2PVXB1GYTkqvjeNlnOKB6y
9FogaZslx3CNupA=
-----END CERTIFICATE-----
`;
/** O=system:masters, CN=admin */
const ADMIN_CERT = `-----BEGIN CERTIFICATE-----
MIIBqTCCAU+gAwIBAgIUBJAeqN/L34IqE/HZG4rSnWMn6LEwCgYIKoZIzj0EAwIw
KTEXMBUGA1UECgwOc3lzdGVtOm1hc3RlcnMxDjAMBgNVBAMMBWFkbWluMCAXDTI2
MTEyNzIzMDUwOVoYDzIxMjYxMTAzMjMwNTA5WjApMRcwFQYDVQQKDA5zeXN0ZW06
bWFzdGVyczEOMAwGA1UEAwwFYWRtaW4wWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC
AASQRPmH7AYuXXmbR87buAXwyS4r/V6mpXt3xWzsQiT3w2nfN7PaFFmcU4N72z/w
qAJWQisgxS9jQInYu5tjr1mio1MwUTAdBgNVHQ4EFgQUH9mLO2N3iqgrfKY+4zLs
to/uRFYwHwYDVR0jBBgwFoAUH9mLO2N3iqgrfKY+4zLsto/uRFYwDwYDVR0TAQH/
BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiEA0U0bPbHpXH6U4hvhy2YVfHZ6erf5
o4U7/njBrJMubOYCICgja8/0OljrIN+9eYJ2DAhYaN5BqCgTFIm4iVQeTaO7
-----END CERTIFICATE-----
`;

function fakeApi(opts: { deny?: (a: AccessCheck) => boolean; nodes?: string[] } = {}): PreflightApi & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    allowed: async (a) => {
      calls.push(`ssar ${a.verb} ${a.resource}`);
      return !(opts.deny?.(a) ?? false);
    },
    nodeNames: async () => {
      calls.push('list nodes');
      return opts.nodes ?? [];
    },
  };
}

const names = ['hollow-0', 'hollow-1', 'hollow-2'];

test('nodeIdentityOf: a system:nodes certificate names its node; an admin one and garbage are not node identities', () => {
  assert.equal(nodeIdentityOf(NODE_CERT), 'system:node:n1');
  assert.equal(nodeIdentityOf(ADMIN_CERT), undefined);
  assert.equal(nodeIdentityOf('not a certificate'), undefined);
});

test('a node identity is refused before any API call, naming the node and NodeRestriction', async () => {
  const api = fakeApi();
  await assert.rejects(hollowPreflight({ kubeconfig: 'kc', clientCert: NODE_CERT, names, api }), (e: unknown) => {
    assert.ok(e instanceof HollowPreflightError);
    assert.equal(e.code, 'ERR_HOLLOW_NODE_IDENTITY');
    assert.match(e.message, /system:node:n1/);
    assert.match(e.message, /NodeRestriction/);
    return true;
  });
  assert.deepEqual(api.calls, []);
});

test('a denied verb is named (and nothing is listed)', async () => {
  const api = fakeApi({ deny: (a) => a.resource === 'leases' && a.verb === 'create' });
  await assert.rejects(hollowPreflight({ kubeconfig: 'kc', clientCert: ADMIN_CERT, names, api }), (e: unknown) => {
    assert.ok(e instanceof HollowPreflightError);
    assert.equal(e.code, 'ERR_HOLLOW_FORBIDDEN');
    assert.match(e.message, /denied create leases\.coordination\.k8s\.io in kube-node-lease/);
    return true;
  });
  assert.ok(!api.calls.includes('list nodes'));
});

test('a hollow name that is already a Node is refused, naming it', async () => {
  const api = fakeApi({ nodes: ['real-node', 'hollow-1'] });
  await assert.rejects(hollowPreflight({ kubeconfig: 'kc', clientCert: undefined, names, api }), (e: unknown) => {
    assert.ok(e instanceof HollowPreflightError);
    assert.equal(e.code, 'ERR_HOLLOW_NAME_TAKEN');
    assert.match(e.message, /1 hollow node name\(s\) already exist as Nodes: hollow-1;/);
    return true;
  });
});

test('clean: every node verb checked once, then one listing', async () => {
  const api = fakeApi({ nodes: ['real-node'] });
  await hollowPreflight({ kubeconfig: 'kc', clientCert: ADMIN_CERT, names, api });
  assert.equal(api.calls.filter((c) => c.startsWith('ssar')).length, NODE_ACCESS.length);
  assert.equal(api.calls.at(-1), 'list nodes');
});
