/** --max-parallel-pod-starts-per-thread reaches each thread's PodWorkers (flag → config → thread config → deps). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentConfig, type AgentConfig } from '../../../src/main/agent/agent-config.js';
import { podWorkerThreadConfig } from '../../../src/main/agent/agent-dispatch.js';
import { emptyNodeDnsSettings } from '../../../src/shared/protocol/node-dns-settings.js';
import { podStartBound } from '../../../workers/pod-worker-factory.js';

function threadDeps(argv: string[]) {
  const c = parseAgentConfig(['--pod-manifest-path', '/m', ...argv], () => '') as AgentConfig;
  const cfg = podWorkerThreadConfig({ config: c, endpoint: 'unix:///x', runtimeName: 'containerd', cacheBuffer: new SharedArrayBuffer(8), metricsBuffer: new SharedArrayBuffer(8), recordEvents: false, dns: emptyNodeDnsSettings() });
  return podStartBound(cfg);
}

test('the flag reaches the pod workers; default 8; 0 means no bound', () => {
  assert.deepEqual(threadDeps([]), { maxParallelStarts: 8 });
  assert.deepEqual(threadDeps(['--max-parallel-pod-starts-per-thread', '3']), { maxParallelStarts: 3 });
  assert.deepEqual(threadDeps(['--max-parallel-pod-starts-per-thread=0']), { maxParallelStarts: 0 });
});

test('a bad value is refused naming the flag', () => {
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/m', '--max-parallel-pod-starts-per-thread', '-1'], () => ''), /max-parallel-pod-starts-per-thread/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/m', '--max-parallel-pod-starts-per-thread', '10001'], () => ''), /max-parallel-pod-starts-per-thread/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/m', '--max-parallel-pod-starts-per-thread', 'x'], () => ''), /max-parallel-pod-starts-per-thread/);
});
