/**
 * Probe worker semantics through the ProberManager API, on a FakeClock with a scripted ExecSync
 * runtime: thresholds, initial delay, period and jitter, timeouts, errors, updates on change.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Container } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { ProberManager } from '../../../workers/prober/prober-manager.js';
import type { ProbeResult, ProbeType, ProbeUpdate } from '../../../src/shared/protocol/probe-update.js';
import { FakeExecRuntime } from './fake-exec-runtime.js';
import { advance, execProbe, makePod, makeStatus, trackProbes } from './prober-fixtures.js';

function setup(random = 0) {
  const clock = new FakeClock();
  const rt = new FakeExecRuntime(clock);
  const updates: ProbeUpdate[] = [];
  const probes: Array<{ type: ProbeType; result: ProbeResult; seconds: number; container: string }> = [];
  const m = new ProberManager({
    runtime: rt, clock, random: () => random, onProbesInFlight: trackProbes(clock, rt).onProbesInFlight,
    onUpdate: (u) => updates.push(u),
    onProbe: (type, result, seconds, _pod, container) => probes.push({ type, result, seconds, container }),
  });
  const t0 = clock.now();
  const start = (containers: V1Container[], id = 'c1', startedAtMs = t0): void => {
    m.addPod(makePod('p1', containers));
    m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id, startedAtMs }]));
  };
  /** Call times of `id`, in seconds since t0. */
  const callSecs = (id = 'c1'): number[] => rt.callsFor(id).map((c) => (c.at - t0) / 1000);
  return { clock, rt, updates, probes, m, t0, start, callSecs };
}

test('liveness: failure only after failureThreshold (3) consecutive failures, then held until a new instance', async () => {
  const { clock, rt, updates, m, start, callSecs } = setup();
  rt.setDefault('c1', { exitCode: 1, stdout: 'unhealthy' });
  start([{ name: 'app', livenessProbe: execProbe() }]);
  assert.equal(m.results.get('c1', 'liveness'), 'success', 'a new instance starts live');
  await advance(clock, 10_000);
  assert.deepEqual(callSecs(), [0, 10]);
  assert.equal(m.results.get('c1', 'liveness'), 'success', 'two failures are below the threshold');
  assert.deepEqual(updates, []);
  await advance(clock, 10_000);
  assert.equal(m.results.get('c1', 'liveness'), 'failure');
  assert.deepEqual(updates, [{ podUID: 'p1', containerId: 'c1', containerName: 'app', type: 'liveness', result: 'failure' }]);
  await advance(clock, 50_000);
  assert.deepEqual(callSecs(), [0, 10, 20], 'a container reported dead is not probed again');

  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c2', startedAtMs: clock.now() }, { name: 'app', id: 'c1', state: 'CONTAINER_EXITED' }]));
  assert.equal(m.results.get('c2', 'liveness'), 'success', 'results reset for the new instance');
  assert.equal(m.results.get('c1', 'liveness'), 'unknown', 'the old instance is forgotten');
  await advance(clock, 10_000);
  assert.equal(rt.callsFor('c2').length, 1, 'probing resumes on the new instance');
  assert.equal(updates.length, 1, 'the reset to the initial result is not an update');
});

test('readiness: successThreshold 2 and failureThreshold 3; one update per change', async () => {
  const { clock, rt, updates, m, start } = setup();
  rt.script('c1', { exitCode: 0 }, { exitCode: 0 }, { exitCode: 0 }, { exitCode: 0 }, { exitCode: 1 }, { exitCode: 1 }, { exitCode: 1 });
  start([{ name: 'app', readinessProbe: execProbe({ successThreshold: 2, periodSeconds: 5 }) }]);
  assert.equal(m.results.get('c1', 'readiness'), 'failure', 'a new instance starts unready');
  await advance(clock, 0);
  assert.equal(m.results.get('c1', 'readiness'), 'failure', 'one success is below successThreshold 2');
  await advance(clock, 5_000);
  assert.equal(m.results.get('c1', 'readiness'), 'success');
  await advance(clock, 10_000); // successes 3, 4: no change, no update
  await advance(clock, 10_000); // failures 1, 2
  assert.equal(m.results.get('c1', 'readiness'), 'success');
  await advance(clock, 5_000); // failure 3
  assert.equal(m.results.get('c1', 'readiness'), 'failure');
  assert.deepEqual(updates.map((u) => u.result), ['success', 'failure']);
  assert.equal(rt.callsFor('c1').length, 7, 'readiness keeps probing after failure (it is never held)');
});

test('initialDelaySeconds counts from the container start; ticks stay on the period grid', async () => {
  const { clock, rt, start, callSecs } = setup();
  rt.setDefault('c1', { exitCode: 0 });
  start([{ name: 'app', livenessProbe: execProbe({ initialDelaySeconds: 15, periodSeconds: 10 }) }], 'c1', clock.now() - 2_000);
  await advance(clock, 45_000);
  // Started 2 s before t0: 13 s in at t=10 (too early), 18 s in at t=20.
  assert.deepEqual(callSecs(), [20, 30, 40]);
});

test('the first probe is at a random offset within the period (injected Random)', async () => {
  const { clock, rt, start, callSecs } = setup(0.25);
  rt.setDefault('c1', { exitCode: 0 });
  start([{ name: 'app', livenessProbe: execProbe({ periodSeconds: 8 }) }]);
  await advance(clock, 20_000);
  assert.deepEqual(callSecs(), [2, 10, 18]);
});

test('exec timeout: a command running past timeoutSeconds is a failure; the timeout is passed to ExecSync', async () => {
  const { clock, rt, probes, m, start } = setup();
  rt.setDefault('c1', { exitCode: 0, delayMs: 5_000 });
  start([{ name: 'app', livenessProbe: execProbe({ timeoutSeconds: 2, failureThreshold: 1, periodSeconds: 10 }) }]);
  await advance(clock, 1_900);
  assert.equal(m.results.get('c1', 'liveness'), 'success', 'still running before the timeout');
  await advance(clock, 200);
  assert.equal(m.results.get('c1', 'liveness'), 'failure');
  assert.equal(rt.calls[0]?.timeout, 2);
  assert.deepEqual(rt.calls[0]?.cmd, ['/bin/check'], 'the command is used as written, no shell added');
  assert.equal(probes.length, 1);
  assert.equal(probes[0]?.result, 'failure');
  assert.ok(Math.abs((probes[0]?.seconds ?? 0) - 2) < 0.11, `duration ${probes[0]?.seconds}`);
});

test('a probe that outlives its period runs again right after (one buffered tick), not once per missed tick', async () => {
  const { clock, rt, start, callSecs } = setup();
  rt.setDefault('c1', { exitCode: 0, delayMs: 25_000 });
  start([{ name: 'app', readinessProbe: execProbe({ timeoutSeconds: 30, periodSeconds: 10 }) }]);
  await advance(clock, 30_000);
  assert.deepEqual(callSecs(), [0, 25]);
});

test('errored probes (runtime unavailable) are retried and then thrown away: no threshold progress', async () => {
  const { clock, rt, probes, updates, m, start } = setup();
  rt.script('c1', { exitCode: 1 }, { exitCode: 1 }, { error: 'ERR_CRI_UNAVAILABLE' }, { error: 'ERR_CRI_UNAVAILABLE' }, { error: 'ERR_CRI_UNAVAILABLE' }, { exitCode: 1 });
  start([{ name: 'app', livenessProbe: execProbe() }]);
  await advance(clock, 20_000);
  assert.equal(rt.calls.length, 5, 'the errored probe was attempted 3 times');
  assert.equal(m.results.get('c1', 'liveness'), 'success', 'two failures then an error: still below threshold');
  await advance(clock, 10_000);
  assert.equal(m.results.get('c1', 'liveness'), 'failure', 'the third real failure crosses it');
  assert.deepEqual(probes.map((p) => p.result), ['failure', 'failure', 'unknown', 'failure']);
  assert.equal(updates.length, 1);
});

test('a CREATED instance is waited for; an exited one is failure and, with restartPolicy Never, ends the worker', async () => {
  const { clock, rt, updates, m } = setup();
  m.addPod(makePod('p1', [{ name: 'app', livenessProbe: execProbe(), readinessProbe: execProbe() }], { restartPolicy: 'Never' }));
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c1', state: 'CONTAINER_CREATED' }]));
  await advance(clock, 20_000);
  assert.equal(rt.calls.length, 0);
  assert.equal(m.results.get('c1', 'liveness'), 'success', 'no failure for a container that has not started yet');
  assert.equal(m.workerCount, 2);
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c1', state: 'CONTAINER_EXITED', startedAtMs: clock.now() - 5_000 }]));
  await advance(clock, 10_000);
  assert.equal(rt.calls.length, 0, 'non-running containers are not probed');
  assert.deepEqual(updates.map((u) => `${u.type}:${u.result}`), ['liveness:failure'], 'readiness was already failure');
  assert.equal(m.workerCount, 0, 'exited with restartPolicy Never: the workers end');
  await advance(clock, 30_000);
  assert.equal(rt.calls.length, 0);
});

test('updates for an instance replaced during an in-flight probe are discarded', async () => {
  const { clock, rt, updates, m, start, t0 } = setup();
  rt.setDefault('c1', { exitCode: 0, delayMs: 500 });
  rt.setDefault('c2', { exitCode: 1 });
  start([{ name: 'app', readinessProbe: execProbe() }]);
  await advance(clock, 100);
  assert.equal(rt.inFlight, 1);
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c2' }], {}));
  assert.equal(m.results.get('c2', 'readiness'), 'failure');
  await advance(clock, 1_000);
  assert.equal(m.results.get('c1', 'readiness'), 'unknown', 'the late c1 success was not stored');
  assert.deepEqual(rt.calls.map((c) => `${c.containerId}@${c.at - t0}`), ['c1@0', 'c2@500'], 'c2 is probed as soon as the stale probe ends');
  assert.equal(m.results.get('c2', 'readiness'), 'failure', 'c1 answering success says nothing about c2');
  assert.deepEqual(updates, []);
});

test('a new instance starts its threshold run afresh (shardlet resets it; the kubelet carries it over)', async () => {
  const { clock, rt, m, start } = setup();
  start([{ name: 'app', readinessProbe: execProbe({ successThreshold: 2 }) }]);
  await advance(clock, 0);
  assert.equal(rt.callsFor('c1').length, 1);
  m.updatePodStatus('p1', makeStatus('p1', [{ name: 'app', id: 'c2', startedAtMs: clock.now() }]));
  await advance(clock, 5_000);
  assert.equal(rt.callsFor('c2').length, 1, 'c2 probed at once (readiness trigger on start)');
  assert.equal(m.results.get('c2', 'readiness'), 'failure', 'one success of c2 is below successThreshold 2');
  await advance(clock, 5_000);
  assert.equal(rt.callsFor('c2').length, 2);
  assert.equal(m.results.get('c2', 'readiness'), 'success');
});
