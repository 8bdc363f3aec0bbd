/** --node-labels (NodeRestriction allow-list) and --register-with-taints parsing, through the agent's config parser. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentConfig } from '../../../src/main/agent/agent-config.js';

const base = ['--pod-manifest-path', '/tmp/x'];

test('node labels: allowed kubernetes.io labels and any other prefix pass; others are refused by name', () => {
  const c = parseAgentConfig([...base, '--node-labels', 'node.kubernetes.io/pool=a,example.com/tier=gold,plain=1,topology.kubernetes.io/zone=z1']);
  assert.ok(c !== 'help');
  assert.deepEqual(c.nodeLabels, { 'node.kubernetes.io/pool': 'a', 'example.com/tier': 'gold', plain: '1', 'topology.kubernetes.io/zone': 'z1' });
  assert.throws(() => parseAgentConfig([...base, '--node-labels', 'node-role.kubernetes.io/master=true,foo.k8s.io/x=y']), /unknown 'kubernetes.io' or 'k8s.io' labels.*foo\.k8s\.io\/x, node-role\.kubernetes\.io\/master/);
  assert.throws(() => parseAgentConfig([...base, '--node-labels', 'bad key=x']), /invalid label key/);
  assert.throws(() => parseAgentConfig([...base, '--node-labels', `k=${'v'.repeat(64)}`]), /invalid value/);
});

test('taints: key[=value]:Effect, validated', () => {
  const c = parseAgentConfig([...base, '--register-with-taints', 'dedicated=dense:NoSchedule,gpu:NoExecute']);
  assert.ok(c !== 'help');
  assert.deepEqual(c.registerWithTaints, [{ key: 'dedicated', value: 'dense', effect: 'NoSchedule' }, { key: 'gpu', effect: 'NoExecute' }]);
  assert.throws(() => parseAgentConfig([...base, '--register-with-taints', 'a=b:Sometimes']), /effect must be/);
  assert.throws(() => parseAgentConfig([...base, '--register-with-taints', 'a=b']), /expected key\[=value\]:effect/);
  assert.throws(() => parseAgentConfig([...base, '--register-with-taints', 'a:NoSchedule,a=x:NoSchedule']), /duplicate taint/);
});

test('cluster node flags: defaults and bounds', () => {
  const c = parseAgentConfig(base);
  assert.ok(c !== 'help');
  assert.equal(c.nodeStatusUpdateFrequencyMs, 10_000);
  assert.equal(c.nodeStatusReportFrequencyMs, 300_000);
  assert.equal(c.nodeLeaseDurationSeconds, 40);
  assert.equal(c.eventRecordQPS, 50);
  assert.equal(c.eventBurst, 100);
  assert.throws(() => parseAgentConfig([...base, '--node-ip', 'not-an-ip']), /--node-ip: must be an IP/);
  assert.throws(() => parseAgentConfig([...base, '--system-reserved', 'gpu=1']), /--system-reserved: unknown resource "gpu"/);
  assert.throws(() => parseAgentConfig([...base, '--node-status-report-frequency', '5s']), /at least --node-status-update-frequency/);
  assert.throws(() => parseAgentConfig([...base, '--kube-reserved', 'memory=lots']), /--kube-reserved: memory: invalid quantity "lots"/);
  assert.throws(() => parseAgentConfig([...base, '--node-allocatable', 'cpu=-1']), /--node-allocatable: cpu: invalid quantity/);
});
