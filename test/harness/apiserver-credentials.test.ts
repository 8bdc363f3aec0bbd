/**
 * apiserver-credentials: the PKI the control plane trusts (checked with node:crypto, not by
 * re-reading our own strings), node identities as the Node authorizer expects them, the token
 * file format, kubeconfigs, and hostile names refused before they reach a path or a subject.
 * Needs /usr/bin/openssl (prepare.ts installs it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPki, issueNodeCert, writeKubeconfig, writeTokenFile } from './apiserver-credentials.js';

const OPENSSL = '/usr/bin/openssl';

function withDir(fn: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-creds-test-'));
  try {
    fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function cert(file: string): crypto.X509Certificate {
  return new crypto.X509Certificate(fs.readFileSync(file));
}

test('PKI: CA-signed serving cert for 127.0.0.1/localhost, admin in system:masters, node identity in system:nodes', () => {
  withDir((dir) => {
    const pki = createPki(OPENSSL, path.join(dir, 'pki'));
    const ca = cert(pki.caFile);
    assert.equal(ca.ca, true);
    const serving = cert(pki.serving.certFile);
    assert.ok(serving.verify(ca.publicKey), 'serving cert signed by the CA');
    assert.ok(serving.checkIP('127.0.0.1'));
    assert.ok(serving.checkHost('localhost'));
    assert.equal(serving.checkIP('10.0.0.1'), undefined);
    assert.match(serving.keyUsage?.join(',') ?? '', /1\.3\.6\.1\.5\.5\.7\.3\.1/, 'serverAuth');
    const admin = cert(pki.admin.certFile);
    assert.ok(admin.verify(ca.publicKey));
    assert.equal(admin.subject, 'CN=shardlet-admin\nO=system:masters');
    assert.match(admin.keyUsage?.join(',') ?? '', /1\.3\.6\.1\.5\.5\.7\.3\.2/, 'clientAuth');
    const node = issueNodeCert(OPENSSL, pki, 'node-1.example');
    const n = cert(node.certFile);
    assert.ok(n.verify(ca.publicKey));
    assert.equal(n.subject, 'CN=system:node:node-1.example\nO=system:nodes');
    assert.ok(crypto.createPrivateKey(fs.readFileSync(node.keyFile)).asymmetricKeyType === 'ec');
    // Service-account keys: a matching pair.
    const sa = crypto.createPrivateKey(fs.readFileSync(pki.saKeyFile));
    const pub = crypto.createPublicKey(fs.readFileSync(pki.saPubFile));
    const sig = crypto.sign('sha256', Buffer.from('x'), sa);
    assert.ok(crypto.verify('sha256', Buffer.from('x'), pub, sig));
  });
});

test('hostile node names are refused before any file or subject is made', () => {
  withDir((dir) => {
    const pki = createPki(OPENSSL, path.join(dir, 'pki'));
    const before = fs.readdirSync(pki.dir).sort();
    for (const bad of ['../x', 'a/b', 'UPPER', '', '-lead', 'trail-', 'a..b', 'x'.repeat(254), 'n1/O=system:masters', 'a b']) {
      assert.throws(() => issueNodeCert(OPENSSL, pki, bad), { code: 'ERR_HARNESS_BAD_NAME' }, JSON.stringify(bad));
    }
    assert.deepEqual(fs.readdirSync(pki.dir).sort(), before);
  });
});

test('token file: one random token per user in the apiserver CSV format; bad names refused', () => {
  withDir((dir) => {
    const file = path.join(dir, 'tokens.csv');
    const issued = writeTokenFile(file, [
      { name: 'admin-token', groups: ['system:masters'] },
      { name: 'system:node:n1', groups: ['system:nodes', 'extra'] },
    ]);
    assert.equal(new Set(issued.map((t) => t.token)).size, 2);
    assert.ok(issued.every((t) => /^[0-9a-f]{48}$/.test(t.token)));
    assert.deepEqual(fs.readFileSync(file, 'utf8').trim().split('\n'), [
      `${issued[0]!.token},admin-token,admin-token,"system:masters"`,
      `${issued[1]!.token},system:node:n1,system:node:n1,"system:nodes,extra"`,
    ]);
    assert.throws(() => writeTokenFile(file, [{ name: 'a,b', groups: [] }]), { code: 'ERR_HARNESS_BAD_NAME' });
    assert.throws(() => writeTokenFile(file, [{ name: 'a', groups: ['g"x'] }]), { code: 'ERR_HARNESS_BAD_NAME' });
  });
});

test('kubeconfig: one cluster, user and current context; cert or token credentials', () => {
  withDir((dir) => {
    const f1 = writeKubeconfig(path.join(dir, 'a.json'), 'https://127.0.0.1:1', '/ca.crt', 'u', { certFile: '/c', keyFile: '/k' });
    const kc1 = JSON.parse(fs.readFileSync(f1, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(kc1['clusters'], [{ name: 'harness', cluster: { server: 'https://127.0.0.1:1', 'certificate-authority': '/ca.crt' } }]);
    assert.deepEqual(kc1['users'], [{ name: 'u', user: { 'client-certificate': '/c', 'client-key': '/k' } }]);
    assert.equal(kc1['current-context'], 'harness');
    const f2 = writeKubeconfig(path.join(dir, 'b.json'), 'https://127.0.0.1:1', '/ca.crt', 't', { token: 'abc' });
    assert.deepEqual((JSON.parse(fs.readFileSync(f2, 'utf8')) as { users: unknown }).users, [{ name: 't', user: { token: 'abc' } }]);
    assert.equal(fs.statSync(f2).mode & 0o777, 0o600);
  });
});
