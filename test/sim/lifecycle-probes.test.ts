/**
 * Scenario tests on the lifecycle harness: liveness, readiness and startup probes with exec
 * (interpreted by the simulated runtime), HTTP GET and TCP (real sockets to a server in this
 * process: the pods use the host network, so the prober dials the node IP, 127.0.0.1).
 * Thresholds, a liveness failure restarting the container (and counting toward its backoff),
 * readiness driving Ready, and startup gating the other two.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { V1PodStatus } from '@kubernetes/client-node';
import { LifecycleHarness, assertInOrder, container, containerView, instancesOf, pod, restartGapsSeconds } from './lifecycle-harness.js';

/** An HTTP server on 127.0.0.1 answering 200 or 503 as the test decides. */
async function healthServer(): Promise<{ port: number; healthy: boolean; hits: number; close(): Promise<void> }> {
  const state = { healthy: false, hits: 0 };
  const server = http.createServer((_req, res) => {
    state.hits++;
    res.statusCode = state.healthy ? 200 : 503;
    res.end(state.healthy ? 'ok' : 'not yet');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return Object.assign(state, { port, close: () => new Promise<void>((r) => server.close(() => r())) });
}

/** A port with nothing listening yet; `open()` starts accepting TCP connections on it. */
async function laterPort(): Promise<{ port: number; open(): Promise<void>; close(): Promise<void> }> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const server = net.createServer((s) => s.end());
  return {
    port,
    open: () => new Promise<void>((r) => server.listen(port, '127.0.0.1', r)),
    close: () => new Promise<void>((r) => (server.listening ? server.close(() => r()) : r())),
  };
}

const ready = (s: V1PodStatus): string => {
  const c = s.conditions?.find((x) => x.type === 'Ready')?.status ?? '?';
  const cs = s.containerStatuses?.[0];
  return `Ready=${c} started=${cs?.started ?? '?'} ready=${cs?.ready ?? '?'}`;
};

test('readiness (HTTP GET): thresholds drive the container ready flag and the pod Ready condition', async (t) => {
  const srv = await healthServer();
  const h = await LifecycleHarness.start();
  t.after(async () => {
    await h.close();
    await srv.close();
  });
  h.apply(pod('web', { hostNetwork: true, shareProcessNamespace: true, containers: [container('app', {
    command: ['sleep', '3600'],
    readinessProbe: { httpGet: { path: '/healthz', port: srv.port }, periodSeconds: 1, successThreshold: 2, failureThreshold: 3 },
  })] }));
  await h.advance(5_000);
  assert.ok(srv.hits >= 4, `probed every second (${srv.hits} requests)`);
  assert.deepEqual(h.timeline('uid-web', ready).slice(-1), ['Ready=False started=true ready=false'], 'never ready while the server answers 503');
  srv.healthy = true;
  const okAt = h.clock.now();
  await h.advance(5_000);
  srv.healthy = false;
  const badAt = h.clock.now();
  await h.advance(6_000);
  assertInOrder(h.timeline('uid-web', ready), [
    'Ready=False started=true ready=false', 'Ready=True started=true ready=true', 'Ready=False started=true ready=false',
  ]);
  // successThreshold 2 at 1 s: ready 2 s after the server turns healthy; failureThreshold 3: unready 3 s after it stops.
  const becameReady = h.firstSeen('uid-web', okAt, (s) => s.containerStatuses?.[0]?.ready === true)!;
  const becameUnready = h.firstSeen('uid-web', badAt, (s) => s.containerStatuses?.[0]?.ready === false)!;
  assert.ok(becameReady >= 1 && becameReady <= 2, `ready after ${becameReady} s`);
  assert.ok(becameUnready >= 2 && becameUnready <= 3, `unready after ${becameUnready} s`);
  assert.equal(instancesOf(h.history('uid-web'), 'app').length, 1, 'readiness never restarts');
  assert.ok(h.probeRuns.readiness >= 14);
});

test('liveness (exec): a failing probe kills and restarts the container; restarts count toward the backoff', async (t) => {
  const h = await LifecycleHarness.start();
  t.after(() => h.close());
  h.apply(pod('sick', { shareProcessNamespace: true, containers: [container('app', {
    command: ['sleep', '3600'],
    livenessProbe: { exec: { command: ['sh', '-c', 'exit 1'] }, periodSeconds: 1, failureThreshold: 3 },
  })] }));
  await h.advance(40_000);
  const tries = instancesOf(h.history('uid-sick'), 'app');
  assert.ok(tries.length >= 4, `restarted (${tries.length} instances)`);
  assert.equal(tries[0]!.exitCode, 143, 'killed with SIGTERM by the kubelet');
  // Probes every second from start (no jitter in the harness): the third failure kills the
  // instance 2-3 s after it started and it is restarted in the same sync. As the kubelet's
  // doBackOff (keyed on the newest *exited* instance, none before the first kill), the first two
  // restarts are immediate and set the backoff; the third waits 10 s after the second died.
  const [first, second, third] = restartGapsSeconds(tries);
  assert.ok(first! >= 2 && first! <= 3, `first restart after ${first} s`);
  assert.ok(second! >= 2 && second! <= 3, `second restart after ${second} s`);
  assert.ok(third! >= 12 && third! <= 13, `third restart after ${third} s (probing + 10 s backoff)`);
  assertInOrder(h.timeline('uid-sick', containerView('app')), ['running+ready', 'running/r1+ready', 'running/r2+ready', 'waiting:CrashLoopBackOff/r2', 'running/r3+ready']);
  assert.match(h.status('uid-sick')!.containerStatuses![0]!.lastState?.terminated?.reason ?? '', /Error/);
});

test('startup (TCP) gates liveness and readiness; once it succeeds they run; a startup that never succeeds restarts', async (t) => {
  const gated = await laterPort();
  const never = await laterPort();
  const h = await LifecycleHarness.start();
  t.after(async () => {
    await h.close();
    await gated.close();
  });
  const spec = (port: number) => ({ hostNetwork: true, shareProcessNamespace: true, containers: [container('app', {
    command: ['sleep', '3600'],
    startupProbe: { tcpSocket: { port }, periodSeconds: 1, failureThreshold: 6 },
    // Would kill at once if it ran before startup succeeded.
    livenessProbe: { exec: { command: ['true'] }, periodSeconds: 1, failureThreshold: 1 },
    readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
  })] });
  h.apply(pod('gated', spec(gated.port)));
  h.apply(pod('never', spec(never.port)));
  await h.advance(3_000);
  assert.equal(ready(h.status('uid-gated')!), 'Ready=False started=false ready=false');
  assert.equal(h.probeRuns.readiness + h.probeRuns.liveness, 0, 'neither liveness nor readiness probed before startup succeeded');
  await gated.open();
  const openedAt = h.clock.now();
  await h.advance(4_000);
  assert.ok(h.probeRuns.readiness > 0 && h.probeRuns.liveness > 0);
  assertInOrder(h.timeline('uid-gated', ready), ['Ready=False started=false ready=false', 'Ready=True started=true ready=true']);
  const startedAfter = h.firstSeen('uid-gated', openedAt, (s) => s.containerStatuses?.[0]?.started === true)!;
  assert.ok(startedAfter <= 1, `started ${startedAfter} s after the port opened`);
  assert.equal(instancesOf(h.history('uid-gated'), 'app').length, 1);
  // 'never': 6 startup failures at 1 s kill the container; it restarts, never having been started.
  await h.advance(5_000);
  const tries = instancesOf(h.history('uid-never'), 'app');
  assert.ok(tries.length >= 2, `restarted after its startup probe failed (${tries.length})`);
  const gap = restartGapsSeconds(tries)[0]!;
  assert.ok(gap >= 5 && gap <= 6, `6th startup failure (probes at 0..5 s) after ${gap} s`);
  assert.ok(!h.timeline('uid-never', ready).some((l) => l.includes('started=true')), 'never started');
});
