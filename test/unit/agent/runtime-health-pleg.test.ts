/**
 * PLEG health feeds runtime readiness as in the kubelet (runtimeState.addHealthCheck("PLEG")):
 * while the check fails, RuntimeHealth.errors() — what the sync loop backs off on — says so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RuntimeHealth } from '../../../src/main/agent/runtime-health.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { plegHealth } from '../../../src/shared/pleg/pleg-health.js';

test('an unhealthy PLEG is a runtime error; a healthy one is not', async () => {
  const clock = new FakeClock();
  const runtime = {
    status: async () => ({ status: { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }] }, info: {} }),
    version: async () => ({ version: '0.1.0', runtimeName: 'fake', runtimeVersion: '1', runtimeApiVersion: 'v1' }),
  };
  const h = new RuntimeHealth({ runtime: runtime as never, clock, logger: silentLogger });
  let last: number | undefined;
  h.addHealthCheck('PLEG', () => {
    const r = plegHealth(last, clock.monotonic(), 180_000);
    return r.healthy ? undefined : r.reason;
  });
  assert.ok(h.errors().includes('PLEG is not healthy: pleg has yet to be successful'));
  last = clock.monotonic();
  assert.ok(!h.errors().some((e) => e.startsWith('PLEG')));
  clock.step(180_001);
  assert.ok(h.errors().includes('PLEG is not healthy: pleg was last seen active 3m0.001s ago; threshold is 3m0s'));
});
