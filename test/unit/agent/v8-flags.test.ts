import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { agentV8Flags, applyAgentV8Flags, LAZY_JIT_INTERRUPT_BUDGET, v8Major } from '../../../src/main/agent/v8-flags.js';
import { parseAgentConfig, type AgentConfig } from '../../../src/main/agent/agent-config.js';

const noFile = (p: string): string => {
  throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
};
const NODE20_V8 = '11.3.244.8-node.33';
const NODE24_V8 = '13.6.233.10-node.28';

test('the default config sets the later tier-up on V8 11 only, and nothing else at run time', () => {
  const c = parseAgentConfig(['--pod-manifest-path', '/x'], noFile) as AgentConfig;
  assert.equal(c.lazyJit, true);
  assert.deepEqual(agentV8Flags(c, NODE20_V8), [`--interrupt-budget=${LAZY_JIT_INTERRUPT_BUDGET}`]);
  assert.deepEqual(agentV8Flags(c, NODE24_V8), []);
  assert.equal(LAZY_JIT_INTERRUPT_BUDGET, 4 * 67_584);
  assert.equal(v8Major(NODE20_V8), 11);
  assert.equal(v8Major('garbage'), 0);
  // GC threading is never set at run time (it crashed a running isolate; v8-flags.ts).
  for (const f of agentV8Flags({ lazyJit: true, optimizeForSize: true, heapGrowingPercent: 30 }, NODE20_V8)) assert.doesNotMatch(f, /gc|marking|sweeping|scavenge|compaction/);
});

test('--lazy-jit=false leaves tiering to V8; the size flags follow their config values', () => {
  const c = parseAgentConfig(['--pod-manifest-path', '/x', '--lazy-jit=false', '--optimize-for-size', '--heap-growing-percent', '30'], noFile) as AgentConfig;
  assert.equal(c.lazyJit, false);
  assert.deepEqual(agentV8Flags(c, NODE20_V8), ['--optimize-for-size', '--heap-growing-percent=30']);
  const none = { lazyJit: false, optimizeForSize: false };
  assert.deepEqual(agentV8Flags({ ...none, heapGrowingPercent: 0 }, NODE20_V8), []);
  // Only a validated integer becomes a flag, whatever reaches this function.
  assert.deepEqual(agentV8Flags({ ...none, heapGrowingPercent: 1.5 }, NODE20_V8), []);
  assert.deepEqual(agentV8Flags({ ...none, heapGrowingPercent: 5000 }, NODE20_V8), []);
  assert.throws(() => parseAgentConfig(['--pod-manifest-path', '/x', '--lazy-jit=sometimes'], noFile), /--lazy-jit: must be true or false/);
});

test('applyAgentV8Flags sets each flag once, in order', () => {
  const set: string[] = [];
  const out = applyAgentV8Flags({ lazyJit: true, optimizeForSize: true, heapGrowingPercent: 0 }, (f) => set.push(f), NODE20_V8);
  assert.deepEqual(set, [`--interrupt-budget=${LAZY_JIT_INTERRUPT_BUDGET}`, '--optimize-for-size']);
  assert.deepEqual(out, set);
});

test('this V8 accepts every flag the agent sets (a real process: an unknown flag is reported on stderr)', () => {
  const runtime = agentV8Flags({ lazyJit: true, optimizeForSize: true, heapGrowingPercent: 30 });
  const script = `const v8 = require('node:v8'); for (const f of ${JSON.stringify(runtime)}) v8.setFlagsFromString(f); globalThis.x = Array.from({ length: 1e5 }, (_, i) => ({ i })); console.log('ok');`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'ok');
  assert.equal(r.stderr, '', 'V8 printed a warning for a flag');
});
