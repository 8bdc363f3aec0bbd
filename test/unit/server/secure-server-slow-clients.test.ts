/**
 * Issue 27 item 1: slow or greedy clients cannot hold the secure port. Over real TLS sockets:
 * - a refused request (401/403) gets `Connection: close` and its socket is ended, however
 *   slowly the client drips the body it announced;
 * - headers and request bodies have a time limit (node:http's header timer, checked often
 *   enough to matter; a body timer of our own with a seam for streams);
 * - connections are capped per client address and in total;
 * - an authenticated `follow` log stream outlives all those limits.
 * Bounds are shortened through the server's options; every wait is bounded by `within`.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { realClock } from '../../../src/shared/clock/clock.js';
import type { Authorizer } from '../../../src/main/server/auth-types.js';
import { pollUntil, within } from '../../harness/poll.js';
import { request, secureFixture, startSecure, type SecureFixture } from './secure-server-fixture.js';

const f = secureFixture();
after(() => f.remove());
const log = path.join(f.dir, 'c.log');
fs.writeFileSync(log, '2026-01-01T00:00:00Z stdout F first\n');

const FAST = { headersTimeoutMs: 1_000, requestBodyTimeoutMs: 1_000, connectionsCheckingIntervalMs: 200 };

interface Client {
  socket: tls.TLSSocket;
  /** Resolves when the server ended or closed the connection (or refused it). */
  closed: Promise<void>;
  received(): string;
}

/** A TLS client; `authenticated` presents the client certificate. Resolves once connected or closed. */
function connect(fx: SecureFixture, port: number, o: { authenticated?: boolean; localAddress?: string } = {}): Promise<Client> {
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: '127.0.0.1', port, ca: fx.serving.cert, servername: 'localhost',
      ...(o.localAddress ? { localAddress: o.localAddress } : {}),
      ...(o.authenticated ? { cert: fs.readFileSync(fx.clientCert.certFile), key: fs.readFileSync(fx.clientCert.keyFile) } : {}),
    });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => {}); // a reset by the server shows as 'close'
    const closed = new Promise<void>((r) => {
      socket.once('end', () => r());
      socket.once('close', () => r());
    });
    const client: Client = { socket, closed, received: () => text };
    // A connection refused before the handshake completes counts as connected-and-closed.
    socket.once('secureConnect', () => resolve(client));
    socket.once('close', () => resolve(client));
  });
}

/** Writes `head`, then one `byte` every 100 ms until the connection closes. */
function drip(c: Client, head: string, byte = 'x'): void {
  c.socket.write(head);
  const t = setInterval(() => {
    if (c.socket.writable) c.socket.write(byte);
  }, 100);
  void c.closed.then(() => clearInterval(t));
}

test('1: an unauthenticated POST with a large body dripping one byte at a time gets 401 with Connection: close, and its socket is closed', async () => {
  // The body timer is long here: only the close after the refusal can end these in time.
  const s = await startSecure(f, { logPath: () => log, server: { ...FAST, requestBodyTimeoutMs: 60_000 } });
  try {
    const clients = await Promise.all(Array.from({ length: 20 }, () => connect(f, s.port)));
    for (const c of clients) drip(c, 'POST /pods HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n');
    await within(Promise.all(clients.map((c) => c.closed)), 'the server closing every refused connection', 8_000);
    for (const c of clients) {
      assert.match(c.received(), /^HTTP\/1\.1 401 /);
      assert.match(c.received(), /\r\nconnection: close\r\n/i);
    }
  } finally {
    s.server.destroy();
  }
});

test('1: an authenticated but forbidden request dripping its body gets 403 with Connection: close, and its socket is closed', async () => {
  const denyAll: Authorizer = { authorize: async () => ({ kind: 'deny', reason: 'test' }) };
  const s = await startSecure(f, { logPath: () => log, authorizer: denyAll, server: { ...FAST, requestBodyTimeoutMs: 60_000 } });
  try {
    const c = await connect(f, s.port, { authenticated: true });
    drip(c, 'POST /pods HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n');
    await within(c.closed, 'the server closing the forbidden connection', 8_000);
    assert.match(c.received(), /^HTTP\/1\.1 403 /);
    assert.match(c.received(), /\r\nconnection: close\r\n/i);
  } finally {
    s.server.destroy();
  }
});

test('1: headers dripped slower than the header limit: the connection is closed within the bound', async () => {
  const s = await startSecure(f, { logPath: () => log, server: FAST });
  try {
    const clients = await Promise.all(Array.from({ length: 10 }, () => connect(f, s.port)));
    for (const c of clients) drip(c, 'GET /pods HTTP/1.1\r\nX-Slow: ', 'a');
    await within(Promise.all(clients.map((c) => c.closed)), 'header-dripping connections closed', 8_000);
  } finally {
    s.server.destroy();
  }
});

test('1: an authenticated request whose body arrives slower than the body limit is closed within the bound', async () => {
  const s = await startSecure(f, { logPath: () => log, server: FAST });
  try {
    const c = await connect(f, s.port, { authenticated: true });
    drip(c, 'POST /pods HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n');
    await within(c.closed, 'the body-dripping connection closed', 8_000);
  } finally {
    s.server.destroy();
  }
});

test('1: connections are capped per client address and in total; a slot frees when a connection closes', async () => {
  const s = await startSecure(f, { logPath: () => log, server: { ...FAST, limits: { maxConnectionsPerClient: 3, maxConnections: 5 } } });
  try {
    const a = await Promise.all(Array.from({ length: 3 }, () => connect(f, s.port, { localAddress: '127.0.0.1' })));
    const a4 = await connect(f, s.port, { localAddress: '127.0.0.1' });
    await within(a4.closed, 'the 4th connection from 127.0.0.1 refused', 8_000);
    const b = await Promise.all(Array.from({ length: 2 }, () => connect(f, s.port, { localAddress: '127.0.0.2' })));
    const c6 = await connect(f, s.port, { localAddress: '127.0.0.3' });
    await within(c6.closed, 'a 6th connection (a new address) refused by the total cap', 8_000);
    // The admitted ones are still served.
    for (const c of [...a, ...b]) assert.equal(c.socket.destroyed, false);
    a[0]?.socket.destroy();
    await within(a[0]!.closed, 'our own close', 1_000);
    // The server learns of the close asynchronously: poll with a bound for a free slot.
    const r = await pollUntil(() => request(f, s.port, '/healthz', { timeoutMs: 2_000 }), { what: 'a new connection served once a slot is free', timeoutMs: 10_000 });
    assert.equal(r.status, 200);
    for (const c of [...a, ...b]) c.socket.destroy();
  } finally {
    s.server.destroy();
  }
});

test('1: an authenticated follow stream stays open past every limit and keeps delivering lines', async () => {
  const s = await startSecure(f, { logPath: () => log, running: () => true, clock: realClock, logPollMs: 20, server: FAST });
  try {
    const follower = await connect(f, s.port, { authenticated: true });
    follower.socket.write('GET /containerLogs/ns/p/c?follow=true HTTP/1.1\r\nHost: x\r\n\r\n');
    // A refused drip client on the same server is our clock: once the server closed it (past
    // the header and body limits and the checking interval), the follow stream must still be open.
    const slow = await connect(f, s.port);
    drip(slow, 'GET /pods HTTP/1.1\r\nX-Slow: ', 'a');
    await within(slow.closed, 'the slow client closed', 8_000);
    const slow2 = await connect(f, s.port, { authenticated: true });
    drip(slow2, 'POST /pods HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n');
    await within(slow2.closed, 'the slow body closed', 8_000);
    assert.equal(follower.socket.destroyed, false, 'the follow stream is still open');
    fs.appendFileSync(log, '2026-01-01T00:00:01Z stdout F later\n');
    await within((async () => {
      while (!follower.received().includes('later')) await new Promise((r) => follower.socket.once('data', r));
    })(), 'the appended line on the follow stream', 8_000);
    assert.match(follower.received(), /^HTTP\/1\.1 200 /);
    assert.match(follower.received(), /first\n/);
    follower.socket.destroy();
  } finally {
    s.server.destroy();
  }
});
