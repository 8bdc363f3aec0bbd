import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { agentV8Flags, applyAgentV8Flags, LAZY_JIT_INTERRUPT_BUDGET, SINGLE_THREADED_GC_FLAGS, v8Major } from '../../../src/main/agent/v8-flags.js';
import { parseAgentConfig, type AgentConfig } from '../../../src/main/agent/agent-config.js';

const noFile = (p: string): string => {
  throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
};

const NODE20_V8 = '11.3.244.8-node.33';
const NODE24_V8 = '13.6.233.10-node.28';

test('the default config sets single-threaded GC with its implications spelled out, and the later tier-up on V8 11 only', () => {
  const c = parseAgentConfig(['--pod-manifest-path', '/x'], noFile) as AgentConfig;
  assert.equal(c.parallelGc, false);
  assert.equal(c.lazyJit, true);
  assert.deepEqual(agentV8Flags(c, NODE20_V8), [...SINGLE_THREADED_GC_FLAGS, `--interrupt-budget=${LAZY_JIT_INTERRUPT_BUDGET}`]);
  assert.deepEqual(agentV8Flags(c, NODE24_V8), [...SINGLE_THREADED_GC_FLAGS]);
  assert.equal(LAZY_JIT_INTERRUPT_BUDGET, 4 * 67_584);
  assert.equal(v8Major(NODE20_V8), 11);
  assert.equal(v8Major('garbage'), 0);
  assert.ok(SINGLE_THREADED_GC_FLAGS.includes('--no-parallel-scavenge'));
  assert.ok(SINGLE_THREADED_GC_FLAGS.includes('--no-concurrent-marking'));
});

test('--parallel-gc leaves V8 its helper threads; the size flags follow their config values', () => {
  const c = parseAgentConfig(['--pod-manifest-path', '/x', '--parallel-gc', '--lazy-jit=false', '--optimize-for-size', '--heap-growing-percent', '30'], noFile) as AgentConfig;
  assert.equal(c.parallelGc, true);
  assert.equal(c.lazyJit, false);
  assert.deepEqual(agentV8Flags(c, NODE20_V8), ['--optimize-for-size', '--heap-growing-percent=30']);
  const none = { parallelGc: true, lazyJit: false, optimizeForSize: false };
  assert.deepEqual(agentV8Flags({ ...none, heapGrowingPercent: 0 }, NODE20_V8), []);
  // Only a validated integer becomes a flag, whatever reaches this function.
  assert.deepEqual(agentV8Flags({ ...none, heapGrowingPercent: 1.5 }, NODE20_V8), []);
  assert.deepEqual(agentV8Flags({ ...none, heapGrowingPercent: 5000 }, NODE20_V8), []);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--parallel-gc=maybe'], noFile), /--parallel-gc: must be true or false/);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--lazy-jit=sometimes'], noFile), /--lazy-jit: must be true or false/);
});

test('applyAgentV8Flags sets each flag once, in order', () => {
  const set: string[] = [];
  const out = applyAgentV8Flags({ parallelGc: false, lazyJit: true, optimizeForSize: true, heapGrowingPercent: 0 }, (f) => set.push(f), NODE20_V8);
  assert.deepEqual(set, [...SINGLE_THREADED_GC_FLAGS, `--interrupt-budget=${LAZY_JIT_INTERRUPT_BUDGET}`, '--optimize-for-size']);
  assert.deepEqual(out, set);
});

test('this V8 accepts every flag the agent sets on it (a real isolate: an unknown flag is reported on stderr)', () => {
  const flags = agentV8Flags({ parallelGc: false, lazyJit: true, optimizeForSize: true, heapGrowingPercent: 30 });
  const script = `const v8 = require('node:v8'); for (const f of ${JSON.stringify(flags)}) v8.setFlagsFromString(f); globalThis.x = Array.from({ length: 1e5 }, (_, i) => ({ i })); console.log('ok');`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'ok');
  assert.equal(r.stderr, '', 'V8 printed a warning for a flag');
});
