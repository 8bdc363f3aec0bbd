/**
 * --shutdown-grace-period and --shutdown-grace-period-critical-pods (and their config-file
 * fields) through the agent's one parser: default 0 (off), flags over the file, and the
 * kubelet's validation messages naming the flag.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentConfig, type AgentConfig } from '../../../src/main/agent/agent-config.js';

function parse(argv: string[], file?: string): AgentConfig {
  const c = parseAgentConfig(['--pod-manifest-path', '/m', ...argv, ...(file !== undefined ? ['--config', '/cfg.yaml'] : [])], () => file ?? '');
  assert.notEqual(c, 'help');
  return c as AgentConfig;
}

test('defaults 0 (graceful shutdown off); flags and config-file fields', () => {
  const d = parse([]);
  assert.equal(d.shutdownGracePeriodMs, 0);
  assert.equal(d.shutdownGracePeriodCriticalPodsMs, 0);
  const f = parse(['--shutdown-grace-period', '30s', '--shutdown-grace-period-critical-pods', '10s']);
  assert.equal(f.shutdownGracePeriodMs, 30_000);
  assert.equal(f.shutdownGracePeriodCriticalPodsMs, 10_000);
  const file = parse(['--shutdown-grace-period-critical-pods', '5s'], 'shutdownGracePeriod: 1m\nshutdownGracePeriodCriticalPods: 20s\n');
  assert.equal(file.shutdownGracePeriodMs, 60_000);
  assert.equal(file.shutdownGracePeriodCriticalPodsMs, 5_000, 'the flag wins');
  assert.deepEqual(d.shutdownSignalSources, ['logind', 'SIGUSR1']);
  assert.deepEqual(parse(['--shutdown-signal-sources', 'SIGUSR1']).shutdownSignalSources, ['SIGUSR1']);
});

test('the kubelet\'s validation, naming the flag', () => {
  assert.throws(() => parse(['--shutdown-grace-period', '10s', '--shutdown-grace-period-critical-pods', '20s']),
    /^ConfigError: --shutdown-grace-period-critical-pods: invalid configuration: shutdownGracePeriodCriticalPods 20s must be <= shutdownGracePeriod 10s$/);
  assert.throws(() => parse(['--shutdown-grace-period-critical-pods', '1s']), /--shutdown-grace-period-critical-pods: invalid configuration: shutdownGracePeriodCriticalPods 1s must be <= shutdownGracePeriod 0s/);
  assert.throws(() => parse(['--shutdown-grace-period', '500ms']), /--shutdown-grace-period: invalid configuration: shutdownGracePeriod 500ms must be either zero or otherwise >= 1 sec/);
  assert.throws(() => parse(['--shutdown-grace-period', '10s', '--shutdown-grace-period-critical-pods', '10ms']), /--shutdown-grace-period-critical-pods: invalid configuration: shutdownGracePeriodCriticalPods 10ms must be either zero or otherwise >= 1 sec/);
  assert.throws(() => parse(['--shutdown-grace-period', '25h']), /--shutdown-grace-period: must be at most 24h, got 25h0m0s/);
  assert.throws(() => parse(['--shutdown-grace-period', 'soon']), /--shutdown-grace-period: must be a duration/);
  assert.throws(() => parse(['--shutdown-signal-sources', 'logind,acpi']), /--shutdown-signal-sources: unknown source "acpi"; valid: logind, SIGUSR1/);
  assert.throws(() => parse([], 'shutdownGracePeriod: 1e400s\n'), /shutdownGracePeriod|--shutdown-grace-period/);
});
