import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RuntimeHealth } from '../../../src/main/agent/runtime-health.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import type { StatusResponse, VersionResponse } from '../../../src/shared/cri/cri-types.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';

type Mode = 'ready' | 'notready' | 'fail';

/** A RuntimeHealth on a fake clock whose Status answers per `mode`; `check(run)` runs `run` and awaits the check it triggers. */
function setup(runtimeStatus: () => StatusResponse) {
  const clock = new FakeClock();
  let mode: Mode = 'ready';
  let checked: (() => void) | undefined;
  const runtime = {
    version: async (): Promise<VersionResponse> => ({ version: 'v1', runtimeName: 'x', runtimeVersion: '1', runtimeApiVersion: 'v1' }),
    status: async (): Promise<StatusResponse> => {
      if (mode === 'fail') throw new CriError('ERR_CRI_DEADLINE_EXCEEDED', 'Status', 'Status: deadline exceeded');
      return runtimeStatus();
    },
  };
  const h = new RuntimeHealth({ runtime, clock, logger: silentLogger, onChecked: () => checked?.() });
  /** Runs `trigger` (start, or a clock step firing the timer) and waits (bounded) until the check it caused completed. */
  const check = async (trigger: () => void): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<void>((resolve, reject) => {
      checked = resolve;
      timer = setTimeout(() => reject(new Error('no status check completed within 5 s')), 5_000);
    });
    trigger();
    try {
      await done;
    } finally {
      clearTimeout(timer);
      checked = undefined;
    }
  };
  return { clock, h, check, setMode: (m: Mode) => (mode = m), mode: () => mode };
}

test('runtime errors: not ready at once; failed checks only after 30 s without an answer', async () => {
  let ready = true;
  const { clock, h, check, setMode } = setup(() => ({
    status: { conditions: [{ type: 'RuntimeReady', status: ready, reason: ready ? '' : 'RuntimeNotReady', message: '' }, { type: 'NetworkReady', status: true, reason: '', message: '' }] },
    info: {},
  }));
  assert.match(h.errors()[0]!, /may not have completed yet/, 'not ready before the first check');
  await check(() => h.start());
  assert.deepEqual(h.errors(), []);
  ready = false;
  await check(() => clock.step(5_000));
  assert.match(h.errors()[0]!, /container runtime not ready: RuntimeNotReady/);
  ready = true;
  await check(() => clock.step(5_000));
  assert.deepEqual(h.errors(), []);
  setMode('fail');
  for (let t = 0; t < 25_000; t += 5_000) {
    await check(() => clock.step(5_000));
    assert.deepEqual(h.errors(), [], `a failed check ${t + 5_000} ms after the last answer is tolerated`);
  }
  await check(() => clock.step(5_000));
  assert.match(h.errors()[0]!, /container runtime is down: no successful status check for 30s/);
  setMode('ready');
  await check(() => clock.step(5_000));
  assert.deepEqual(h.errors(), []);
  h.stop();
});

test('NetworkReady=false is no runtime error but a network error (kept while Status fails, cleared when ready)', async () => {
  let network = false;
  const { clock, h, check, setMode } = setup(() => ({
    status: { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }, { type: 'NetworkReady', status: network, reason: network ? '' : 'NetworkPluginNotReady', message: network ? '' : 'cni plugin not initialized' }] },
    info: {},
  }));
  assert.equal(h.networkError(), undefined, 'before the first answer only the runtime errors hold pods back');
  await check(() => h.start());
  assert.deepEqual(h.errors(), [], 'host-network pods still run');
  assert.equal(h.networkError(), 'network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized');
  setMode('fail');
  await check(() => clock.step(5_000));
  assert.match(h.networkError() ?? '', /^network is not ready/, 'a failed Status call changes nothing');
  setMode('ready');
  network = true;
  await check(() => clock.step(5_000));
  assert.equal(h.networkError(), undefined);
  h.stop();
});
