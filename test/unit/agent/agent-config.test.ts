import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentConfig, AGENT_DEFAULTS, type AgentConfig } from '../../../src/main/agent/agent-config.js';
import { parseDurationMs } from '../../../src/shared/clock/go-duration.js';

const files: Record<string, string> = {
  '/etc/shardlet.yaml': 'kind: KubeletConfiguration\nstaticPodPath: /etc/manifests\nmaxPods: 300\nsyncFrequency: 30s\nworkers: 2\n',
  '/bad.yaml': 'maxPods: lots\n',
  '/unknown.yaml': 'maxPodz: 3\n',
};
const read = (p: string): string => {
  const f = files[p];
  if (f === undefined) throw new Error(`ENOENT: ${p}`);
  return f;
};

test('durations parse like Go', () => {
  assert.equal(parseDurationMs('20s'), 20_000);
  assert.equal(parseDurationMs('1m30s'), 90_000);
  assert.equal(parseDurationMs('500ms'), 500);
  assert.equal(parseDurationMs('0'), 0);
  assert.equal(parseDurationMs('20'), undefined);
  assert.equal(parseDurationMs('1x'), undefined);
});

test('flags take precedence over the config file, which overrides defaults', () => {
  const c = parseAgentConfig(['--config', '/etc/shardlet.yaml', '--max-pods', '500', '--node-name', 'Node-A'], read) as AgentConfig;
  assert.equal(c.podManifestPath, '/etc/manifests');
  assert.equal(c.maxPods, 500, 'flag wins');
  assert.equal(c.syncFrequencyMs, 30_000, 'file wins over default');
  assert.equal(c.workers, 2);
  assert.equal(c.nodeName, 'node-a');
  assert.equal(c.port, AGENT_DEFAULTS.port);
});

test('bad inputs name the flag or field', () => {
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--max-pods', 'ten'], read), /--max-pods: must be a non-negative integer/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--sync-frequency', '10'], read), /--sync-frequency: must be a duration/);
  assert.throws(() => parseAgentConfig(['--config', '/bad.yaml', '--pod-manifest-path', '/x'], read), /\/bad.yaml: maxPods: must be a non-negative integer/);
  assert.throws(() => parseAgentConfig(['--config', '/unknown.yaml', '--pod-manifest-path', '/x'], read), /unknown field "maxPodz"/);
  assert.throws(() => parseAgentConfig(['--config', '/missing.yaml'], read), /--config \/missing.yaml: ENOENT/);
  assert.throws(() => parseAgentConfig([], read), /no pod source/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--bogus', '1'], read), /Unknown option '--bogus'/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--container-runtime-endpoint', 'tcp://x'], read), /--container-runtime-endpoint/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--node-allocatable', 'gpu=1'], read), /unknown resource "gpu"/);
  assert.equal(parseAgentConfig(['--help'], read), 'help');
});

test('kubelet API flags: --port is the secure port (10250), --read-only-port the HTTP one (10255); Go-style bool flags; byte quantities', () => {
  const d = parseAgentConfig(['--pod-manifest-path', '/x'], read) as AgentConfig;
  assert.equal(d.port, 10250);
  assert.equal(d.readOnlyPort, 10255);
  assert.equal(d.anonymousAuth, false);
  assert.equal(d.authorizationMode, 'AlwaysAllow');
  assert.equal(d.containerLogMaxSize, 10 * 1024 * 1024);
  assert.equal(d.containerLogMaxFiles, 5);
  const c = parseAgentConfig(['--pod-manifest-path', '/x', '--kubeconfig', '/kc', '--port', '0', '--read-only-port', '12345', '--anonymous-auth=true', '--authentication-token-webhook', '--authorization-mode', 'Webhook', '--container-log-max-size', '100Ki', '--container-log-max-files', '3'], read) as AgentConfig;
  assert.equal(c.port, 0);
  assert.equal(c.readOnlyPort, 12345);
  assert.equal(c.anonymousAuth, true);
  assert.equal(c.authenticationTokenWebhook, true);
  assert.equal(c.authorizationMode, 'Webhook');
  assert.equal(c.containerLogMaxSize, 100 * 1024);
  assert.equal(c.containerLogMaxFiles, 3);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--anonymous-auth=maybe'], read), /--anonymous-auth: must be true or false/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--authorization-mode', 'Webhook'], read), /Webhook needs --kubeconfig/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--authorization-mode', 'RBAC'], read), /must be AlwaysAllow or Webhook/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--tls-cert-file', '/c'], read), /must be given together/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--container-log-max-size', 'lots'], read), /--container-log-max-size: must be a byte quantity/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--container-log-max-files', '1'], read), /at least 2/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--port', '10255'], read), /must differ from --read-only-port/);
});

test('--optimize-for-size and --heap-growing-percent: off by default, set by flag or config file, bounded', () => {
  const files: Record<string, string> = { '/size.yaml': 'staticPodPath: /m\noptimizeForSize: true\n', '/empty.yaml': '' };
  const r = (p: string): string => {
    const t = files[p];
    if (t === undefined) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
    return t;
  };
  assert.equal((parseAgentConfig(['--pod-manifest-path', '/x'], r) as AgentConfig).optimizeForSize, false);
  assert.equal((parseAgentConfig(['--pod-manifest-path', '/x', '--optimize-for-size'], r) as AgentConfig).optimizeForSize, true);
  assert.equal((parseAgentConfig(['--config', '/size.yaml'], r) as AgentConfig).optimizeForSize, true);
  assert.equal((parseAgentConfig(['--pod-manifest-path', '/x'], r) as AgentConfig).heapGrowingPercent, 0);
  assert.equal((parseAgentConfig(['--pod-manifest-path', '/x', '--heap-growing-percent', '30'], r) as AgentConfig).heapGrowingPercent, 30);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--heap-growing-percent', '5000'], r), /--heap-growing-percent: must be in \[0, 1000\]/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--heap-growing-percent', '-1'], r), /--heap-growing-percent/);
  // An empty config file is refused as before (js-yaml now parses it, not client-node's loadYaml).
  assert.throws(() => parseAgentConfig(['--config', '/empty.yaml', '--pod-manifest-path', '/x'], r), /--config \/empty.yaml: Failed to load YAML/);
});
