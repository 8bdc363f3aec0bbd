/**
 * Threshold parsing (the kubelet's ParseThresholdConfig messages), quantity printing, the
 * threshold set arithmetic, and the eviction flags through the agent's config parser.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatQuantity } from '../../../src/main/eviction/eviction-quantity.js';
import {
  byEvictionPriority, conditionsLastObservedAt, conditionsObservedSince, conditionsOf, formatThresholdQuantity, parseThresholdConfig,
  ThresholdConfigError, thresholdsMet, thresholdQuantity, type Observation, type Signal,
} from '../../../src/main/eviction/eviction-thresholds.js';
import { DEFAULT_EVICTION_HARD, evictionThresholds, EVICTION_DEFAULTS } from '../../../src/main/eviction/eviction-config.js';
import { parseAgentConfig } from '../../../src/main/agent/agent-config.js';
import { ConfigError } from '../../../src/shared/manifest/config-errors.js';

const none = { soft: {}, softGracePeriod: {}, minimumReclaim: {} };

test('Quantity.String() as the kubelet prints amounts', () => {
  assert.equal(formatQuantity(104857600, 'BinarySI'), '100Mi');
  assert.equal(formatQuantity(1572864, 'BinarySI'), '1536Ki');
  assert.equal(formatQuantity(1536, 'BinarySI'), '1536');
  assert.equal(formatQuantity(1000, 'BinarySI'), '1k', '|v| < 1024 prints as DecimalSI');
  assert.equal(formatQuantity(0, 'BinarySI'), '0');
  assert.equal(formatQuantity(2000, 'DecimalSI'), '2k');
  assert.equal(formatQuantity(1500, 'DecimalSI'), '1500');
  assert.equal(formatQuantity(100_000_000, 'DecimalSI'), '100M');
});

test('the kubelet default hard thresholds parse; 0% and 100% are ignored; soft thresholds need a grace period', () => {
  const t = evictionThresholds(EVICTION_DEFAULTS);
  assert.deepEqual(t.map((x) => x.signal).sort(), Object.keys(DEFAULT_EVICTION_HARD).sort());
  const mem = t.find((x) => x.signal === 'memory.available')!;
  assert.deepEqual(mem.value, { quantity: 100 * 1024 * 1024, format: 'BinarySI' });
  assert.equal(mem.gracePeriodMs, 0);
  const nodefs = t.find((x) => x.signal === 'nodefs.available')!;
  assert.deepEqual(nodefs.value, { percentage: Math.fround(Math.fround(10) / 100) });
  assert.deepEqual(parseThresholdConfig({ hard: { 'memory.available': '0%', 'nodefs.available': '100%' }, ...none }), []);
  const soft = parseThresholdConfig({ hard: {}, soft: { 'memory.available': '1Gi' }, softGracePeriod: { 'memory.available': '1m30s' }, minimumReclaim: { 'memory.available': '500Mi' } });
  assert.equal(soft[0]!.gracePeriodMs, 90_000);
  assert.deepEqual(soft[0]!.minReclaim, { quantity: 500 * 1024 * 1024, format: 'BinarySI' });
});

test('bad thresholds: the kubelet\'s messages, each naming its flag', () => {
  const bad = (c: Partial<Parameters<typeof parseThresholdConfig>[0]>, flag: string, message: string): void => {
    assert.throws(() => parseThresholdConfig({ hard: {}, ...none, ...c }), (e: unknown) => e instanceof ThresholdConfigError && e.flag === flag && e.message === message);
  };
  bad({ hard: { 'memory.free': '1Gi' } }, '--eviction-hard', 'unsupported eviction signal memory.free');
  bad({ hard: { 'containerfs.available': '10%' } }, '--eviction-hard', 'eviction signal containerfs.available is not supported by shardlet (it measures memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree, pid.available)');
  bad({ hard: { 'nodefs.available': '110%' } }, '--eviction-hard', 'eviction percentage threshold nodefs.available must be <= 100%: 110%');
  bad({ hard: { 'nodefs.available': '-5%' } }, '--eviction-hard', 'eviction percentage threshold nodefs.available must be >= 0%: -5%');
  bad({ hard: { 'memory.available': '-1Gi' } }, '--eviction-hard', 'eviction threshold memory.available must be positive: -1Gi');
  bad({ hard: { 'memory.available': '0' } }, '--eviction-hard', 'eviction threshold memory.available must be positive: 0');
  bad({ soft: { 'memory.available': 'lots' } }, '--eviction-soft', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  bad({ soft: { 'memory.available': '1Gi' } }, '--eviction-soft-grace-period', 'grace period must be specified for the soft eviction threshold memory.available');
  bad({ softGracePeriod: { 'memory.available': '-1s' } }, '--eviction-soft-grace-period', 'invalid eviction grace period specified: -1s, must be a positive value');
  bad({ minimumReclaim: { 'memory.available': '-1Gi' } }, '--eviction-minimum-reclaim', 'negative eviction minimum reclaim specified for memory.available');
  bad({ minimumReclaim: { 'nodefs.available': '0%' } }, '--eviction-minimum-reclaim', 'eviction percentage minimum reclaim nodefs.available must be positive: 0%');
});

test('the flags through the agent config: langle-separated thresholds, maps, config-file fields, ConfigError naming the flag', () => {
  const base = ['--pod-manifest-path', '/tmp/x'];
  const c = parseAgentConfig([...base, '--eviction-hard', 'memory.available<200Mi,pid.available<1000', '--eviction-soft', 'nodefs.available<20%', '--eviction-soft-grace-period', 'nodefs.available=2m', '--eviction-pressure-transition-period', '30s', '--eviction-max-pod-grace-period', '45']);
  assert.ok(c !== 'help');
  assert.deepEqual(c.evictionHard, { 'memory.available': '200Mi', 'pid.available': '1000' });
  assert.equal(c.evictionPressureTransitionPeriodMs, 30_000);
  assert.equal(c.evictionMaxPodGracePeriodSeconds, 45);
  assert.equal(evictionThresholds(c).length, 3);
  const d = parseAgentConfig(base);
  assert.ok(d !== 'help');
  assert.deepEqual(d.evictionHard, DEFAULT_EVICTION_HARD, 'the kubelet default is kept');
  const file = parseAgentConfig(['--config', '/cfg'], () => 'staticPodPath: /tmp/x\nevictionHard:\n  memory.available: 1Gi\nevictionPressureTransitionPeriod: 1m\n');
  assert.ok(file !== 'help');
  assert.deepEqual(file.evictionHard, { 'memory.available': '1Gi' });
  assert.equal(file.evictionPressureTransitionPeriodMs, 60_000);
  for (const [args, flag] of [
    [['--eviction-hard', 'memory.available=1Gi'], '--eviction-hard'],
    [['--eviction-hard', 'disk.available<1Gi'], '--eviction-hard'],
    [['--eviction-soft', 'memory.available<1Gi'], '--eviction-soft-grace-period'],
    [['--eviction-pressure-transition-period', 'soon'], '--eviction-pressure-transition-period'],
  ] as const) {
    assert.throws(() => parseAgentConfig([...base, ...args]), (e: unknown) => e instanceof ConfigError && e.message.startsWith(`${flag}: `), `${args.join(' ')} → ${flag}`);
  }
});

test('thresholdsMet: percentages of capacity (truncated), min reclaim when enforced; a missing observation never meets', () => {
  const [t] = parseThresholdConfig({ hard: { 'nodefs.available': '10%' }, soft: {}, softGracePeriod: {}, minimumReclaim: { 'nodefs.available': '1Gi' } });
  const cap = 100 * 1024 ** 3;
  assert.equal(thresholdQuantity(t!.value, cap), Math.trunc(cap * Math.fround(0.1)));
  assert.equal(formatThresholdQuantity(t!, 1000 * 1024), formatQuantity(Math.trunc(1000 * 1024 * Math.fround(0.1)), 'BinarySI'));
  const obs = (available: number): Map<Signal, Observation> => new Map([['nodefs.available', { available, capacity: cap }]]);
  assert.equal(thresholdsMet([t!], obs(10 * 1024 ** 3), false).length, 1);
  assert.equal(thresholdsMet([t!], obs(10.5 * 1024 ** 3), false).length, 0);
  assert.equal(thresholdsMet([t!], obs(10.5 * 1024 ** 3), true).length, 1, 'not yet past the minimum reclaim');
  const missing: string[] = [];
  assert.equal(thresholdsMet([t!], new Map(), false, (s) => missing.push(s)).length, 0);
  assert.deepEqual(missing, ['nodefs.available']);
});

test('conditions: one per resource kind, True within the transition period after last observed; memory first in eviction priority', () => {
  const ts = parseThresholdConfig({ hard: { 'imagefs.available': '15%', 'pid.available': '100', 'memory.available': '1Gi', 'nodefs.inodesFree': '5%' }, ...none });
  assert.deepEqual(new Set(conditionsOf(ts)), new Set(['DiskPressure', 'PIDPressure', 'MemoryPressure']));
  assert.equal(byEvictionPriority(ts)[0]!.signal, 'memory.available');
  let at = conditionsLastObservedAt(['DiskPressure'], new Map(), 1_000);
  assert.deepEqual(conditionsObservedSince(at, 300_000, 1_000), ['DiskPressure']);
  at = conditionsLastObservedAt([], at, 200_000);
  assert.deepEqual(conditionsObservedSince(at, 300_000, 300_999), ['DiskPressure']);
  assert.deepEqual(conditionsObservedSince(at, 300_000, 301_000), []);
});
