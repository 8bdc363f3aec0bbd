/**
 * The security-context scenario (security-context-scenario.ts) on the simulated runtime, as a
 * separate process: the same manifests and the same in-container assertions as on containerd.
 */
import { after, before, test } from 'node:test';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { runSecurityContextScenario } from './security-context-scenario.js';

let sim: SimRuntimeInstance;

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
});

after(async () => {
  await sim?.stop();
});

test('security context on the simulated runtime: id, /proc/self/status, read-only root, sysctls, refusals', { timeout: 180_000 }, async () => {
  await runSecurityContextScenario({ endpoint: sim.endpoint });
});
