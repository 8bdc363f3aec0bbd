/**
 * The secure port's streaming path end to end in one process: HTTPS upgrade → authentication
 * and nodes/proxy authorization → pod/container lookup over the CRI → CRI Exec/PortForward on
 * the simulated runtime → the stream proxy joining the client to the runtime's streaming
 * server → SPDY, byte for byte. Plus the proxy's bounds: credentials (401/403), the stream cap
 * (429), the idle timeout (on an injected clock), an unreachable runtime URL (500), a 1 MB
 * command (431).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type tls from 'node:tls';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { realClock, type Clock } from '../../../src/shared/clock/clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { RequestAuth } from '../../../src/main/server/auth-chain.js';
import type { Authorizer } from '../../../src/main/server/auth-types.js';
import { X509Authenticator } from '../../../src/main/server/auth-x509.js';
import { kubeletApiRoutes, kubeletApiUpgrades, type KubeletApiRoutesOptions } from '../../../src/main/server/kubelet-api-routes.js';
import { createSecureServer, type SecureServer } from '../../../src/main/server/secure-server.js';
import { resolveServingCert } from '../../../src/main/server/serving-cert.js';
import { StreamProxy } from '../../../src/main/server/stream-proxy.js';
import type { StreamRuntime } from '../../../src/main/server/stream-request.js';
import { alwaysAllow } from '../../../src/main/server/auth-sar-authorizer.js';
import { createPki, issueNodeCert } from '../../harness/apiserver-credentials.js';
import { openRemoteCommand, spdyUpgrade } from '../../harness/spdy-test-client.js';
import { runPod, startHarness, type Harness } from '../simruntime/sim-harness.js';
import { pollUntil } from '../../harness/poll.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stream-proxy-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const pki = createPki('openssl', path.join(dir, 'pki'));
const nodeCert = issueNodeCert('openssl', pki, 'n1');
const serving = resolveServingCert({ tlsCertFile: undefined, tlsPrivateKeyFile: undefined, rootDir: path.join(dir, 'root'), altNames: [], nowMs: Date.now() });
const V4 = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
const WAIT = 10_000;
const UID = 'pod-uid-1';
const POD: V1Pod = { metadata: { name: 'p', namespace: 'ns', uid: UID }, spec: { containers: [{ name: 'app', image: 'busybox' }] } };
const certTls = (): https.RequestOptions => ({ ca: serving.cert, servername: 'localhost', cert: fs.readFileSync(nodeCert.certFile), key: fs.readFileSync(nodeCert.keyFile) });

interface Setup { h: Harness; server: SecureServer; port: number; proxy: StreamProxy; sandboxId: string }

async function setup(o: { clock?: Clock; maxStreams?: number; authorizer?: Authorizer; runtime?: (h: Harness) => StreamRuntime } = {}): Promise<Setup> {
  const h = await startHarness({ clock: realClock });
  const { sandboxId } = await runPod(h, ['sleep', '100000'], { labels: { 'io.kubernetes.container.name': 'app', 'io.kubernetes.pod.uid': UID } }, { labels: { 'io.kubernetes.pod.uid': UID } });
  const clock = o.clock ?? realClock;
  const proxy = new StreamProxy({ clock, logger: silentLogger, idleTimeoutMs: 60_000, ...(o.maxStreams !== undefined ? { maxStreams: o.maxStreams } : {}) });
  const opts: KubeletApiRoutesOptions = {
    metrics: { collect: async () => '' },
    health: { checks: () => [] },
    pods: { list: () => [POD] },
    podsByName: { byName: (ns, name) => (ns === 'ns' && name === 'p' ? POD : undefined) },
    runningPods: { list: async () => [] },
    logs: { locate: async () => ({ ok: false, message: 'no' }), isRunning: async () => false },
    stats: { summary: async () => ({}), resourceMetrics: async () => '' },
    clock,
    logger: silentLogger,
    streamRuntime: o.runtime?.(h) ?? h.client,
    streamProxy: proxy,
  };
  const server = createSecureServer({
    address: '127.0.0.1', port: 0, cert: serving.cert, key: serving.key, clientCA: fs.readFileSync(pki.caFile), logger: silentLogger,
    auth: new RequestAuth({ authenticators: [new X509Authenticator()], authorizer: o.authorizer ?? alwaysAllow, anonymous: false, nodeName: 'n1' }),
    routes: kubeletApiRoutes(opts),
    upgrades: kubeletApiUpgrades(opts),
    onClose: () => proxy.destroy(),
  });
  const { port } = await server.listen();
  return { h, server, port, proxy, sandboxId };
}

async function teardown(s: Setup): Promise<void> {
  await s.server.close();
  await s.h.close();
}

test('kubectl-style exec through the secure port: "echo hi; exit 3" prints hi and ends with exit code 3', async () => {
  const s = await setup();
  try {
    const up = await spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/app?command=sh&command=-c&command=echo+hi%3B+exit+3&output=1&error=1`, { protocols: V4, tls: certTls() });
    assert.equal(up.status, 101, up.body);
    assert.equal(up.headers['x-stream-protocol-version'], 'v4.channel.k8s.io', 'the runtime\'s answer, forwarded as is');
    const c = up.client!;
    const st = openRemoteCommand(c, { stdout: true, stderr: true });
    await c.until(() => st['error']!.ended, WAIT, 'the status');
    assert.equal(st['stdout']!.data.toString(), 'hi\n');
    const status = JSON.parse(st['error']!.data.toString()) as { reason: string; details: { causes: Array<{ reason: string; message: string }> } };
    assert.equal(status.reason, 'NonZeroExitCode');
    assert.deepEqual(status.details.causes, [{ reason: 'ExitCode', message: '3' }]);
    await c.until(() => c.closed, WAIT, 'the connection to close');
    await pollUntil(() => (s.proxy.active === 0 ? true : undefined), { what: 'the proxied connection is released', timeoutMs: WAIT, intervalMs: 10 });
  } finally {
    await teardown(s);
  }
});

test('exec -i through the proxy: stdin reaches cat and comes back', async () => {
  const s = await setup();
  try {
    const up = await spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/app?command=cat&input=1&output=1`, { protocols: V4, tls: certTls() });
    const c = up.client!;
    const st = openRemoteCommand(c, { stdin: true, stdout: true });
    await c.until(() => st['stdin']!.replied, WAIT, 'stdin reply');
    c.send(st['stdin']!, 'through the proxy\n', true);
    await c.until(() => st['error']!.ended, WAIT, 'the end');
    assert.equal(st['stdout']!.data.toString(), 'through the proxy\n');
    c.close();
  } finally {
    await teardown(s);
  }
});

test('upgrade without credentials: 401; with a certificate but no permission: 403; nothing reaches the runtime', async () => {
  let asked = 0;
  const denyAll: Authorizer = { authorize: async () => ({ kind: 'deny', reason: 'no' }) };
  const s = await setup({ runtime: (h) => ({ ...bind(h.client), exec: async (r) => (asked++, h.client.exec(r)) }) });
  try {
    const anon = await spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/app?command=true&output=1`, { protocols: V4, tls: { ca: serving.cert, servername: 'localhost' } });
    assert.deepEqual([anon.status, anon.body], [401, 'Unauthorized']);
  } finally {
    await teardown(s);
  }
  const s2 = await setup({ authorizer: denyAll });
  try {
    const forbidden = await spdyUpgrade(`https://127.0.0.1:${s2.port}/exec/ns/p/app?command=true&output=1`, { protocols: V4, tls: certTls() });
    assert.equal(forbidden.status, 403);
    assert.match(forbidden.body, /^Forbidden \(user=.*, verb=create, resource=nodes, subresource=proxy\)$/);
  } finally {
    await teardown(s2);
  }
  assert.equal(asked, 0);
});

function bind(c: StreamRuntime): StreamRuntime {
  return { listContainers: c.listContainers.bind(c), listPodSandbox: c.listPodSandbox.bind(c), execSync: c.execSync.bind(c), exec: c.exec.bind(c), attach: c.attach.bind(c), portForward: c.portForward.bind(c) };
}

test('the stream cap: past maxStreams, upgrades get 429 before the runtime is asked; a freed slot is usable again', async () => {
  const s = await setup({ maxStreams: 3 });
  try {
    const open = [];
    for (let i = 0; i < 3; i++) {
      const up = await spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/app?command=cat&input=1&output=1`, { protocols: V4, tls: certTls() });
      assert.equal(up.status, 101);
      open.push(up.client!);
    }
    assert.equal(s.proxy.active, 3);
    const refused = await Promise.all(Array.from({ length: 20 }, () => spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/app?command=cat&input=1&output=1`, { protocols: V4, tls: certTls() })));
    for (const r of refused) assert.equal(r.status, 429);
    open[0]!.close();
    await pollUntil(() => (Number(s.proxy.active) === 2 ? true : undefined), { what: 'a slot frees when a client goes away', timeoutMs: WAIT, intervalMs: 10 });
    const again = await spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/app?command=cat&input=1&output=1`, { protocols: V4, tls: certTls() });
    assert.equal(again.status, 101);
    again.client!.close();
    for (const c of open) c.close();
  } finally {
    await teardown(s);
  }
});

test('idle timeout (injected clock): a connection with no bytes for the timeout is closed; traffic keeps it open', async () => {
  const clock = new FakeClock();
  const s = await setup({ clock });
  try {
    const up = await spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/app?command=cat&input=1&output=1`, { protocols: V4, tls: certTls() });
    const c = up.client!;
    const st = openRemoteCommand(c, { stdin: true, stdout: true });
    await c.until(() => st['stdin']!.replied, WAIT, 'replies');
    clock.step(59_000);
    c.send(st['stdin']!, 'x');
    await c.until(() => st['stdout']!.data.toString() === 'x', WAIT, 'echo');
    clock.step(59_000); // 118 s since start, 59 s since the last byte: still open
    assert.equal(c.closed, false);
    assert.equal(s.proxy.active, 1);
    clock.step(2_000);
    await c.until(() => c.closed, WAIT, 'the idle connection to be closed');
    assert.equal(s.proxy.active, 0);
  } finally {
    await teardown(s);
  }
});

test('a runtime URL nobody listens on: 500 with the dial error; an invalid URL: 500 naming it', async () => {
  const s = await setup({ runtime: (h) => ({ ...bind(h.client), exec: async () => 'http://127.0.0.1:1/exec/x', attach: async () => 'file:///etc/passwd' }) });
  try {
    const r = await spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/app?command=true&output=1`, { protocols: V4, tls: certTls() });
    assert.equal(r.status, 500);
    assert.match(r.body, /^error dialing the runtime's streaming server: connect ECONNREFUSED/);
    const a = await spdyUpgrade(`https://127.0.0.1:${s.port}/attach/ns/p/app?output=1`, { protocols: V4, tls: certTls() });
    assert.equal(a.status, 500);
    assert.match(a.body, /unsupported scheme "file:"/);
    assert.equal(s.proxy.active, 0);
  } finally {
    await teardown(s);
  }
});

test('hostile requests: a 1 MB command is 431; no stream flags is 400; an unknown container is 500 — all before any upgrade', async () => {
  const s = await setup();
  try {
    const big = await spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/app?output=1&command=${'a'.repeat(1024 * 1024)}`, { protocols: V4, tls: certTls() }).catch((e: unknown) => ({ status: -1, body: String(e) }));
    assert.equal(big.status, 431, big.body.slice(0, 200));
    const none = await spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/app?command=true`, { protocols: V4, tls: certTls() });
    assert.deepEqual([none.status, none.body], [400, 'you must specify at least 1 of stdin, stdout, stderr']);
    const gone = await spdyUpgrade(`https://127.0.0.1:${s.port}/exec/ns/p/nope?command=true&output=1`, { protocols: V4, tls: certTls() });
    assert.deepEqual([gone.status, gone.body], [500, 'container not found ("nope")']);
    const pf0 = await spdyUpgrade(`https://127.0.0.1:${s.port}/portForward/ns/p?port=0`, { protocols: ['portforward.k8s.io'], tls: certTls(), headers: { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
    assert.deepEqual([pf0.status, pf0.body], [400, 'port "0" must be > 0']);
    const pf7 = await spdyUpgrade(`https://127.0.0.1:${s.port}/portForward/ns/p?port=70000`, { protocols: ['portforward.k8s.io'], tls: certTls(), headers: { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
    assert.equal(pf7.status, 400);
    assert.match(pf7.body, /unable to parse "70000" as a port: .*value out of range/);
    void (null as unknown as tls.TLSSocket);
  } finally {
    await teardown(s);
  }
});
