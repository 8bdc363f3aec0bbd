/**
 * The bench machinery end to end, against the real sim-runtime and a stand-in agent
 * (fake-agent.ts): a clean run passes and yields figures; an agent that duplicates or leaks a
 * pod makes the session fail with the pod named.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { realClock } from '../../src/shared/clock/clock.js';
import { parseBenchArgs } from '../../bench/bench-config.js';
import { BENCH_IMAGE } from '../../bench/pod-manifests.js';
import { startSimRuntime } from '../../bench/processes.js';
import { runSession, type SessionOutcome } from '../../bench/session.js';

const FAKE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fake-agent.js');

async function session(bug: string, steadyAndChurn: boolean): Promise<SessionOutcome> {
  const out = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-test-out-'));
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-test-sim-'));
  const socket = path.join(dir, 'cri.sock');
  const sim = await startSimRuntime({ clock: realClock, socket, profile: 'zero', images: [BENCH_IMAGE] });
  process.env['FAKE_AGENT_BUG'] = bug;
  try {
    const cfg = parseBenchArgs(['--no-real', '--pods', '12', '--workers', '0', '--out', out, '--agent-script', FAKE, '--steady-seconds', '0.5', '--churn-seconds', '0.5', '--churn-rate', '10', '--removal-timeout', '2', '--stall-timeout', '2'], new Date());
    const plan = cfg.sessions[0];
    assert.ok(plan);
    return await runSession({ clock: realClock, cfg, plan, endpoint: `unix://${socket}`, runtimePid: sim.pid, steady: steadyAndChurn, churnPodsPerSec: steadyAndChurn ? 10 : null, onProgress: () => undefined });
  } finally {
    delete process.env['FAKE_AGENT_BUG'];
    await sim.stop();
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(out, { recursive: true, force: true });
  }
}

test('a correct agent: burst, steady, churn and mass delete all measured, no failures', async () => {
  const o = await session('', true);
  assert.deepEqual(o.failures, []);
  assert.deepEqual(o.results.map((r) => r.workload), ['burst', 'steady', 'churn', 'mass-delete']);
  const [b, s, c, d] = o.results;
  assert.equal(b?.pods, 12);
  assert.equal(b?.startupSource, 'agent-log');
  assert.equal(b?.startupMs?.count, 12);
  assert.ok((b?.podsPerSec ?? 0) > 0);
  assert.ok((b?.rssMiB ?? 0) > 10, 'agent RSS read from /proc');
  assert.ok(b?.eventLoopDelayMs?.p99 !== undefined);
  assert.equal(s?.podCount, 12);
  assert.ok((s?.durationS ?? 0) >= 0.5);
  assert.equal(c?.pods, 5, '10 pods/s for 0.5 s');
  assert.equal(c?.startupMs?.count, 5);
  assert.equal(d?.pods, 12);
  assert.ok((d?.podsPerSec ?? 0) > 0);
});

test('an agent that duplicates a sandbox fails the run naming the pod', async () => {
  const o = await session('duplicate', false);
  assert.ok(o.failures.some((f) => /bench-00001 .* is duplicated in the runtime: 2 sandboxes/.test(f)), o.failures.join('\n'));
});

test('an agent that never tears pods down fails the mass delete', async () => {
  const o = await session('leak', false);
  assert.ok(o.failures.some((f) => /mass delete of 12: (timed out|stalled)/.test(f)), o.failures.join('\n'));
  assert.ok(o.failures.some((f) => /deleted pod bench-\d+ .* is still in the runtime \(running/.test(f)), o.failures.join('\n'));
});

test('an agent without "pod running" lines is measured by polling /pods, and says so', async () => {
  const o = await session('nolog', false);
  assert.deepEqual(o.failures, []);
  const b = o.results[0];
  assert.equal(b?.startupSource, 'pods-poll');
  assert.equal(b?.startupMs?.count, 12);
});
