import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { ReviewCreator } from '../../../src/main/apiserver/api-reviews.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { RequestAuth } from '../../../src/main/server/auth-chain.js';
import { alwaysAllow, SubjectAccessReviewAuthorizer } from '../../../src/main/server/auth-sar-authorizer.js';
import { TokenReviewAuthenticator } from '../../../src/main/server/auth-token-webhook.js';
import type { Authenticator, Authorizer } from '../../../src/main/server/auth-types.js';
import { X509Authenticator } from '../../../src/main/server/auth-x509.js';
import { kubeletApiRoutes } from '../../../src/main/server/kubelet-api-routes.js';
import { createSecureServer, type SecureServer } from '../../../src/main/server/secure-server.js';
import { StreamProxy } from '../../../src/main/server/stream-proxy.js';
import type { StreamRuntime } from '../../../src/main/server/stream-request.js';
import { resolveServingCert } from '../../../src/main/server/serving-cert.js';
import { createPki, issueNodeCert } from '../../harness/apiserver-credentials.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secure-server-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const pki = createPki('openssl', path.join(dir, 'pki'));
const nodeCert = issueNodeCert('openssl', pki, 'n1');
const rogue = createPki('openssl', path.join(dir, 'rogue'));
const serving = resolveServingCert({ tlsCertFile: undefined, tlsPrivateKeyFile: undefined, rootDir: path.join(dir, 'root'), altNames: [], nowMs: Date.now() });

const logFile = path.join(dir, '0.log');
fs.writeFileSync(logFile, '2026-01-01T00:00:00Z stdout F hello\n2026-01-01T00:00:01Z stderr F world\n');
const POD: V1Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [{ name: 'c', image: 'i' }] } };

/** A fake API server for reviews: tokens → users; SAR allows what `grants` lists (user/subresource). */
class FakeReviews implements ReviewCreator {
  calls: Array<{ kind: string; spec: Record<string, unknown> }> = [];
  grants = new Set<string>();
  failSar = false;
  async createReview(kind: 'TokenReview' | 'SubjectAccessReview', spec: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.calls.push({ kind, spec });
    if (kind === 'TokenReview') {
      if (spec['token'] === 'alice-token') return { authenticated: true, user: { username: 'alice', uid: 'a1', groups: ['devs'] } };
      return { authenticated: false, error: 'invalid bearer token' };
    }
    if (this.failSar) throw new Error('apiserver down');
    const ra = spec['resourceAttributes'] as { subresource: string; verb: string; name: string };
    return { allowed: this.grants.has(`${String(spec['user'])}/${ra.verb}/${ra.subresource}/${ra.name}`) };
  }
}

/** One running container `c` of pod u1 (id cid); ExecSync echoes its argv; no streaming URL is ever needed. */
const fakeStreamRuntime: StreamRuntime = {
  listContainers: async (f) => (f?.labelSelector?.['io.kubernetes.container.name'] === 'c' ? [{ id: 'cid', podSandboxId: 'sb', createdAt: '1' } as never] : []),
  listPodSandbox: async () => [{ id: 'sb', createdAt: '1' } as never],
  execSync: async (r) => ({ stdout: Buffer.from(r.cmd.join('+')), stderr: Buffer.alloc(0), exitCode: r.cmd[0] === 'false' ? 1 : 0 }),
  exec: async () => 'http://127.0.0.1:1/exec/x',
  attach: async () => 'http://127.0.0.1:1/attach/x',
  portForward: async () => 'http://127.0.0.1:1/portforward/x',
};

interface Started { server: SecureServer; port: number }
async function start(authenticators: Authenticator[], authorizer: Authorizer, anonymous = false): Promise<Started> {
  const clock = new FakeClock();
  const server = createSecureServer({
    address: '127.0.0.1', port: 0, cert: serving.cert, key: serving.key, clientCA: fs.readFileSync(pki.caFile), logger: silentLogger,
    auth: new RequestAuth({ authenticators, authorizer, anonymous, nodeName: 'n1' }),
    routes: kubeletApiRoutes({
      metrics: { collect: async () => '# HELP prober_probe_total x\n# TYPE prober_probe_total counter\nprober_probe_total 1\n# HELP other x\n# TYPE other gauge\nother 2\n' },
      health: { checks: () => [] },
      pods: { list: () => [POD] },
      podsByName: { byName: (ns, name) => (ns === 'ns' && name === 'p' ? POD : undefined) },
      runningPods: { list: async () => [POD] },
      logs: { locate: async () => ({ ok: true, containerId: 'cid', logPath: logFile }), isRunning: async () => false },
      stats: { summary: async () => ({ node: {}, pods: [] }), resourceMetrics: async () => 'resource_scrape_error 0\n' },
      clock,
      logger: silentLogger,
      streamRuntime: fakeStreamRuntime,
      streamProxy: new StreamProxy({ clock, logger: silentLogger, idleTimeoutMs: 60_000 }),
    }),
  });
  const { port } = await server.listen();
  return { server, port };
}

function get(port: number, p: string, o: { cert?: { certFile: string; keyFile: string }; token?: string; method?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port, path: p, method: o.method ?? 'GET', ca: serving.cert, servername: 'localhost',
      ...(o.cert ? { cert: fs.readFileSync(o.cert.certFile), key: fs.readFileSync(o.cert.keyFile) } : {}),
      headers: o.token ? { authorization: `Bearer ${o.token}` } : {},
      timeout: 10_000,
    }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

test('no credentials: 401 "Unauthorized" on every path; a certificate from another CA: 401 too', async () => {
  const s = await start([new X509Authenticator()], alwaysAllow);
  try {
    for (const p of ['/healthz', '/pods', '/containerLogs/ns/p/c', '/exec/ns/p/c', '/stats/summary', '/metrics/resource']) {
      assert.deepEqual(await get(s.port, p), { status: 401, body: 'Unauthorized' }, p);
    }
    assert.deepEqual(await get(s.port, '/healthz', { cert: rogue.admin }), { status: 401, body: 'Unauthorized' });
    assert.equal((await get(s.port, '/healthz', { cert: pki.admin })).status, 200);
  } finally {
    await s.server.close();
  }
});

test('x509 user with AlwaysAllow reaches every endpoint; plain (not upgraded) exec/attach/portForward get the kubelet\'s refusals; /run runs', async () => {
  const s = await start([new X509Authenticator()], alwaysAllow);
  try {
    assert.deepEqual(await get(s.port, '/containerLogs/ns/p/c', { cert: nodeCert }), { status: 200, body: 'hello\nworld\n' });
    assert.deepEqual(await get(s.port, '/containerLogs/ns/p/c?tailLines=1&timestamps=true', { cert: nodeCert }), { status: 200, body: '2026-01-01T00:00:01Z world\n' });
    assert.deepEqual(await get(s.port, '/containerLogs/ns/missing/c', { cert: nodeCert }), { status: 404, body: 'pod "missing" does not exist' });
    assert.deepEqual(await get(s.port, '/containerLogs/ns/p/nope', { cert: nodeCert }), { status: 404, body: 'container "nope" not found in pod "p"' });
    assert.equal((await get(s.port, '/containerLogs/ns/p/c?tailLines=-1', { cert: nodeCert })).status, 422);
    assert.deepEqual(await get(s.port, '/metrics/probes', { cert: nodeCert }), { status: 200, body: '# HELP prober_probe_total x\n# TYPE prober_probe_total counter\nprober_probe_total 1\n' });
    assert.equal(JSON.parse((await get(s.port, '/runningpods/', { cert: nodeCert })).body).items[0].metadata.uid, 'u1');
    assert.equal(JSON.parse((await get(s.port, '/pods', { cert: nodeCert })).body).items.length, 1);
    const post = (p: string): Promise<{ status: number; body: string }> => get(s.port, p, { cert: nodeCert, method: 'POST' });
    assert.deepEqual(await post('/exec/ns/p/c?command=true'), { status: 400, body: 'you must specify at least 1 of stdin, stdout, stderr' });
    assert.deepEqual(await post('/exec/ns/missing/c?command=true&output=1'), { status: 404, body: 'pod does not exist' });
    assert.deepEqual(await post('/exec/ns/p/nope?command=true&output=1'), { status: 500, body: 'container not found ("nope")' });
    assert.deepEqual(await post('/exec/ns/p/wrong-uid/c?command=true&output=1'), { status: 500, body: 'container not found ("c")' });
    assert.deepEqual(await post('/exec/ns/p/c?command=true&output=1'), { status: 500, body: 'Upgrade request required\n' });
    assert.deepEqual(await post('/attach/ns/p/c?input=1&tty=1'), { status: 500, body: 'Upgrade request required\n' });
    assert.deepEqual(await post('/portForward/ns/p'), { status: 500, body: 'Upgrade request required\n' });
    assert.deepEqual(await post('/portForward/ns/p/other-uid'), { status: 404, body: 'pod not found' });
    assert.deepEqual(await post('/exec/ns/p'), { status: 404, body: '404 page not found\n' });
    assert.deepEqual(await get(s.port, '/run/ns/p/c?cmd=echo%20hi', { cert: nodeCert }), { status: 405, body: 'method not allowed\n' });
    assert.deepEqual(await post('/run/ns/p/c?cmd=echo%20hi'), { status: 200, body: 'echo+hi' });
    assert.deepEqual(await post('/run/ns/p/c?cmd=false%20x'), { status: 500, body: "command 'false x' exited with 1: " });
    const many = '/exec/ns/p/c?output=1' + '&a'.repeat(1100);
    assert.deepEqual(await post(many), { status: 400, body: 'too many query parameters (more than 1024)\n' });
  } finally {
    await s.server.close();
  }
});

test('Webhook: TokenReview identifies the user, SubjectAccessReview decides with the kubelet mapping; 403 body as the kubelet; answers cached', async () => {
  const reviews = new FakeReviews();
  const clock = new FakeClock();
  reviews.grants.add('alice/get/proxy/n1');
  const s = await start([new X509Authenticator(), new TokenReviewAuthenticator({ reviews, clock })], new SubjectAccessReviewAuthorizer({ reviews, clock }));
  try {
    assert.equal((await get(s.port, '/containerLogs/ns/p/c', { token: 'alice-token' })).status, 200, 'containerLogs is nodes/proxy');
    assert.deepEqual(await get(s.port, '/stats/summary', { token: 'alice-token' }), { status: 403, body: 'Forbidden (user=alice, verb=get, resource=nodes, subresource=stats)' });
    assert.deepEqual(await get(s.port, '/metrics/resource', { token: 'alice-token' }), { status: 403, body: 'Forbidden (user=alice, verb=get, resource=nodes, subresource=metrics)' });
    assert.deepEqual(await get(s.port, '/healthz', { token: 'wrong-token' }), { status: 401, body: 'Unauthorized' });
    const sar = reviews.calls.find((c) => c.kind === 'SubjectAccessReview');
    assert.deepEqual(sar?.spec, { user: 'alice', uid: 'a1', groups: ['devs'], extra: {}, resourceAttributes: { namespace: '', verb: 'get', group: '', version: 'v1', resource: 'nodes', subresource: 'proxy', name: 'n1' } });
    // Cached: the same requests ask nothing more.
    const before = reviews.calls.length;
    await get(s.port, '/containerLogs/ns/p/c', { token: 'alice-token' });
    await get(s.port, '/stats/summary', { token: 'alice-token' });
    await get(s.port, '/healthz', { token: 'wrong-token' });
    assert.equal(reviews.calls.length, before);
    // The denial expires after 30 s, the token answer after 2 m: a grant is seen then.
    reviews.grants.add('alice/get/stats/n1');
    clock.step(30_000);
    assert.equal((await get(s.port, '/stats/summary', { token: 'alice-token' })).status, 200);
    // x509 identities go through the same authorizer.
    assert.deepEqual(await get(s.port, '/pods', { cert: nodeCert }), { status: 403, body: 'Forbidden (user=system:node:n1, verb=get, resource=nodes, subresource=proxy)' });
    // Once the cached denial expires, a review that fails is a 500 (and is not cached).
    reviews.failSar = true;
    clock.step(30_000);
    assert.deepEqual(await get(s.port, '/healthz/ping', { cert: nodeCert }), { status: 500, body: 'Authorization error (user=system:node:n1, verb=get, resource=nodes, subresource=proxy)' });
  } finally {
    await s.server.close();
  }
});

test('anonymous auth on: requests without credentials are system:anonymous (authorized like anyone); an invalid token is still 401', async () => {
  const reviews = new FakeReviews();
  const clock = new FakeClock();
  reviews.grants.add('system:anonymous/get/proxy/n1');
  const s = await start([new TokenReviewAuthenticator({ reviews, clock })], new SubjectAccessReviewAuthorizer({ reviews, clock }), true);
  try {
    assert.equal((await get(s.port, '/healthz')).status, 200);
    assert.deepEqual(await get(s.port, '/stats/summary'), { status: 403, body: 'Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource=stats)' });
    assert.deepEqual(await get(s.port, '/healthz', { token: 'bad' }), { status: 401, body: 'Unauthorized' });
  } finally {
    await s.server.close();
  }
});

test('the self-signed serving pair is generated once under <root>/pki and reused', () => {
  const again = resolveServingCert({ tlsCertFile: undefined, tlsPrivateKeyFile: undefined, rootDir: path.join(dir, 'root'), altNames: [], nowMs: Date.now() });
  assert.equal(again.generated, false);
  assert.deepEqual(again.cert, serving.cert);
  assert.equal(fs.statSync(path.join(dir, 'root', 'pki', 'kubelet.key')).mode & 0o777, 0o600);
});
