/**
 * The pod list is parsed in one JSON.parse on the main thread: ApiClient asks the transport for
 * a bounded body (API_CLIENT_DEFAULTS.maxListBytes, 32 MiB), and HttpsTransport enforces a bound
 * as the bytes arrive (an over-long body fails as ERR_API_TOO_LARGE, never parsed), over a real
 * loopback HTTP server configured through a kubeconfig.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { API_CLIENT_DEFAULTS, ApiClient } from '../../../src/main/apiserver/api-client.js';
import type { ApiRequest, ApiResponse, ApiTransport } from '../../../src/main/apiserver/api-transport.js';
import { HttpsTransport } from '../../../src/main/apiserver/https-transport.js';
import { TokenBucket } from '../../../src/main/apiserver/token-bucket.js';

test('listPods asks for a body bounded at 32 MiB (the main thread parses it in one go)', async () => {
  const seen: ApiRequest[] = [];
  const transport: ApiTransport = {
    request: async (req): Promise<ApiResponse> => {
      seen.push(req);
      return { status: 200, body: { items: [], metadata: { resourceVersion: '7' } } };
    },
    watch: async () => ({ status: 200, body: undefined }),
    close: () => {},
  };
  const clock = new FakeClock();
  const client = new ApiClient({ transport, throttle: new TokenBucket({ qps: 0, burst: 0, clock }), clock, nodeName: 'n1' });
  const list = await client.listPods('0');
  assert.equal(list.resourceVersion, '7');
  assert.equal(seen[0]?.maxBodyBytes, API_CLIENT_DEFAULTS.maxListBytes);
  assert.ok(API_CLIENT_DEFAULTS.maxListBytes <= 32 * 1024 * 1024, `list bound ${API_CLIENT_DEFAULTS.maxListBytes} bytes is at most 32 MiB`);
  assert.equal(seen[0]?.query?.['fieldSelector'], 'spec.nodeName=n1');
});

test('HttpsTransport fails a body past its bound with ERR_API_TOO_LARGE instead of parsing it', async (t) => {
  const big = Buffer.alloc(256 * 1024, 0x20); // whitespace: valid JSON padding once wrapped
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"items":[');
    res.write(big);
    res.end('],"metadata":{"resourceVersion":"1"}}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-kc-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = path.join(dir, 'kubeconfig.json');
  const port = (server.address() as AddressInfo).port;
  fs.writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  const transport = await HttpsTransport.fromKubeconfig({ kubeconfigPath: kubeconfig });
  t.after(() => transport.close());
  const req = (maxBodyBytes: number): ApiRequest => ({ method: 'GET', path: '/api/v1/pods', timeoutMs: 10_000, maxBodyBytes, parseBody: true });
  await assert.rejects(transport.request(req(64 * 1024)), { code: 'ERR_API_TOO_LARGE' });
  const ok = await transport.request(req(1024 * 1024));
  assert.equal(ok.status, 200);
  assert.deepEqual((ok.body as { items: unknown[] }).items, []);
});
