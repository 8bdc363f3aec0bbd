/**
 * `--pin RUNTIME:AGENT` parsing: CPU lists in the kernel's syntax, checked against the machine's
 * CPU count before they reach taskset; overlapping sets are refused; the bench's flag wiring.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpusOf, parsePin, pinnedCommand } from '../../../bench/cpu-pinning.js';
import { BenchConfigError, parseBenchArgs } from '../../../bench/bench-config.js';

test('CPU lists: singles, ranges and lists; malformed, backwards and missing CPUs are refused', () => {
  assert.deepEqual(cpusOf('0', 2), [0]);
  assert.deepEqual(cpusOf('0-1', 2), [0, 1]);
  assert.deepEqual(cpusOf('3,0-1', 4), [0, 1, 3]);
  assert.throws(() => cpusOf('', 2), /not a CPU list/);
  assert.throws(() => cpusOf('0;rm -rf /', 2), /not a CPU list/);
  assert.throws(() => cpusOf('a', 2), /not a CPU list/);
  assert.throws(() => cpusOf('2-1', 4), /backwards/);
  assert.throws(() => cpusOf('2', 2), /CPU 2 does not exist \(this machine has CPUs 0-1\)/);
});

test('--pin RUNTIME:AGENT: two disjoint sets', () => {
  assert.deepEqual(parsePin('0:1', 2), { runtime: '0', agent: '1' });
  assert.deepEqual(parsePin('0-1:2-3', 4), { runtime: '0-1', agent: '2-3' });
  assert.throws(() => parsePin('0', 2), /RUNTIME_CPUS:AGENT_CPUS/);
  assert.throws(() => parsePin('0:1:2', 4), /RUNTIME_CPUS:AGENT_CPUS/);
  assert.throws(() => parsePin('0-1:1', 2), /CPU 1 is in both/);
});

test('pinnedCommand runs the command under taskset -c, or unchanged without a set', () => {
  assert.deepEqual(pinnedCommand(undefined, 'node', ['a', 'b']), ['node', ['a', 'b']]);
  assert.deepEqual(pinnedCommand('1', 'node', ['a']), ['taskset', ['-c', '1', 'node', 'a']]);
});

test('the bench flag: --pin reaches the config; a bad one is a BenchConfigError naming --pin', () => {
  const now = new Date();
  assert.equal(parseBenchArgs(['--no-real', '--no-cluster'], now).pin, undefined);
  assert.deepEqual(parseBenchArgs(['--no-real', '--no-cluster', '--pin', '0:1'], now).pin, { runtime: '0', agent: '1' });
  assert.throws(() => parseBenchArgs(['--pin', '0:0'], now), (e: unknown) => e instanceof BenchConfigError && /^--pin: CPU 0 is in both/.test(e.message));
  assert.throws(() => parseBenchArgs(['--pin', 'x'], now), (e: unknown) => e instanceof BenchConfigError && /^--pin must be/.test(e.message));
});
