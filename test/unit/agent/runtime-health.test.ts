import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RuntimeHealth } from '../../../src/agent/runtime-health.js';
import { FakeClock } from '../../../src/clock/fake-clock.js';
import { CriError } from '../../../src/cri/cri-errors.js';
import type { StatusResponse, VersionResponse } from '../../../src/cri/cri-types.js';
import { silentLogger } from '../../../src/logging/logger.js';

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

test('runtime errors: not ready at once; failed checks only after 30 s without an answer', async () => {
  const clock = new FakeClock();
  let mode: 'ready' | 'notready' | 'fail' = 'ready';
  const runtime = {
    version: async (): Promise<VersionResponse> => ({ version: 'v1', runtimeName: 'x', runtimeVersion: '1', runtimeApiVersion: 'v1' }),
    status: async (): Promise<StatusResponse> => {
      if (mode === 'fail') throw new CriError('ERR_CRI_DEADLINE_EXCEEDED', 'Status', 'Status: deadline exceeded');
      return { status: { conditions: [{ type: 'RuntimeReady', status: mode === 'ready', reason: mode === 'ready' ? '' : 'RuntimeNotReady', message: '' }, { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: '' }] }, info: {} };
    },
  };
  const h = new RuntimeHealth({ runtime, clock, logger: silentLogger });
  assert.match(h.errors()[0]!, /may not have completed yet/, 'not ready before the first check');
  h.start();
  await settle();
  assert.deepEqual(h.errors(), [], 'NetworkReady=false does not block');
  mode = 'notready';
  clock.step(5_000);
  await settle();
  assert.match(h.errors()[0]!, /container runtime not ready: RuntimeNotReady/);
  mode = 'ready';
  clock.step(5_000);
  await settle();
  assert.deepEqual(h.errors(), []);
  mode = 'fail';
  for (let t = 0; t < 25_000; t += 5_000) {
    clock.step(5_000);
    await settle();
    assert.deepEqual(h.errors(), [], `a failed check ${t + 5_000} ms after the last answer is tolerated`);
  }
  clock.step(5_000);
  await settle();
  assert.match(h.errors()[0]!, /container runtime is down: no successful status check for 30s/);
  mode = 'ready';
  clock.step(5_000);
  await settle();
  assert.deepEqual(h.errors(), []);
  h.stop();
});
