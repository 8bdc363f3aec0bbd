/** The kubelet side-by-side and probe-density flags (bench-config.ts), and their tables. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BenchConfigError, parseBenchArgs } from '../../../bench/bench-config.js';
import { probeDensityTable, probePodManifest, type ProbeDensityRound } from '../../../bench/probe-density.js';
import { sideBySideTable } from '../../../bench/report-side-by-side.js';
import type { SideBySideResult } from '../../../bench/side-by-side.js';

const NOW = new Date('2025-02-03T04:05:06.789Z');

test('defaults: kubelet beside shardlet at 50 pods on containerd and 200 on the sim, 2 rounds; 1,000 probe pods', () => {
  const c = parseBenchArgs([], NOW);
  assert.deepEqual(c.kubelet, { pods: 50, simPods: 200, simProfile: 'zero', rounds: 2, workers: 2 });
  assert.deepEqual(c.probes, { pods: 1000, periodS: 10, windowS: 40 });
});

test('flags: sizes, rounds, opt-outs; --no-real does not touch the kubelet section', () => {
  const c = parseBenchArgs(['--kubelet-pods', '200', '--kubelet-sim-pods', '1000', '--kubelet-sim-profile', 'containerd', '--kubelet-rounds', '3', '--probe-pods', '500', '--probe-window', '60'], NOW);
  assert.deepEqual(c.kubelet, { pods: 200, simPods: 1000, simProfile: 'containerd', rounds: 3, workers: 2 });
  assert.deepEqual(c.probes, { pods: 500, periodS: 10, windowS: 60 });
  assert.equal(parseBenchArgs(['--no-kubelet', '--probe-pods', '0'], NOW).kubelet, undefined);
  assert.equal(parseBenchArgs(['--probe-pods', '0'], NOW).probes, undefined);
  assert.equal(parseBenchArgs(['--no-real'], NOW).kubelet?.pods, 50, '--no-real is the shardlet-only containerd section');
  for (const bad of [['--kubelet-pods=-1'], ['--kubelet-rounds', '0'], ['--kubelet-sim-profile', 'x'], ['--probe-pods', '1.5'], ['--probe-period', '0']]) {
    assert.throws(() => parseBenchArgs(bad, NOW), BenchConfigError, bad.join(' '));
  }
});

test('probe pods carry an exec readiness and a loopback HTTP liveness probe naming the pod', () => {
  const m = probePodManifest('bench-00001', 'u1', 'kubelet-bench-00001', 4242, 10) as { spec: { containers: Array<Record<string, unknown>> } };
  const c = m.spec.containers[0] as Record<string, Record<string, unknown>>;
  assert.deepEqual(c['readinessProbe'], { exec: { command: ['echo', 'kubelet-bench-00001'] }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 });
  assert.deepEqual(c['livenessProbe'], { httpGet: { host: '127.0.0.1', port: 4242, path: '/probe/kubelet-bench-00001' }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 });
});

test('tables: one row per round, a dash for what was not measured', () => {
  const sbs: SideBySideResult = {
    runtime: 'containerd',
    profile: 'real',
    pods: 50,
    shardletWorkers: 2,
    kubeletVersion: 'v1.20.2',
    ceilingBefore: null,
    ceilingAfter: null,
    rounds: [{ agent: 'kubelet', round: 1, pods: 50, running: 50, podsPerSec: 5.5, firstRunningS: 3.25, startMs: null, cpuMsPerPod: 20, rssIdleMiB: 60, rssAtNMiB: 90, steadyCpuPct: 11.5 }],
  };
  const t = sideBySideTable(sbs);
  assert.match(t, /\| 1 \| kubelet \| 5\.50 \| 3\.25 \| – \/ – \| 20\.0 \| 60 \/ 90 \| 11\.5 \|/);
  assert.match(t, /before – pods\/s/);
  const stats = { probes: 10, pods: 5, silentPods: 0, latenessMs: null, missed: 1, doubled: 0 };
  const r: ProbeDensityRound = { agent: 'shardlet', pods: 5, periodS: 10, windowS: 20, exec: stats, http: stats, agentCpuPct: 3, runtimeCpuPct: 2, rssMiB: 100 };
  assert.match(probeDensityTable([r]), /\| shardlet \| – \/ – \/ – \| 1 \/ 0 \(10 probes\) \|/);
  assert.equal(probeDensityTable([]), '(probe density: no round measured)');
});
