/**
 * The GC flags and config-file fields through the agent's one parser: defaults, flags over the
 * file, negative counts, and the kubelet's validation of the image thresholds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentConfig, type AgentConfig } from '../../../src/main/agent/agent-config.js';
import { ConfigError } from '../../../src/shared/manifest/config-errors.js';

const BASE = ['--pod-manifest-path', '/tmp/manifests'];

function parse(argv: string[], file?: string): AgentConfig {
  const c = parseAgentConfig([...BASE, ...argv, ...(file !== undefined ? ['--config', '/cfg.yaml'] : [])], () => file ?? '');
  assert.notEqual(c, 'help');
  return c as AgentConfig;
}

test('defaults are the kubelet\'s', () => {
  const c = parse([]);
  assert.equal(c.minimumContainerTTLMs, 0);
  assert.equal(c.maxDeadContainersPerContainer, 1);
  assert.equal(c.maxDeadContainers, -1);
  assert.equal(c.imageGCHighThresholdPercent, 85);
  assert.equal(c.imageGCLowThresholdPercent, 80);
  assert.equal(c.imageMinimumGCAgeMs, 120_000);
  assert.equal(c.podInfraContainerImage, 'registry.k8s.io/pause:3.9');
});

test('flags, negative counts, and config-file fields (flags win)', () => {
  const c = parse(['--minimum-container-ttl-duration', '30s', '--maximum-dead-containers-per-container=-1', '--maximum-dead-containers', '100', '--image-gc-high-threshold', '90', '--image-gc-low-threshold', '50', '--minimum-image-ttl-duration', '5m', '--pod-infra-container-image', 'docker.io/local/pause:1']);
  assert.equal(c.minimumContainerTTLMs, 30_000);
  assert.equal(c.maxDeadContainersPerContainer, -1);
  assert.equal(c.maxDeadContainers, 100);
  assert.equal(c.imageGCHighThresholdPercent, 90);
  assert.equal(c.imageGCLowThresholdPercent, 50);
  assert.equal(c.imageMinimumGCAgeMs, 300_000);
  assert.equal(c.podInfraContainerImage, 'docker.io/local/pause:1');
  const f = parse(['--image-gc-low-threshold', '10'], 'imageGCHighThresholdPercent: 70\nimageGCLowThresholdPercent: 60\nimageMinimumGCAge: 1m\nmaximumDeadContainers: -1\nmaximumDeadContainersPerContainer: 3\nminimumContainerTTLDuration: 1m\n');
  assert.equal(f.imageGCHighThresholdPercent, 70);
  assert.equal(f.imageGCLowThresholdPercent, 10);
  assert.equal(f.imageMinimumGCAgeMs, 60_000);
  assert.equal(f.maxDeadContainers, -1);
  assert.equal(f.maxDeadContainersPerContainer, 3);
  assert.equal(f.minimumContainerTTLMs, 60_000);
});

test('bad values are refused naming the flag, with the kubelet\'s messages for the thresholds', () => {
  const bad = (argv: string[], re: RegExp): void => assert.throws(() => parse(argv), (e: unknown) => e instanceof ConfigError && re.test(e.message));
  bad(['--image-gc-high-threshold', '101'], /^--image-gc-high-threshold: imageGCHighThresholdPercent \(--image-gc-high-threshold\) must be between 0 and 100, inclusive/);
  bad(['--image-gc-low-threshold', '85'], /^--image-gc-low-threshold: imageGCLowThresholdPercent \(--image-gc-low-threshold\) \(85\) must be less than imageGCHighThresholdPercent/);
  bad(['--image-gc-high-threshold=-5'], /^--image-gc-high-threshold: must be a non-negative integer/);
  bad(['--maximum-dead-containers', 'lots'], /^--maximum-dead-containers: must be an integer/);
  bad(['--maximum-dead-containers=99999999999'], /^--maximum-dead-containers: must be a 32-bit integer/);
  bad(['--minimum-image-ttl-duration', 'soon'], /^--minimum-image-ttl-duration: must be a duration/);
});

test('the workers prune app containers at restart only while that removes no more than the GC would', async () => {
  const { pruneMatchesGcPolicy } = await import('../../../src/main/agent/agent-dispatch.js');
  assert.equal(pruneMatchesGcPolicy(parse([])), true);
  assert.equal(pruneMatchesGcPolicy(parse(['--maximum-dead-containers-per-container', '0'])), true);
  assert.equal(pruneMatchesGcPolicy(parse(['--maximum-dead-containers-per-container', '2'])), false);
  assert.equal(pruneMatchesGcPolicy(parse(['--maximum-dead-containers-per-container=-1'])), false);
  assert.equal(pruneMatchesGcPolicy(parse(['--minimum-container-ttl-duration', '1m'])), false);
});
