import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { AGENT_DEFAULTS } from '../../../src/main/agent/agent-config.js';
import { defaultWorkerThreads } from '../../../src/main/agent/worker-threads-policy.js';

test('default pod-worker threads: inline on 1-2 cores (measured fastest there), else min(cores, 4)', () => {
  assert.deepEqual([1, 2, 3, 4, 8, 64].map(defaultWorkerThreads), [0, 0, 3, 4, 4, 4]);
  assert.equal(defaultWorkerThreads(Number.NaN), 0);
  assert.equal(defaultWorkerThreads(2.5), 2, 'a fractional count is floored above the inline limit');
});

test('the agent default applies the policy to this machine', () => {
  assert.equal(AGENT_DEFAULTS.workers, defaultWorkerThreads(os.availableParallelism()));
});
