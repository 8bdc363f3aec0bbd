import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import type { V1Pod } from '@kubernetes/client-node';
import { createAgentServer, acceptsGzip, type AgentServer } from '../../../src/main/server/agent-server.js';
import type { HealthCheckResult } from '../../../src/main/server/server-sources.js';
import { createLogger, silentLogger } from '../../../src/shared/logging/logger.js';

interface Res { status: number; headers: http.IncomingHttpHeaders; body: Buffer }

function request(port: number, path: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

async function withServer(
  deps: { checks?: HealthCheckResult[]; pods?: V1Pod[]; collect?: () => Promise<string> },
  fn: (port: number, server: AgentServer) => Promise<void>,
): Promise<void> {
  const server = createAgentServer({
    port: 0,
    metrics: { collect: deps.collect ?? (async () => '# HELP x_total x\n# TYPE x_total counter\nx_total 3\n') },
    health: { checks: () => deps.checks ?? [] },
    pods: { list: () => deps.pods ?? [] },
    logger: silentLogger,
  });
  const { address, port } = await server.listen();
  assert.equal(address, '127.0.0.1', 'binds to loopback by default');
  try {
    await fn(port, server);
  } finally {
    await server.close();
  }
}

test('/metrics serves the exposition with the Prometheus 0.0.4 content type, gzip when accepted', async () => {
  await withServer({}, async (port) => {
    const plain = await request(port, '/metrics');
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(plain.body.toString(), /^x_total 3$/m);
    const gz = await request(port, '/metrics', { headers: { 'accept-encoding': 'gzip, deflate' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(zlib.gunzipSync(gz.body).toString(), plain.body.toString());
    const head = await request(port, '/metrics', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
  });
});

test('/metrics answers 500 when collection fails, and logs it', async () => {
  const lines: string[] = [];
  const server = createAgentServer({
    port: 0, metrics: { collect: async () => { throw new Error('arena gone'); } },
    health: { checks: () => [] }, pods: { list: () => [] }, logger: createLogger({ sink: (l) => lines.push(l) }),
  });
  const { port } = await server.listen();
  try {
    const r = await request(port, '/metrics');
    assert.equal(r.status, 500);
    assert.ok(lines.some((l) => l.includes('arena gone')));
  } finally {
    await server.close();
  }
});

test('/healthz: ok when every check passes; 500 listing each check with the failing reasons', async () => {
  const checks: HealthCheckResult[] = [{ name: 'syncloop', ok: true }, { name: 'pleg', ok: true }];
  await withServer({ checks }, async (port) => {
    let r = await request(port, '/healthz');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'ok');
    r = await request(port, '/healthz?verbose');
    assert.equal(r.body.toString(), '[+]ping ok\n[+]syncloop ok\n[+]pleg ok\nhealthz check passed\n');
    checks[1] = { name: 'pleg', ok: false, reason: 'pleg was last seen active 3m5s ago; threshold is 3m0s' };
    r = await request(port, '/healthz');
    assert.equal(r.status, 500);
    assert.equal(
      r.body.toString(),
      '[+]ping ok\n[+]syncloop ok\n[-]pleg failed: pleg was last seen active 3m5s ago; threshold is 3m0s\nhealthz check failed\n',
    );
    r = await request(port, '/healthz?exclude=pleg');
    assert.equal(r.status, 200);
  });
});

test('/healthz/<check> reports one check; unknown checks are 404', async () => {
  const checks: HealthCheckResult[] = [
    { name: 'syncloop', ok: false, reason: 'sync Loop took longer than expected' },
    { name: 'pleg', ok: true },
  ];
  await withServer({ checks }, async (port) => {
    const s = await request(port, '/healthz/syncloop');
    assert.equal(s.status, 500);
    assert.equal(s.body.toString(), 'internal server error: sync Loop took longer than expected\n');
    const p = await request(port, '/healthz/pleg');
    assert.equal(p.status, 200);
    assert.equal(p.body.toString(), 'ok');
    assert.equal((await request(port, '/healthz/ping')).status, 200);
    assert.equal((await request(port, '/healthz/nope')).status, 404);
  });
});

test('/pods is a v1 PodList of the source pods', async () => {
  const pods: V1Pod[] = [
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'default', uid: 'u-a' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b', namespace: 'kube-system', uid: 'u-b' } },
  ];
  await withServer({ pods }, async (port) => {
    const r = await request(port, '/pods');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    const list = JSON.parse(r.body.toString()) as { kind: string; apiVersion: string; metadata: object; items: V1Pod[] };
    assert.deepEqual(list, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: pods });
  });
});

test('/pods serializes an item once while it is current: the next list reuses its JSON, a replaced item is serialized anew', async () => {
  let serialized = 0;
  const item = (name: string, image: string): V1Pod =>
    Object.freeze({ apiVersion: 'v1', kind: 'Pod', metadata: { name, uid: `u-${name}` }, spec: { containers: [{ name: 'c', image }] }, toJSON(this: V1Pod) {
      serialized++;
      const { toJSON: _skip, ...plain } = this as V1Pod & { toJSON?: unknown };
      return plain;
    } } as V1Pod);
  const pods: V1Pod[] = [item('a', 'x:1'), item('b', 'x:1')];
  await withServer({ pods }, async (port) => {
    const names = async (): Promise<string[]> => (JSON.parse((await request(port, '/pods')).body.toString()) as { items: V1Pod[] }).items.map((p) => `${p.metadata?.name}=${p.spec?.containers[0]?.image}`);
    assert.deepEqual(await names(), ['a=x:1', 'b=x:1']);
    assert.equal(serialized, 2);
    assert.deepEqual(await names(), ['a=x:1', 'b=x:1']);
    assert.equal(serialized, 2, 'unchanged items are not serialized again');
    pods[1] = item('b', 'x:2');
    assert.deepEqual(await names(), ['a=x:1', 'b=x:2']);
    assert.equal(serialized, 3, 'only the replaced item');
  });
});

test('unknown paths are 404, non-GET methods 405, requests with a body 413', async () => {
  await withServer({}, async (port) => {
    assert.equal((await request(port, '/')).status, 404);
    assert.equal((await request(port, '/metricsx')).status, 404);
    assert.equal((await request(port, '/stats/summary')).status, 404);
    const post = await request(port, '/metrics', { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers['allow'], 'GET, HEAD');
    assert.equal((await request(port, '/pods', { method: 'DELETE' })).status, 405);
    const withBody = await request(port, '/metrics', { method: 'GET', headers: { 'content-length': '5' }, body: 'hello' });
    assert.equal(withBody.status, 413);
    const chunked = await request(port, '/pods', { method: 'GET', headers: { 'transfer-encoding': 'chunked' }, body: 'hello' });
    assert.equal(chunked.status, 413);
  });
});

test('oversized request headers are refused with 431 before any handler runs', async () => {
  let collected = 0;
  await withServer({ collect: async () => { collected++; return ''; } }, async (port) => {
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1');
      let out = '';
      sock.on('data', (d: Buffer) => { out += d.toString(); });
      sock.on('end', () => resolve(out));
      sock.on('close', () => resolve(out));
      sock.on('error', reject);
      sock.write(`GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    });
    assert.match(raw, /^HTTP\/1\.1 431 /);
    assert.equal(collected, 0);
  });
});

test('close() and destroy() are idempotent', async () => {
  const server = createAgentServer({ port: 0, metrics: { collect: async () => '' }, health: { checks: () => [] }, pods: { list: () => [] }, logger: silentLogger });
  await server.listen();
  await Promise.all([server.close(), server.close()]);
  server.destroy();
  server.destroy();
});

test('constructor rejects a missing dependency up front, naming it', () => {
  assert.throws(
    () => createAgentServer({ metrics: { collect: async () => '' }, health: { checks: () => [] }, logger: silentLogger } as never),
    /pods is required/,
  );
});

test('acceptsGzip follows q-values', () => {
  assert.equal(acceptsGzip('gzip'), true);
  assert.equal(acceptsGzip('deflate, gzip;q=0.5'), true);
  assert.equal(acceptsGzip('gzip;q=0'), false);
  assert.equal(acceptsGzip('br'), false);
  assert.equal(acceptsGzip(undefined), false);
});
