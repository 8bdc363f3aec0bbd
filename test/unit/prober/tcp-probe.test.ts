/** TCP socket probes against a local net server on 127.0.0.1; the timeout runs on the fake clock. */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { tcpProbe } from '../../../workers/prober/probers/tcp-probe.js';

const accepted: net.Socket[] = [];
const server = net.createServer((s) => accepted.push(s)).listen(0, '127.0.0.1');
await once(server, 'listening');
const port = (server.address() as net.AddressInfo).port;
after(() => {
  for (const s of accepted) s.destroy();
  server.close();
});
const signal = new AbortController().signal;

test('a listening port is success, and the connection is closed at once', async () => {
  const clock = new FakeClock();
  const o = await tcpProbe(clock, { host: '127.0.0.1', port, timeoutMs: 1000, signal });
  assert.equal(o.kind, 'success');
  const sock = accepted.at(-1);
  assert.ok(sock);
  if (!sock.closed) await once(sock, 'close');
  assert.equal(clock.pendingTimers, 0);
});

test('a closed port is a failure', async () => {
  const s = net.createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const closed = (s.address() as net.AddressInfo).port;
  s.close();
  await once(s, 'close');
  const o = await tcpProbe(new FakeClock(), { host: '127.0.0.1', port: closed, timeoutMs: 1000, signal });
  assert.equal(o.kind, 'failure');
  assert.match(o.kind === 'failure' ? o.output : '', new RegExp(`dial tcp 127\\.0\\.0\\.1:${closed}: .*ECONNREFUSED`));
});

test('no connection within the timeout is a failure (fake clock steps past it before the connect completes)', async () => {
  const clock = new FakeClock();
  const pending = tcpProbe(clock, { host: '127.0.0.1', port, timeoutMs: 1000, signal });
  clock.step(999);
  clock.step(1); // synchronously: the connect cannot have completed yet
  const o = await pending;
  assert.equal(o.kind, 'failure');
  assert.match(o.kind === 'failure' ? o.output : '', /i\/o timeout/);
});

test('abort is an error, not a failure', async () => {
  const ac = new AbortController();
  const pending = tcpProbe(new FakeClock(), { host: '127.0.0.1', port, timeoutMs: 1000, signal: ac.signal });
  ac.abort();
  const o = await pending;
  assert.equal(o.kind === 'error' ? o.error.code : o.kind, 'ERR_PROBE_ABORTED');
});
