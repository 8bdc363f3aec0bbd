/**
 * ProberManager lifecycle: startup gating, readiness on start, termination, removal, host
 * selection, sidecars, and the one-timer-per-thread property at 1,000 pods.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Container } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { ProberManager } from '../../../workers/prober/prober-manager.js';
import type { Prober, ProbeTarget } from '../../../workers/prober/prober.js';
import { PROBE_SUCCESS } from '../../../workers/prober/probe-outcome.js';
import type { ProbeUpdate } from '../../../src/shared/protocol/probe-update.js';
import type { ProbeSpec } from '../../../workers/prober/probe-spec.js';
import { FakeExecRuntime } from './fake-exec-runtime.js';
import { within } from '../../harness/poll.js';
import { advance, execProbe, makePod, makeStatus, trackProbes } from './prober-fixtures.js';

function setup(random = 0.5) {
  const clock = new FakeClock();
  const rt = new FakeExecRuntime(clock);
  const updates: ProbeUpdate[] = [];
  const m = new ProberManager({ runtime: rt, clock, random: () => random, onUpdate: (u) => updates.push(u), onProbesInFlight: trackProbes(clock, rt).onProbesInFlight });
  return { clock, rt, updates, m, t0: clock.now() };
}

const STARTUP = ['/bin/started'];
const READY = ['/bin/ready'];
const LIVE = ['/bin/live'];

function gated(): V1Container {
  return {
    name: 'app',
    startupProbe: execProbe({ periodSeconds: 5, failureThreshold: 30 }, STARTUP),
    readinessProbe: execProbe({ periodSeconds: 10 }, READY),
    livenessProbe: execProbe({ periodSeconds: 10 }, LIVE),
  };
}

test('startup probe gates liveness and readiness; readiness is probed at once when the container starts', async () => {
  const { clock, rt, updates, m, t0 } = setup(0);
  rt.script('c1', { exitCode: 1 }, { exitCode: 1 }); // two startup failures, then exit 0 for everything
  m.addPod(makePod('p1', [gated()]));
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c1', startedAtMs: t0 }]));
  assert.equal(m.isStarted('c1'), false);
  assert.equal(m.isReady('c1'), false);
  await advance(clock, 9_000);
  const cmds = (): string[] => rt.calls.map((c) => `${(c.at - t0) / 1000}:${c.cmd[0]}`);
  assert.deepEqual(cmds(), ['0:/bin/started', '5:/bin/started'], 'only the startup probe runs while it fails');
  await advance(clock, 1_100);
  assert.equal(m.isStarted('c1'), true);
  // t=10: startup succeeds; readiness is triggered at once (its own tick at 10 found it not started).
  assert.deepEqual(cmds().slice(2), ['10:/bin/started', '10:/bin/ready']);
  assert.equal(m.isReady('c1'), true);
  assert.deepEqual(updates.map((u) => `${u.type}:${u.result}`), ['startup:success', 'readiness:success']);
  await advance(clock, 19_900);
  assert.deepEqual(cmds().slice(4).sort(), ['20:/bin/live', '20:/bin/ready', '30:/bin/live', '30:/bin/ready'], 'startup stops once started');
});

test('without a startup probe a running container counts as started; no readiness probe means ready', () => {
  const { m, t0 } = setup();
  m.addPod(makePod('p1', [{ name: 'app', livenessProbe: execProbe() }, { name: 'web', readinessProbe: execProbe() }]));
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'a1', startedAtMs: t0 }, { name: 'web', id: 'w1', startedAtMs: t0 }]));
  assert.equal(m.isStarted('a1'), true);
  assert.equal(m.isReady('a1'), true);
  assert.equal(m.isReady('w1'), false, 'a readiness probe that has not succeeded yet');
  assert.equal(m.isReady('untracked'), true, 'containers without probes have no gate');
});

test('removePod stops probing: no ExecSync after removal, results and workers gone', async () => {
  const { clock, rt, m, t0 } = setup();
  m.addPod(makePod('p1', [gated()]));
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c1', startedAtMs: t0 }]));
  await advance(clock, 30_000);
  const before = rt.calls.length;
  assert.ok(before >= 4, `probing ran (${before} calls)`);
  assert.equal(m.workerCount, 3);
  m.removePod('p1');
  assert.equal(m.workerCount, 0);
  await advance(clock, 120_000, 1_000);
  assert.equal(rt.calls.length, before);
  assert.equal(m.results.get('c1', 'readiness'), 'unknown');
  assert.equal(m.results.get('c1', 'startup'), 'unknown');
  assert.equal(clock.pendingTimers, 0, 'no timer left behind');
  m.removePod('p1'); // idempotent
});

test('removePod aborts an in-flight probe and its late outcome changes nothing', async () => {
  const { clock, rt, updates, m, t0 } = setup(0);
  rt.setDefault('c1', { exitCode: 1, delayMs: 800 });
  m.addPod(makePod('p1', [{ name: 'app', livenessProbe: execProbe({ failureThreshold: 1, timeoutSeconds: 5 }) }]));
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c1', startedAtMs: t0 }]));
  await advance(clock, 100);
  assert.equal(rt.inFlight, 1);
  m.removePod('p1');
  // The call ends only through its signal: its delay is 800 ms of fake time and none passes.
  await within(rt.whenIdle(), 'the in-flight ExecSync call to be cancelled');
  assert.equal(rt.inFlight, 0, 'the ExecSync call was cancelled through its signal');
  await advance(clock, 2_000);
  assert.deepEqual(updates, []);
});

test('a terminating pod: readiness goes to failure, liveness and startup stop', async () => {
  const clock = new FakeClock();
  const rt = new FakeExecRuntime(clock);
  const updates: ProbeUpdate[] = [];
  const m = new ProberManager({ runtime: rt, clock, random: () => 0, onUpdate: (u) => updates.push(u), onProbesInFlight: trackProbes(clock, rt).onProbesInFlight });
  const t0 = clock.now();
  m.addPod(makePod('p1', [{ name: 'app', startupProbe: execProbe({}, STARTUP), readinessProbe: execProbe({}, READY), livenessProbe: execProbe({}, LIVE) }]));
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c1', startedAtMs: t0 }]));
  await advance(clock, 1_000);
  assert.equal(m.results.get('c1', 'startup'), 'success');
  assert.equal(m.isReady('c1'), true);
  assert.deepEqual(updates.map((u) => `${u.type}:${u.result}`), ['startup:success', 'readiness:success']);
  const pod = makePod('p1', []);
  pod.metadata = { ...pod.metadata, deletionTimestamp: new Date(clock.now()) };
  m.addPod(pod); // the pod update carrying deletionTimestamp
  assert.equal(m.results.get('c1', 'readiness'), 'failure');
  assert.equal(m.isReady('c1'), false);
  assert.deepEqual(updates.map((u) => `${u.type}:${u.result}`), ['startup:success', 'readiness:success', 'readiness:failure']);
  assert.equal(m.results.get('c1', 'startup'), 'success', 'a started container still reads as started');
  assert.equal(m.results.get('c1', 'liveness'), 'unknown', 'no liveness verdict on a terminating pod');
  assert.equal(m.isStarted('c1'), true);
  const n = rt.calls.length;
  await advance(clock, 60_000, 1_000);
  assert.equal(rt.calls.length, n, 'no probing while terminating');
  assert.equal(m.workerCount, 0);
  m.removePod('p1');
  assert.equal(m.workerCount, 0, 'each worker counted stopped once');
  assert.equal(m.results.get('c1', 'readiness'), 'unknown', 'removal forgets everything');
  assert.equal(m.results.get('c1', 'startup'), 'unknown');
});

test('HTTP/TCP probes go to the pod IP, or the host IP for host-network pods', async () => {
  const clock = new FakeClock();
  const hosts: string[] = [];
  const prober: Prober = {
    run(_spec: ProbeSpec, t: ProbeTarget) {
      hosts.push(`${t.containerId}@${t.defaultHost}`);
      return Promise.resolve(PROBE_SUCCESS);
    },
  };
  const m = new ProberManager({ runtime: new FakeExecRuntime(clock), clock, random: () => 0, onUpdate: () => {}, hostIP: '192.0.2.10', prober, onProbesInFlight: trackProbes(clock).onProbesInFlight });
  const c: V1Container = { name: 'app', livenessProbe: { tcpSocket: { port: 80 } } };
  m.addPod(makePod('pod', [c]));
  m.addPod(makePod('host', [c], { hostNetwork: true }));
  m.updatePodStatus('pod', makeStatus('pod', [{ name: 'app', id: 'a', startedAtMs: clock.now() }], { ip: '10.1.0.9' }));
  m.updatePodStatus('host', makeStatus('host', [{ name: 'app', id: 'b', startedAtMs: clock.now() }], { ip: '', hostNetwork: true }));
  await advance(clock, 0);
  assert.deepEqual(hosts.sort(), ['a@10.1.0.9', 'b@192.0.2.10']);
});

test('restartable init containers (sidecars) are probed; plain init containers are not', async () => {
  const { clock, rt, m, t0 } = setup(0);
  m.addPod(makePod('p1', [{ name: 'app' }], {
    initContainers: [
      { name: 'sidecar', restartPolicy: 'Always', livenessProbe: execProbe() },
      { name: 'init', livenessProbe: execProbe() },
    ],
  }));
  assert.equal(m.workerCount, 1);
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'sidecar', id: 's1', startedAtMs: t0 }, { name: 'init', id: 'i1', startedAtMs: t0 }]));
  await advance(clock, 0);
  assert.deepEqual(rt.calls.map((c) => c.containerId), ['s1']);
});

test('1,000 pods with one probe each share one scheduler timer; ticks are spread by the jitter', async () => {
  const clock = new FakeClock();
  const rt = new FakeExecRuntime(clock);
  let seed = 1;
  const random = (): number => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  const m = new ProberManager({ runtime: rt, clock, random, onUpdate: () => {}, onProbesInFlight: trackProbes(clock, rt).onProbesInFlight });
  for (let i = 0; i < 1000; i++) {
    m.addPod(makePod(`p${i}`, [{ name: 'app', livenessProbe: execProbe() }]));
    m.updatePodStatus(`p${i}`, makeStatus(`p${i}`, [{ name: 'app', id: `c${i}`, startedAtMs: clock.now() }]));
  }
  assert.equal(m.workerCount, 1000);
  assert.equal(clock.pendingTimers, 1, 'one armed timer for all 1,000 workers');
  await advance(clock, 10_000, 1_000);
  assert.equal(rt.calls.length, 1000, 'each worker probed once per period');
  const perSecond = new Map<number, number>();
  for (const c of rt.calls) perSecond.set(Math.floor((c.at - rt.calls[0]!.at) / 1000), (perSecond.get(Math.floor((c.at - rt.calls[0]!.at) / 1000)) ?? 0) + 1);
  assert.ok(Math.max(...perSecond.values()) < 200, `probes spread over the period: ${[...perSecond.values()].join(',')}`);
  assert.ok(clock.pendingTimers <= 1);
  m.close();
  assert.equal(clock.pendingTimers, 0);
  assert.equal(m.workerCount, 0);
});
