/**
 * HTTP GET probes against a local server on 127.0.0.1: status classes, redirect rules, headers,
 * the bounded body read, refused connections, HTTPS without verification, and the timeout on
 * the injected clock (a server that never answers, then the fake clock steps past the timeout).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { once } from 'node:events';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { httpProbe, type HttpProbeRequest } from '../../../workers/prober/probers/http-probe.js';
import { buildHeaders, DEFAULT_PROBE_USER_AGENT } from '../../../workers/prober/probe-spec.js';
import type { ProbeOutcome } from '../../../workers/prober/probe-outcome.js';
import { within } from '../../harness/poll.js';

// A self-signed EC certificate for CN=localhost; probes do not verify certificates.
const TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgET9GqFDwLNPhXsBt
1jo+t7DK9l2cBodV+tA7bjyAtMOhRANCAAS7vnQDZd9926jsj6o9sR9JSj8rhv1E
+2Vdj1PErwpeFmSTdXeEeVaksCV24oQ/V4MYckE+97oLc41BdwYeDHu0
-----END PRIVATE KEY-----`;
const TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBfjCCASWgAwIBAgIURU32P0Nw9PjboHQZiU9yNeVadcIwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyMDIzMDk1NFoYDzIxMjYxMDI3
MjMwOTU0WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAS7vnQDZd9926jsj6o9sR9JSj8rhv1E+2Vdj1PErwpeFmSTdXeEeVak
sCV24oQ/V4MYckE+97oLc41BdwYeDHu0o1MwUTAdBgNVHQ4EFgQU/KzzJuxaPYkI
V29l1gd9gydGvHcwHwYDVR0jBBgwFoAU/KzzJuxaPYkIV29l1gd9gydGvHcwDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiBYajzBX2uqOXLwOKDAae+g
cHQOqcT1X3xRzovcP85y6gIgbIjlnhqyrPuMiV1D160ylUwekGltvWsvU8R/sPaa
Nyo=
-----END CERTIFICATE-----`;

const seen: http.IncomingMessage[] = [];
const hanging: http.ServerResponse[] = [];

function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  seen.push(req);
  const port = (req.socket.localPort ?? 0);
  const path = req.url ?? '/';
  const code = /^\/status\/(\d+)$/.exec(path);
  if (code) {
    res.writeHead(Number(code[1])).end(`status ${code[1]}`);
  } else if (path === '/redirect-same') {
    res.writeHead(302, { location: '/status/200' }).end();
  } else if (path === '/redirect-same-to-500') {
    res.writeHead(301, { location: `http://127.0.0.1:${port}/status/500` }).end();
  } else if (path === '/redirect-other-host') {
    res.writeHead(302, { location: `http://localhost:${port}/status/500` }).end('moved');
  } else if (path.startsWith('/loop')) {
    res.writeHead(307, { location: `/loop${seen.length}` }).end();
  } else if (path === '/big') {
    res.writeHead(200).end('x'.repeat(64 * 1024));
  } else if (path === '/hang') {
    hanging.push(res);
  } else {
    res.writeHead(200).end();
  }
}

const server = http.createServer(handler);
const tlsServer = https.createServer({ key: TLS_KEY, cert: TLS_CERT }, handler);
server.listen(0, '127.0.0.1');
tlsServer.listen(0, '127.0.0.1');
await Promise.all([once(server, 'listening'), once(tlsServer, 'listening')]);
const port = (server.address() as net.AddressInfo).port;
const tlsPort = (tlsServer.address() as net.AddressInfo).port;
after(() => {
  for (const r of hanging) r.destroy();
  server.closeAllConnections();
  tlsServer.closeAllConnections();
  server.close();
  tlsServer.close();
});

const clock = new FakeClock();
function req(path: string, over: Partial<HttpProbeRequest> = {}): HttpProbeRequest {
  return {
    scheme: 'http', host: '127.0.0.1', port, path,
    headers: buildHeaders([], DEFAULT_PROBE_USER_AGENT),
    timeoutMs: 1000, signal: new AbortController().signal, ...over,
  };
}

test('2xx is success; 4xx and 5xx are failures naming the status', async () => {
  assert.equal((await httpProbe(clock, req('/status/200'))).kind, 'success');
  assert.equal((await httpProbe(clock, req('/status/204'))).kind, 'success');
  const nf = await httpProbe(clock, req('/status/404'));
  assert.equal(nf.kind, 'failure');
  assert.match(nf.kind === 'failure' ? nf.output : '', /HTTP probe failed with statuscode: 404/);
  assert.equal((await httpProbe(clock, req('/status/500'))).kind, 'failure');
  assert.equal((await httpProbe(clock, req('/status/400'))).kind, 'failure');
});

test('3xx that is not followed is a warning (counts as success)', async () => {
  assert.equal((await httpProbe(clock, req('/status/304'))).kind, 'warning');
  assert.equal((await httpProbe(clock, req('/status/399'))).kind, 'warning');
});

test('redirects to the same host are followed; to another host they are not', async () => {
  seen.length = 0;
  assert.equal((await httpProbe(clock, req('/redirect-same'))).kind, 'success');
  assert.deepEqual(seen.map((r) => r.url), ['/redirect-same', '/status/200']);
  assert.equal((await httpProbe(clock, req('/redirect-same-to-500'))).kind, 'failure', 'the followed target decides');
  seen.length = 0;
  const other = await httpProbe(clock, req('/redirect-other-host'));
  assert.equal(other.kind, 'warning', 'the 302 itself is the result');
  assert.deepEqual(seen.map((r) => r.url), ['/redirect-other-host'], 'localhost was not contacted');
});

test('more than 10 redirects is a failure', async () => {
  seen.length = 0;
  const o = await httpProbe(clock, req('/loop'));
  assert.equal(o.kind, 'failure');
  assert.match(o.kind === 'failure' ? o.output : '', /stopped after 10 redirects/);
  assert.equal(seen.length, 11);
});

test('headers: probe headers sent, kube-probe User-Agent and Accept */* by default, Host override', async () => {
  seen.length = 0;
  await httpProbe(clock, req('/status/200'));
  assert.equal(seen[0]?.headers['user-agent'], DEFAULT_PROBE_USER_AGENT);
  assert.equal(seen[0]?.headers['accept'], '*/*');
  assert.equal(seen[0]?.headers['connection'], 'close', 'no keep-alive between probes');
  seen.length = 0;
  const headers = buildHeaders([{ name: 'X-Probe', value: 'a' }, { name: 'X-Probe', value: 'b' }, { name: 'Host', value: 'example.test' }, { name: 'User-Agent', value: 'mine' }], DEFAULT_PROBE_USER_AGENT);
  await httpProbe(clock, req('/status/200', { headers }));
  assert.equal(seen[0]?.headers['x-probe'], 'a, b');
  assert.equal(seen[0]?.headers['host'], 'example.test');
  assert.equal(seen[0]?.headers['user-agent'], 'mine');
});

test('the body read is bounded at 10 KiB', async () => {
  const o = await httpProbe(clock, req('/big'));
  assert.equal(o.kind, 'success');
  assert.equal(o.kind === 'success' ? o.output.length : -1, 10 * 1024);
});

test('a refused connection is a failure', async () => {
  const s = net.createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const closedPort = (s.address() as net.AddressInfo).port;
  s.close();
  await once(s, 'close');
  const o = await httpProbe(clock, req('/', { port: closedPort }));
  assert.equal(o.kind, 'failure');
  assert.match(o.kind === 'failure' ? o.output : '', /ECONNREFUSED/);
});

test('HTTPS is probed without certificate verification', async () => {
  const o = await httpProbe(clock, req('/status/200', { scheme: 'https', port: tlsPort }));
  assert.equal(o.kind, 'success');
  assert.equal((await httpProbe(clock, req('/status/503', { scheme: 'https', port: tlsPort }))).kind, 'failure');
});

test('timeout: a server that does not answer within timeoutSeconds is a failure (fake clock)', async () => {
  const c = new FakeClock();
  const before = hanging.length;
  const pending = httpProbe(c, req('/hang', { timeoutMs: 2000 }));
  await once(server, 'request');
  const box: { r?: ProbeOutcome } = {};
  void pending.then((r) => (box.r = r));
  c.step(1999);
  // The deadline is the probe's only timer: still pending at 1999 ms means it has not fired.
  assert.equal(c.pendingTimers, 1, 'not yet timed out');
  assert.ok(box.r === undefined, 'not yet timed out');
  c.step(1);
  const r = await within(pending, 'the probe to time out at 2000 ms');
  assert.equal(r?.kind, 'failure');
  assert.match(r?.kind === 'failure' ? r.output : '', /deadline exceeded/);
  assert.equal(hanging.length, before + 1);
  assert.equal(c.pendingTimers, 0);
});

test('abort: a stopped worker cancels its probe as an error, not a failure', async () => {
  const ac = new AbortController();
  const pending = httpProbe(clock, req('/hang', { signal: ac.signal }));
  await once(server, 'request');
  ac.abort();
  const o = await pending;
  assert.equal(o.kind, 'error');
  assert.equal(o.kind === 'error' ? o.error.code : '', 'ERR_PROBE_ABORTED');
});
