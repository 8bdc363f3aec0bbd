/** V1Probe normalisation: API defaults, liveness/startup successThreshold, handlers, headers. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildHeaders, normalizeProbe, PROBE_DEFAULTS } from '../../../workers/prober/probe-spec.js';

test('API defaults: timeout 1, period 10, success 1, failure 3, delay 0; zero counts as unset', () => {
  const s = normalizeProbe({ exec: { command: ['true'] } }, 'readiness');
  assert.deepEqual({ ...s, handler: undefined }, { ...PROBE_DEFAULTS, handler: undefined });
  const z = normalizeProbe({ exec: { command: ['true'] }, periodSeconds: 0, timeoutSeconds: 0, failureThreshold: 0 }, 'liveness');
  assert.equal(z.periodSeconds, 10);
  assert.equal(z.timeoutSeconds, 1);
  assert.equal(z.failureThreshold, 3);
});

test('successThreshold is kept for readiness and forced to 1 for liveness and startup', () => {
  const p = { tcpSocket: { port: 80 }, successThreshold: 3 };
  assert.equal(normalizeProbe(p, 'readiness').successThreshold, 3);
  assert.equal(normalizeProbe(p, 'liveness').successThreshold, 1);
  assert.equal(normalizeProbe(p, 'startup').successThreshold, 1);
});

test('handlers: httpGet scheme and path normalised; grpc service defaults to empty; none when missing', () => {
  const h = normalizeProbe({ httpGet: { port: 'http', path: 'healthz?full=1', scheme: 'HTTPS' } }, 'liveness').handler;
  assert.equal(h.kind, 'httpGet');
  if (h.kind === 'httpGet') {
    assert.equal(h.scheme, 'https');
    assert.equal(h.path, '/healthz?full=1');
    assert.equal(h.host, '');
    assert.equal(h.port, 'http');
  }
  const e = normalizeProbe({ httpGet: { port: 80 } }, 'liveness').handler;
  assert.equal(e.kind === 'httpGet' ? e.path : '', '/');
  assert.deepEqual(normalizeProbe({ grpc: { port: 9000 } }, 'liveness').handler, { kind: 'grpc', port: 9000, service: '' });
  assert.equal(normalizeProbe({}, 'liveness').handler.kind, 'none');
});

test('headers: repeats become lists, defaults only when unset, Accept "" removes Accept', () => {
  assert.deepEqual(buildHeaders([], 'kube-probe/9.9'), { 'user-agent': 'kube-probe/9.9', accept: '*/*' });
  assert.deepEqual(buildHeaders([{ name: 'X-A', value: '1' }, { name: 'x-a', value: '2' }, { name: 'Accept', value: 'text/plain' }], 'u'),
    { 'x-a': ['1', '2'], accept: 'text/plain', 'user-agent': 'u' });
  assert.deepEqual(buildHeaders([{ name: 'Accept', value: '' }], 'u'), { 'user-agent': 'u' });
});
