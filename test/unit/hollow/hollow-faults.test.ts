/**
 * Fault scripts: each action parses, comments and blank lines are skipped, bad lines are refused
 * naming the line, and FaultSchedule runs the steps at their times on a fake clock (and not
 * after close()).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { FaultSchedule, FaultScriptError, parseFaultLines, type FaultStep } from '../../../src/main/hollow/hollow-faults.js';

const nodes = new Set(['h-0', 'h-1']);

test('every action parses; comments and blank lines are skipped', () => {
  const steps = parseFaultLines('# script\n\n0s h-0 lease-stop\n1m h-0 lease-resume  # back\n30s h-1 runtime-down\n45s h-1 runtime-up\n2s h-1 crash ns1/web-0\n', 'f', nodes);
  assert.deepEqual(steps, [
    { atMs: 0, node: 'h-0', action: { kind: 'lease-stop' } },
    { atMs: 60_000, node: 'h-0', action: { kind: 'lease-resume' } },
    { atMs: 30_000, node: 'h-1', action: { kind: 'runtime-down' } },
    { atMs: 45_000, node: 'h-1', action: { kind: 'runtime-up' } },
    { atMs: 2_000, node: 'h-1', action: { kind: 'crash', namespace: 'ns1', pod: 'web-0' } },
  ]);
});

test('bad lines are refused naming the line', () => {
  const bad: [string, RegExp][] = [
    ['5s h-0', /f line 1: want "AT NODE ACTION \[ARG\]"/],
    ['soon h-0 lease-stop', /f line 1: AT "soon" is not a duration/],
    ['48h h-0 lease-stop', /f line 1: AT must be within 0s\.\.24h/],
    ['-1s h-0 lease-stop', /f line 1: AT must be within|is not a duration/],
    ['\n1s h-9 lease-stop', /f line 2: node "h-9" is not one of/],
    ['1s h-0 reboot', /f line 1: unknown action "reboot"/],
    ['1s h-0 lease-stop now', /f line 1: lease-stop takes no argument/],
    ['1s h-0 crash web-0', /f line 1: crash wants NAMESPACE\/POD/],
    ['1s h-0 crash ../etc/passwd', /f line 1: crash wants NAMESPACE\/POD/],
    ['1s h-0 crash a/b extra', /f line 1: unexpected "extra"/],
  ];
  for (const [text, re] of bad) assert.throws(() => parseFaultLines(text, 'f', nodes), (e: unknown) => e instanceof FaultScriptError && re.test(e.message), text);
});

test('FaultSchedule: steps run at their times, in time order; none after close()', () => {
  const clock = new FakeClock();
  const ran: string[] = [];
  const steps: FaultStep[] = parseFaultLines('10s h-0 lease-stop\n5s h-1 runtime-down\n20s h-0 lease-resume', 'f', nodes);
  const s = new FaultSchedule({ clock, steps, apply: (st) => ran.push(`${clock.monotonic()} ${st.node} ${st.action.kind}`) });
  const t0 = clock.monotonic();
  s.start();
  clock.step(4_999);
  assert.deepEqual(ran, []);
  clock.step(5_001);
  assert.deepEqual(ran, [`${t0 + 5_000} h-1 runtime-down`, `${t0 + 10_000} h-0 lease-stop`]);
  s.close();
  clock.step(60_000);
  assert.equal(ran.length, 2);
});
