/**
 * Cluster mode: a failed probe records the kubelet's Unhealthy event (Warning, "<Type> probe
 * failed: <output>", the container's field path) through the ProberManager's event recorder; a
 * probe that succeeds with a warning (an HTTP redirect to another host) records ProbeWarning
 * (Warning, "<Type> probe warning: <output>", as the kubelet's prober.go).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type net from 'node:net';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { ProberManager } from '../../../workers/prober/prober-manager.js';
import { createProber } from '../../../workers/prober/prober.js';
import { probeFailure } from '../../../workers/prober/probe-outcome.js';
import { FakeExecRuntime } from './fake-exec-runtime.js';
import { execProbe, makePod, makeStatus } from './prober-fixtures.js';

test('a failed liveness probe records an Unhealthy event', async () => {
  const clock = new FakeClock();
  const events: { type: string; reason: string; message: string; fieldPath: string | undefined; uid: string | undefined }[] = [];
  const m = new ProberManager({
    runtime: new FakeExecRuntime(clock), clock, random: () => 0, onUpdate: () => {},
    prober: { run: async () => probeFailure('connection refused') },
    events: (pod, type, reason, message, fieldPath) => events.push({ type, reason, message, fieldPath, uid: pod.metadata?.uid }),
  });
  m.addPod(makePod('p1', [{ name: 'app', livenessProbe: execProbe({ periodSeconds: 1, failureThreshold: 3 }) }]));
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c1', startedAtMs: clock.now() }]));
  assert.ok(await clock.runUntil(() => events.length >= 1, { maxMs: 30_000 }), 'an event within 30 s of fake time');
  assert.deepEqual(events[0], { type: 'Warning', reason: 'Unhealthy', message: 'Liveness probe failed: connection refused', fieldPath: 'spec.containers{app}', uid: 'p1' });
  m.close();
});

test('an HTTP probe redirected to another host records a ProbeWarning event and counts as success', async () => {
  // The product's HTTP prober (no stand-in) against a local server whose answer is a redirect
  // to another host name (localhost instead of 127.0.0.1): the kubelet does not follow it.
  const server = http.createServer((req, res) => {
    const port = (req.socket.localPort ?? 0);
    res.writeHead(302, { location: `http://localhost:${port}/elsewhere` }).end('moved');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  const clock = new FakeClock();
  const events: { type: string; reason: string; message: string; fieldPath: string | undefined }[] = [];
  let signal!: () => void;
  const recorded = new Promise<void>((r) => (signal = r));
  const updates: string[] = [];
  const runtime = new FakeExecRuntime(clock);
  // The product's prober, observed: the probe's start is driven by fake time, its HTTP exchange is real.
  const real = createProber({ runtime, clock });
  let started = 0;
  const m = new ProberManager({
    runtime, clock, random: () => 0, onUpdate: (u) => updates.push(`${u.type}:${u.result}`),
    prober: { run: (spec, target) => (started++, real.run(spec, target)) },
    events: (_pod, type, reason, message, fieldPath) => {
      events.push({ type, reason, message, fieldPath });
      signal();
    },
  });
  try {
    // timeoutSeconds is far beyond the test's bound: the fake clock never times the probe out.
    m.addPod(makePod('p2', [{ name: 'web', readinessProbe: { httpGet: { host: '127.0.0.1', port, path: '/ready' }, periodSeconds: 10, timeoutSeconds: 600 } }]));
    m.updatePodStatus('p2', makeStatus('p2', [{ name: 'web', id: 'c2', startedAtMs: clock.now() }]));
    assert.ok(await clock.runUntil(() => started > 0, { maxMs: 30_000 }), 'the probe started within 30 s of fake time');
    // From here fake time stands still: the probe's 600 s timeout cannot fire; the answer decides.
    await withBound(recorded, 20_000, 'the ProbeWarning event');
    assert.deepEqual(events, [{ type: 'Warning', reason: 'ProbeWarning', message: 'Readiness probe warning: Probe terminated redirects, Response body: moved', fieldPath: 'spec.containers{web}' }]);
    assert.equal(m.results.get('c2', 'readiness'), 'success', 'a warning is a success for the thresholds');
    assert.deepEqual(updates, ['readiness:success']);
  } finally {
    m.close();
    server.closeAllConnections();
    server.close();
  }
});

/** Resolves with `p`, or rejects naming `what` after `ms` of real time (a bound, not a sleep). */
async function withBound(p: Promise<void>, ms: number, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    await Promise.race([p, bound]);
  } finally {
    clearTimeout(timer);
  }
}
