import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { AGENT_DEFAULTS } from '../../../src/main/agent/agent-config.js';
import { defaultWorkerThreads } from '../../../src/main/agent/worker-threads-policy.js';

test('default pod-worker threads: min(cores, 4), never inline', () => {
  assert.deepEqual([1, 2, 3, 4, 8, 64].map(defaultWorkerThreads), [1, 2, 3, 4, 4, 4]);
  assert.equal(defaultWorkerThreads(Number.NaN), 1);
  assert.equal(defaultWorkerThreads(0), 1);
  assert.equal(defaultWorkerThreads(2.5), 2, 'a fractional count is floored');
});

test('the agent default applies the policy to this machine', () => {
  assert.equal(AGENT_DEFAULTS.workers, defaultWorkerThreads(os.availableParallelism()));
});
