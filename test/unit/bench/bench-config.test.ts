import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { BenchConfigError, parseBenchArgs } from '../../../bench/bench-config.js';
import { render } from '../../../bench/progress.js';

const NOW = new Date('2025-02-03T04:05:06.789Z');

test('quick profile: every worker count at 100 pods, inline vs 2 threads at 1000, churn on 2 threads, 5000 pods on 2 threads, one containerd-profile and one real session', () => {
  const c = parseBenchArgs([], NOW);
  assert.equal(c.profile, 'quick');
  assert.equal(c.outDir, path.resolve('bench/results/2025-02-03T04-05-06-789Z'));
  const label = (s: (typeof c.sessions)[number]): string => `${s.pods}/${s.workers}${s.steady ? '+steady' : ''}${s.churn ? '+churn' : ''}`;
  const sim = c.sessions.filter((s) => s.runtime === 'sim');
  assert.deepEqual(sim.filter((s) => s.profile === 'zero').map(label), ['100/0+steady', '100/1+steady', '100/2+steady+churn', '100/4+steady', '1000/0+steady', '1000/2+steady+churn', '5000/2+steady', '200/2+steady']);
  // The sidecar-heavy node (issue 30): 200 pods of 12 containers, its own ceiling of that shape.
  assert.deepEqual(sim.filter((s) => s.containersPerPod !== undefined).map((s) => `${s.pods}x${s.containersPerPod}/${s.workers}`), ['200x12/2']);
  assert.deepEqual(sim.filter((s) => s.profile === 'containerd').map(label), ['100/2+steady+churn']);
  assert.deepEqual(c.sessions.filter((s) => s.runtime === 'containerd').map(label), ['50/2']);
  assert.deepEqual(c.ceilings.map((x) => `${x.runtime}/${x.profile}/${x.pods}${x.containersPerPod !== undefined ? `x${x.containersPerPod}` : ''}`), ['sim/zero/100', 'sim/zero/1000', 'sim/containerd/100', 'sim/zero/5000', 'sim/zero/200x12', 'containerd/real/50']);
  assert.deepEqual(c.workers, [0, 1, 2, 4]);
  assert.deepEqual(c.podCounts, [50, 100, 200, 1000, 5000]);
});

test('full profile covers 100…5000 pods on both sim profiles and 60 s steady state', () => {
  const c = parseBenchArgs(['--profile', 'full', '--no-real'], NOW);
  assert.deepEqual(c.podCounts, [100, 500, 1000, 2000, 5000]);
  assert.equal(c.sessions.length, 2 * 5 * 4);
  assert.deepEqual(parseBenchArgs(['--profile', 'full'], NOW).sessions.filter((s) => s.runtime === 'containerd').map((s) => `${s.pods}/${s.workers}`), ['50/0', '50/2', '100/0', '100/2']);
  assert.equal(c.steadySeconds, 60);
  assert.equal(c.real, false);
});

test('flags override single dimensions', () => {
  const c = parseBenchArgs(['--workers', '0,2', '--pods', '10', '--sim-profiles', 'zero', '--no-real', '--out', '/tmp/x', '--steady-seconds', '1'], NOW);
  assert.deepEqual(c.sessions.map((s) => `${s.profile}/${s.pods}/${s.workers}/${s.steady}/${s.churn}`), ['zero/10/0/true/true', 'zero/10/2/true/true']);
  assert.equal(c.outDir, '/tmp/x');
  assert.equal(c.steadySeconds, 1);
});

test('bad flags are rejected naming the flag', () => {
  assert.throws(() => parseBenchArgs(['--profile', 'huge'], NOW), (e: unknown) => e instanceof BenchConfigError && /--profile/.test(e.message));
  assert.throws(() => parseBenchArgs(['--workers', 'two'], NOW), /--workers/);
  assert.throws(() => parseBenchArgs(['--sim-profiles', 'fast'], NOW), /--sim-profiles/);
  assert.throws(() => parseBenchArgs(['--churn-rate', '0'], NOW), /--churn-rate/);
  assert.throws(() => parseBenchArgs(['--pods', '0'], NOW), /--pods/);
});

test('progress line rendering', () => {
  assert.equal(render({ step: 2, steps: 10, label: 'sim/zero w=2', phase: 'burst', done: 50, total: 100, elapsedS: 12.4 }, 10), '[2/10] sim/zero w=2 | burst [#####.....] 50/100 | 12s');
  assert.equal(render({ step: 1, steps: 1, label: 'x', phase: 'starting', done: 0, total: 0, elapsedS: 0 }, 4), '[1/1] x | starting [....] 0/0 | 0s');
});

test('--agent-arg and --agent-node-arg: flags only, repeatable, anything else refused naming the option', () => {
  const c = parseBenchArgs(['--agent-arg=--lazy-jit=false', '--agent-node-arg=--max-semi-space-size=4', '--agent-node-arg=--no-opt'], NOW);
  assert.deepEqual(c.agentArgs, ['--lazy-jit=false']);
  assert.deepEqual(c.agentNodeArgs, ['--max-semi-space-size=4', '--no-opt']);
  assert.deepEqual(parseBenchArgs([], NOW).agentNodeArgs, []);
  assert.throws(() => parseBenchArgs(['--agent-node-arg=--require=/tmp/x.js'], NOW), (e: unknown) => e instanceof BenchConfigError && /--agent-node-arg/.test(e.message));
  assert.throws(() => parseBenchArgs(['--agent-node-arg', 'script.js'], NOW), (e: unknown) => e instanceof BenchConfigError && /--agent-node-arg/.test(e.message));
});

test('--containers-per-pod shapes every pod of the flag-built sim matrix; bad values are refused naming the flag', () => {
  const c = parseBenchArgs(['--no-real', '--no-cluster', '--sim-profiles', 'zero', '--pods', '200', '--workers', '2', '--containers-per-pod', '12'], NOW);
  assert.deepEqual(c.sessions.map((s) => `${s.pods}x${s.containersPerPod ?? 1}/${s.workers}`), ['200x12/2']);
  assert.deepEqual(c.ceilings, [{ runtime: 'sim', profile: 'zero', pods: 200, containersPerPod: 12 }]);
  assert.throws(() => parseBenchArgs(['--containers-per-pod', '0'], NOW), /--containers-per-pod must be an integer from 1 to 100/);
  assert.throws(() => parseBenchArgs(['--containers-per-pod', '1.5'], NOW), /--containers-per-pod/);
});
