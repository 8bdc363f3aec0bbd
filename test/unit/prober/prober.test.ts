/**
 * The probe runner: handler dispatch, named ports, host selection, retries of errored probes.
 * HTTP and TCP go to a local server on 127.0.0.1.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import type { V1Container } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { createProber, MAX_PROBE_ATTEMPTS, type ProbeTarget } from '../../../workers/prober/prober.js';
import { resolveProbePort } from '../../../workers/prober/probe-port.js';
import { normalizeProbe } from '../../../workers/prober/probe-spec.js';
import { ProbeError } from '../../../workers/prober/prober-errors.js';
import { FakeExecRuntime } from './fake-exec-runtime.js';

const paths: string[] = [];
const server = http.createServer((req, res) => {
  paths.push(req.url ?? '');
  res.writeHead(req.url === '/fail' ? 500 : 200).end();
}).listen(0, '127.0.0.1');
await once(server, 'listening');
const port = (server.address() as net.AddressInfo).port;
after(() => server.close());

const clock = new FakeClock();
const rt = new FakeExecRuntime(clock);
const prober = createProber({ runtime: rt, clock });
const container: V1Container = { name: 'app', ports: [{ name: 'http', containerPort: port }, { name: 'bad', containerPort: 70000 }] };
function target(defaultHost = '127.0.0.1', c: V1Container = container): ProbeTarget {
  return { containerId: 'c1', container: c, defaultHost, signal: new AbortController().signal };
}

test('resolveProbePort: numbers, named ports, numeric strings, invalid ports', () => {
  assert.equal(resolveProbePort(8080, container), 8080);
  assert.equal(resolveProbePort('http', container), port);
  assert.equal(resolveProbePort('9090', container), 9090);
  const missing = resolveProbePort('metrics', container);
  assert.ok(missing instanceof ProbeError && missing.code === 'ERR_PROBE_PORT');
  const bad = resolveProbePort('bad', container);
  assert.ok(bad instanceof ProbeError && bad.code === 'ERR_PROBE_PORT');
  assert.ok(resolveProbePort(0, container) instanceof ProbeError);
});

test('httpGet with a named port goes to the pod IP by default, or to the probe host', async () => {
  paths.length = 0;
  const ok = await prober.run(normalizeProbe({ httpGet: { port: 'http', path: '/healthz' } }, 'readiness'), target());
  assert.equal(ok.kind, 'success');
  const fail = await prober.run(normalizeProbe({ httpGet: { port: 'http', path: '/fail', host: '127.0.0.1' } }, 'readiness'), target('192.0.2.1'));
  assert.equal(fail.kind, 'failure', 'the probe host wins over the pod IP');
  assert.deepEqual(paths, ['/healthz', '/fail']);
});

test('tcpSocket with a named port', async () => {
  assert.equal((await prober.run(normalizeProbe({ tcpSocket: { port: 'http' } }, 'liveness'), target())).kind, 'success');
});

test('an unknown named port, no pod IP, or no handler is an error (not retried, no runtime call)', async () => {
  const unknown = await prober.run(normalizeProbe({ tcpSocket: { port: 'metrics' } }, 'liveness'), target());
  assert.equal(unknown.kind === 'error' ? unknown.error.code : unknown.kind, 'ERR_PROBE_PORT');
  const noIp = await prober.run(normalizeProbe({ httpGet: { port: 80 } }, 'liveness'), target(''));
  assert.equal(noIp.kind === 'error' ? noIp.error.code : noIp.kind, 'ERR_PROBE_NO_HOST');
  const none = await prober.run(normalizeProbe({}, 'liveness'), target());
  assert.equal(none.kind === 'error' ? none.error.code : none.kind, 'ERR_PROBE_NO_HANDLER');
  const noExecPort = await prober.run(normalizeProbe({ grpc: { port: 0 } }, 'liveness'), target());
  assert.equal(noExecPort.kind === 'error' ? noExecPort.error.code : noExecPort.kind, 'ERR_PROBE_PORT');
  assert.equal(rt.calls.length, 0);
});

test('exec runtime errors are retried up to 3 attempts; a failure is not retried', async () => {
  const r = new FakeExecRuntime(clock);
  const p = createProber({ runtime: r, clock });
  const spec = normalizeProbe({ exec: { command: ['check'] } }, 'liveness');
  r.script('c1', { error: 'ERR_CRI_UNAVAILABLE' }, { exitCode: 0 });
  assert.equal((await p.run(spec, target())).kind, 'success');
  assert.equal(r.calls.length, 2);
  r.script('c1', { error: 'ERR_CRI_UNAVAILABLE' }, { error: 'ERR_CRI_UNAVAILABLE' }, { error: 'ERR_CRI_UNAVAILABLE' });
  const o = await p.run(spec, target());
  assert.equal(o.kind === 'error' ? o.error.code : o.kind, 'ERR_PROBE_RUNTIME');
  assert.equal(r.calls.length, 2 + MAX_PROBE_ATTEMPTS);
  r.script('c1', { exitCode: 1 });
  assert.equal((await p.run(spec, target())).kind, 'failure');
  assert.equal(r.calls.length, 3 + MAX_PROBE_ATTEMPTS);
});
