import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentConfig, type AgentConfig } from '../../../src/main/agent/agent-config.js';
import { ConfigError } from '../../../src/shared/manifest/config-errors.js';

const BASE = ['--pod-manifest-path', '/m'];
const files: Record<string, string> = {
  '/c.yaml': 'cgroupsPerQOS: false\ncgroupDriver: systemd\ncgroupRoot: /shardlet.slice\nenforceNodeAllocatable: []\n',
  '/list.yaml': 'enforceNodeAllocatable: [pods]\ncgroupRoot: /x\n',
};
const read = (p: string): string => files[p] ?? (() => { throw new Error(`ENOENT: ${p}`); })();
const parse = (...args: string[]): AgentConfig => parseAgentConfig([...BASE, ...args], read) as AgentConfig;
const bad = (re: RegExp, ...args: string[]): void => assert.throws(() => parse(...args), (e: unknown) => e instanceof ConfigError && re.test(e.message), args.join(' '));

test('QoS cgroup flags: the kubelet defaults', () => {
  const c = parse();
  assert.equal(c.cgroupsPerQOS, true);
  assert.equal(c.cgroupDriver, 'cgroupfs');
  assert.equal(c.cgroupRoot, '/');
  assert.deepEqual(c.enforceNodeAllocatable, ['pods']);
});

test('flags and KubeletConfiguration fields', () => {
  const f = parse('--cgroups-per-qos=false', '--enforce-node-allocatable=', '--cgroup-driver', 'systemd', '--cgroup-root', '/a.slice/a-b.slice');
  assert.equal(f.cgroupsPerQOS, false);
  assert.deepEqual(f.enforceNodeAllocatable, []);
  assert.equal(f.cgroupDriver, 'systemd');
  assert.equal(f.cgroupRoot, '/a.slice/a-b.slice');
  assert.deepEqual(parse('--cgroups-per-qos=false', '--enforce-node-allocatable', 'none').enforceNodeAllocatable, []);
  const y = parse('--config', '/c.yaml');
  assert.equal(y.cgroupsPerQOS, false);
  assert.equal(y.cgroupDriver, 'systemd');
  assert.equal(y.cgroupRoot, '/shardlet.slice');
  assert.deepEqual(parse('--config', '/list.yaml').enforceNodeAllocatable, ['pods']);
});

test('bad values name the flag', () => {
  bad(/--cgroup-driver: must be cgroupfs or systemd/, '--cgroup-driver', 'docker');
  bad(/--cgroup-root: must be an absolute path/, '--cgroup-root', 'kube');
  bad(/--cgroup-root: .*invalid cgroup name component "\.\."/, '--cgroup-root', '/a/../b');
  bad(/--cgroup-root: with --cgroup-driver=systemd/, '--cgroup-driver', 'systemd', '--cgroup-root', '/shardlet');
  bad(/--enforce-node-allocatable: "system-reserved" is not supported by shardlet/, '--enforce-node-allocatable', 'pods,system-reserved');
  bad(/--enforce-node-allocatable: invalid option "pod"/, '--enforce-node-allocatable', 'pod');
  bad(/may not contain additional enforcements when "none"/, '--enforce-node-allocatable', 'none,pods');
  bad(/--enforce-node-allocatable: is not supported unless --cgroups-per-qos is turned on.*--enforce-node-allocatable=none/, '--cgroups-per-qos=false');
  bad(/--cgroups-per-qos: must be true or false/, '--cgroups-per-qos=maybe');
});
