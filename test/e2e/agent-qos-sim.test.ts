/**
 * The QoS scenario (qos-scenario.ts) on the simulated runtime as a separate process: the same
 * cgroup paths, verbose cgroupsPath and oom_score_adj assertions as on containerd; the host's
 * cgroups are not touched (names only, node-cgroups.ts).
 */
import { after, before, test } from 'node:test';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { cgroupRootForSocket } from '../harness/test-cgroups.js';
import { runQosScenario } from './qos-scenario.js';

let sim: SimRuntimeInstance | undefined;

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
});

after(async () => {
  await sim?.stop();
});

test('QoS classes, pod cgroup paths, cgroupParent and oom_score_adj on the simulated runtime', { timeout: 180_000 }, async () => {
  await runQosScenario({ endpoint: sim!.endpoint, hostCgroups: false, effectiveOOMScoreAdj: (v) => v, cgroupRoot: cgroupRootForSocket(sim!.socketPath) });
});

test('the same with --cgroup-driver=systemd: slice names in cgroupParent, /proc/self/cgroup and the verbose status', { timeout: 180_000 }, async () => {
  await runQosScenario({ endpoint: sim!.endpoint, hostCgroups: false, effectiveOOMScoreAdj: (v) => v, cgroupRoot: '/shardlet_e2e.slice', driver: 'systemd' });
});
