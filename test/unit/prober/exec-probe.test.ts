/** Exec probes over a scripted ExecSync: exit codes, output, timeout and runtime errors. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { execProbe } from '../../../workers/prober/probers/exec-probe.js';
import { MAX_PROBE_OUTPUT_BYTES, PROBE_SUCCESS } from '../../../workers/prober/probe-outcome.js';
import { FakeExecRuntime } from './fake-exec-runtime.js';

const signal = new AbortController().signal;

test('exit 0 is success (the shared success value); the command and timeout go to ExecSync as written', async () => {
  const rt = new FakeExecRuntime(new FakeClock());
  const o = await execProbe(rt, { containerId: 'c1', command: ['cat', '/tmp/healthy'], timeoutSeconds: 3, signal });
  assert.equal(o, PROBE_SUCCESS);
  assert.deepEqual(rt.calls.map((c) => [c.containerId, c.cmd, c.timeout]), [['c1', ['cat', '/tmp/healthy'], 3]]);
});

test('a non-zero exit is failure with stdout then stderr as output, capped at 10 KiB', async () => {
  const rt = new FakeExecRuntime(new FakeClock());
  rt.script('c1', { exitCode: 2, stdout: 'out;', stderr: 'err' }, { exitCode: 1, stdout: 'y'.repeat(20_000) });
  const o = await execProbe(rt, { containerId: 'c1', command: ['x'], timeoutSeconds: 1, signal });
  assert.deepEqual(o, { kind: 'failure', output: 'out;err' });
  const big = await execProbe(rt, { containerId: 'c1', command: ['x'], timeoutSeconds: 1, signal });
  assert.equal(big.kind === 'failure' ? big.output.length : -1, MAX_PROBE_OUTPUT_BYTES);
});

test('DEADLINE_EXCEEDED is a failure (timed out); other CRI errors are probe errors', async () => {
  const rt = new FakeExecRuntime(new FakeClock());
  rt.script('c1', { error: 'ERR_CRI_DEADLINE_EXCEEDED' }, { error: 'ERR_CRI_NOT_FOUND' });
  const t = await execProbe(rt, { containerId: 'c1', command: ['x'], timeoutSeconds: 1, signal });
  assert.equal(t.kind, 'failure');
  assert.match(t.kind === 'failure' ? t.output : '', /timed out/);
  const e = await execProbe(rt, { containerId: 'c1', command: ['x'], timeoutSeconds: 1, signal });
  assert.equal(e.kind === 'error' ? e.error.code : e.kind, 'ERR_PROBE_RUNTIME');
});

test('an aborted probe is an error and does not call the runtime when already aborted', async () => {
  const rt = new FakeExecRuntime(new FakeClock());
  const ac = new AbortController();
  ac.abort();
  const o = await execProbe(rt, { containerId: 'c1', command: ['x'], timeoutSeconds: 1, signal: ac.signal });
  assert.equal(o.kind === 'error' ? o.error.code : o.kind, 'ERR_PROBE_ABORTED');
  assert.equal(rt.calls.length, 0);
});
