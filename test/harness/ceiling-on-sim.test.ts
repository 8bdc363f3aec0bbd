/**
 * bench/ceiling.ts end to end against the simulated runtime (zero-latency profile): every pod is
 * created and torn down, the figures are coherent, and the runtime is left empty. Speed is not
 * asserted here (that is what the benchmark reports).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCeiling } from '../../bench/ceiling.js';
import { parseCeilingArgs } from '../../bench/ceiling-cli.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { startSimRuntime, type SimRuntimeInstance } from './sim-runtime-harness.js';

describe('bench/ceiling on the sim runtime', () => {
  let sim: SimRuntimeInstance | undefined;
  before(async () => {
    sim = await startSimRuntime({ profile: 'zero' });
  });
  after(async () => {
    await sim?.stop();
  });

  it('creates and tears down every pod and leaves the runtime empty', async () => {
    assert.ok(sim);
    const r = await runCeiling({ endpoint: sim.endpoint, pods: 12, concurrency: 4 });
    assert.equal(r.errors, 0, r.firstError);
    assert.equal(r.pods, 12);
    assert.equal(r.runtimeName, (await versionOf(sim.endpoint)).runtimeName);
    assert.ok(r.podsPerSec > 0 && Number.isFinite(r.podsPerSec));
    assert.ok(r.teardownPodsPerSec > 0 && Number.isFinite(r.teardownPodsPerSec));
    assert.ok(r.p50Ms > 0 && r.p50Ms <= r.p99Ms && r.p99Ms <= r.maxMs);
    assert.ok(r.teardownP50Ms <= r.teardownP99Ms);
    assert.ok(r.clientCpuMsPerPod > 0);
    const rt = new CriClient({ endpoint: sim.endpoint });
    try {
      assert.deepEqual(await rt.listPodSandbox(), []);
      assert.deepEqual(await rt.listContainers(), []);
    } finally {
      rt.close();
    }
  });

  it('CLI flags: exactly one of --endpoint/--runtime, positive integers, --profile only with sim', () => {
    assert.deepEqual(parseCeilingArgs(['--endpoint', 'unix:///x.sock', '--pods', '3', '--concurrency', '2', '--json', '--host-network']), {
      endpoint: 'unix:///x.sock',
      pods: 3,
      concurrency: 2,
      image: 'docker.io/local/busybox:1',
      hostNetwork: true,
      json: true,
    });
    assert.equal(parseCeilingArgs(['--runtime', 'sim', '--profile', 'zero']).profile, 'zero');
    for (const bad of [[], ['--endpoint', 'e', '--runtime', 'sim'], ['--runtime', 'cri-o'], ['--endpoint', 'e', '--pods', '0'], ['--endpoint', 'e', '--concurrency', '1.5'], ['--runtime', 'containerd', '--profile', 'zero']]) {
      assert.throws(() => parseCeilingArgs(bad), { code: 'ERR_CEILING_USAGE' }, JSON.stringify(bad));
    }
  });
});

async function versionOf(endpoint: string): Promise<{ runtimeName: string }> {
  const rt = new CriClient({ endpoint });
  try {
    return await rt.version();
  } finally {
    rt.close();
  }
}
