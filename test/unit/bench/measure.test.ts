import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentWindow, parseProcStatCpuSeconds, parseProcStatusMemory, readCpuSeconds } from '../../../bench/measure.js';
import { parsePromText } from '../../../bench/prom-text.js';

test('utime+stime are fields 14 and 15, counted after a comm that may hold spaces and parens', () => {
  const stat = '4242 (node (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 130 0 0 20 0 11 0 100 1000000 5000 18446744073709551615';
  assert.equal(parseProcStatCpuSeconds(stat, 100), 3.8);
  assert.throws(() => parseProcStatCpuSeconds('garbage', 100), /unreadable/);
});

test('the bench reads its own CPU from /proc', () => {
  const before = readCpuSeconds(process.pid);
  let x = 0;
  const until = performance.now() + 60;
  while (performance.now() < until) x += Math.sqrt(x + 1);
  assert.ok(readCpuSeconds(process.pid) >= before && x > 0);
});

test('VmRSS and VmHWM in MiB', () => {
  assert.deepEqual(parseProcStatusMemory('Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n'), { rssMiB: 100, hwmMiB: 200 });
  assert.deepEqual(parseProcStatusMemory('Name:\tzombie\n'), { rssMiB: null, hwmMiB: null });
});

const before = parsePromText(`
shardlet_main_event_loop_delay_seconds{stat="p50"} 0.5
kubelet_pleg_relist_duration_seconds_bucket{le="0.005"} 10
kubelet_pleg_relist_duration_seconds_bucket{le="0.01"} 10
kubelet_pleg_relist_duration_seconds_bucket{le="+Inf"} 10
kubelet_pleg_relist_duration_seconds_sum 0.02
kubelet_pleg_relist_duration_seconds_count 10
`);
const after = parsePromText(`
shardlet_main_event_loop_delay_seconds{stat="p50"} 0.0011
shardlet_main_event_loop_delay_seconds{stat="p99"} 0.0125
shardlet_main_event_loop_delay_seconds{stat="max"} 0.04
kubelet_pleg_relist_duration_seconds_bucket{le="0.005"} 10
kubelet_pleg_relist_duration_seconds_bucket{le="0.01"} 110
kubelet_pleg_relist_duration_seconds_bucket{le="+Inf"} 110
kubelet_pleg_relist_duration_seconds_sum 0.72
kubelet_pleg_relist_duration_seconds_count 110
shardlet_pleg_events_main_thread_seconds_total 0.175
`);

test('window: event-loop delay from the closing scrape, relist from histogram deltas', () => {
  const w = agentWindow(before, after);
  assert.deepEqual(w.eventLoopDelayMs, { p50: 1.1, p99: 12.5, max: 40, metric: 'shardlet_main_event_loop_delay_seconds' });
  assert.equal(w.relist?.count, 100);
  assert.ok(Math.abs((w.relist?.meanMs ?? 0) - 7) < 1e-9);
  assert.ok(Math.abs((w.relist?.p99Ms ?? 0) - 9.95) < 1e-9);
  assert.ok(Math.abs((w.relist?.mainThreadShare ?? 0) - 0.25) < 1e-9);
  assert.ok(Math.abs((w.relist?.mainThreadMsPerRelist ?? 0) - 1.75) < 1e-9);
  assert.equal(w.relist?.mainThreadMetric, 'shardlet_pleg_events_main_thread_seconds_total');
});

test('window: relist without the main-thread counter has a null share, not zero', () => {
  const noMain = parsePromText(`
kubelet_pleg_relist_duration_seconds_bucket{le="+Inf"} 12
kubelet_pleg_relist_duration_seconds_sum 0.1
kubelet_pleg_relist_duration_seconds_count 12
`);
  const w = agentWindow(before, noMain);
  assert.equal(w.relist?.count, 2);
  assert.equal(w.relist?.mainThreadShare, null);
  assert.equal(w.relist?.mainThreadMsPerRelist, null);
});

test('window: absent metrics are null, not zero', () => {
  const empty = parsePromText('');
  assert.deepEqual(agentWindow(empty, empty), { eventLoopDelayMs: null, relist: null });
});
