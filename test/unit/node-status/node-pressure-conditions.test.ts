/**
 * The pressure conditions the eviction manager drives (node-conditions.ts): True with the
 * kubelet's reasons and messages while reported, False again after; lastTransitionTime moves only
 * on a status change.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeConditions } from '../../../src/main/node-status/node-conditions.js';

test('MemoryPressure / DiskPressure / PIDPressure follow the eviction manager, with the kubelet\'s reasons', () => {
  const t0 = Date.parse('2026-11-27T00:00:00Z');
  const calm = nodeConditions(undefined, { runtimeErrors: [], networkErrors: [] }, t0);
  const pressed = nodeConditions(calm, { runtimeErrors: [], networkErrors: [], pressure: ['MemoryPressure', 'DiskPressure', 'PIDPressure'] }, t0 + 10_000);
  const by = (cs: typeof pressed, type: string) => cs.find((c) => c.type === type)!;
  assert.deepEqual([by(pressed, 'MemoryPressure').status, by(pressed, 'MemoryPressure').reason, by(pressed, 'MemoryPressure').message], ['True', 'KubeletHasInsufficientMemory', 'kubelet has insufficient memory available']);
  assert.deepEqual([by(pressed, 'DiskPressure').status, by(pressed, 'DiskPressure').reason, by(pressed, 'DiskPressure').message], ['True', 'KubeletHasDiskPressure', 'kubelet has disk pressure']);
  assert.deepEqual([by(pressed, 'PIDPressure').status, by(pressed, 'PIDPressure').reason, by(pressed, 'PIDPressure').message], ['True', 'KubeletHasInsufficientPID', 'kubelet has insufficient PID available']);
  assert.equal(by(pressed, 'Ready').status, 'True', 'pressure does not make the node NotReady');
  assert.equal(by(pressed, 'DiskPressure').lastTransitionTime, '2026-11-27T00:00:10Z');
  const still = nodeConditions(pressed, { runtimeErrors: [], networkErrors: [], pressure: ['DiskPressure'] }, t0 + 20_000);
  assert.equal(by(still, 'DiskPressure').lastTransitionTime, '2026-11-27T00:00:10Z');
  assert.deepEqual([by(still, 'MemoryPressure').status, by(still, 'MemoryPressure').reason, by(still, 'MemoryPressure').lastTransitionTime], ['False', 'KubeletHasSufficientMemory', '2026-11-27T00:00:20Z']);
});
