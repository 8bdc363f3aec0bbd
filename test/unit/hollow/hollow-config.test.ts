/**
 * `shardlet hollow` flags and config file: defaults, flags over the file, and every bad input
 * refused with an error naming the flag or field (N = 0, N = 10^6, a prefix that makes no Node
 * name, threads over the process bound, a socket path too long, unknown file fields, bad faults).
 * The per-node agent config: what differs per node, and an --agent-config error named.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HOLLOW_DEFAULTS, HollowConfigError, hollowNodeNames, parseHollowConfig, type HollowConfig } from '../../../src/main/hollow/hollow-config.js';
import { hollowAgentConfig } from '../../../src/main/hollow/hollow-agent-config.js';
import { FaultScriptError } from '../../../src/main/hollow/hollow-faults.js';

const files: Record<string, string> = {};
const readFile = (p: string): string => {
  const f = files[p];
  if (f === undefined) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
  return f;
};
const parse = (...argv: string[]): HollowConfig => {
  const c = parseHollowConfig(argv, readFile);
  assert.notEqual(c, 'help');
  return c as HollowConfig;
};
const refused = (argv: string[], re: RegExp, cls: new (...a: never[]) => Error = HollowConfigError): void => {
  assert.throws(() => parseHollowConfig(argv, readFile), (e: unknown) => {
    assert.ok(e instanceof cls, `${String(e)}`);
    assert.match((e as Error).message, re);
    return true;
  });
};

test('defaults and names', () => {
  const c = parse('--kubeconfig', '/k', '--nodes', '3');
  assert.equal(c.nodes, 3);
  assert.equal(c.maxPods, HOLLOW_DEFAULTS.maxPods);
  assert.equal(c.workers, 0);
  assert.deepEqual(hollowNodeNames(c), ['hollow-0', 'hollow-1', 'hollow-2']);
  assert.deepEqual(c.faults, []);
});

test('a config file with the same fields; flags win', () => {
  files['/h.yaml'] = 'kubeconfig: /k\nnodes: 5\nnodeNamePrefix: sim-\nmaxPods: 30\nfaults:\n  - 10s sim-4 lease-stop\n';
  const c = parse('--config', '/h.yaml', '--nodes', '7');
  assert.equal(c.nodes, 7);
  assert.equal(c.maxPods, 30);
  assert.equal(c.nodeNamePrefix, 'sim-');
  assert.deepEqual(c.faults, [{ atMs: 10_000, node: 'sim-4', action: { kind: 'lease-stop' } }]);
  files['/bad.yaml'] = 'kubeconfig: /k\nnodes: 2\nnode: 3\n';
  refused(['--config', '/bad.yaml'], /unknown field "node"/);
});

test('bad input is refused naming the flag', () => {
  refused(['--nodes', '3'], /--kubeconfig: is required/);
  refused(['--kubeconfig', '/k'], /--nodes: is required/);
  refused(['--kubeconfig', '/k', '--nodes', '0'], /--nodes: must be in 1\.\.5000, got 0/);
  refused(['--kubeconfig', '/k', '--nodes', '1000000'], /--nodes: must be in 1\.\.5000, got 1000000/);
  refused(['--kubeconfig', '/k', '--nodes', '2x'], /--nodes: must be an integer/);
  refused(['--kubeconfig', '/k', '--nodes', '3', '--node-name-prefix', 'Hollow_'], /--node-name-prefix: "Hollow_" \+ index must be a DNS-1123 subdomain/);
  refused(['--kubeconfig', '/k', '--nodes', '20', '--workers', '4'], /--workers: 4 threads per node × 20 nodes is over 64/);
  refused(['--kubeconfig', '/k', '--nodes', '2', '--root-dir', '/' + 'd'.repeat(120)], /--root-dir: too long/);
  refused(['--kubeconfig', '/k', '--nodes', '2', '--sim-profile', 'fast'], /--sim-profile: must be zero or containerd/);
  refused(['--kubeconfig', '/k', '--nodes', '2', '--bogus'], /Unknown option '--bogus'/);
  refused(['--kubeconfig', '/k', '--nodes', '2', '--fault', '5s hollow-9 lease-stop'], /--fault line 1: node "hollow-9" is not one of this process's hollow nodes/, FaultScriptError);
});

test('the per-node agent config: own name, dirs and socket; ports and QoS cgroups off; --agent-config errors named', () => {
  const c = parse('--kubeconfig', '/k', '--nodes', '2', '--root-dir', '/r', '--max-pods', '30');
  const a = hollowAgentConfig(c, 'hollow-1', readFile);
  assert.equal(a.nodeName, 'hollow-1');
  assert.equal(a.rootDir, '/r/hollow-1');
  assert.equal(a.containerRuntimeEndpoint, 'unix:///r/hollow-1/sim.sock');
  assert.equal(a.maxPods, 30);
  assert.equal(a.port, 0);
  assert.equal(a.readOnlyPort, 0);
  assert.equal(a.cgroupsPerQOS, false);
  assert.equal(a.kubeconfig, '/k');
  files['/agent.yaml'] = 'kubeAPIQPS: 5\nnodeLeaseDurationSeconds: 20\n';
  const b = hollowAgentConfig(parse('--kubeconfig', '/k', '--nodes', '2', '--agent-config', '/agent.yaml'), 'hollow-0', readFile);
  assert.equal(b.kubeAPIQPS, 5);
  assert.equal(b.nodeLeaseDurationSeconds, 20);
  files['/agent-bad.yaml'] = 'maxPods: -1\n';
  assert.throws(() => hollowAgentConfig(parse('--kubeconfig', '/k', '--nodes', '2', '--agent-config', '/agent-bad.yaml'), 'hollow-0', readFile), /^HollowConfigError: --agent-config: /);
});
