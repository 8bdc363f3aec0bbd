import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { PodUpdate } from '../../../src/shared/manifest/pod-update.js';
import { UpdateQueue } from '../../../src/main/config/update-queue.js';
import { createLogger } from '../../../src/shared/logging/logger.js';
import type { PodLifecycle } from '../../../src/main/syncloop/pod-lifecycle.js';
import { SyncLoop } from '../../../src/main/syncloop/sync-loop.js';

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
}

function setup() {
  const clock = new FakeClock();
  const calls: string[] = [];
  const lifecycle = {
    handleConfigUpdate: (u: PodUpdate) => calls.push(`config:${u.op}`),
    handlePlegEvents: (e: unknown[]) => calls.push(`pleg:${e.length}`),
    resync: (uid: string) => calls.push(`resync:${uid}`),
    syncDue: () => calls.push('syncDue'),
    housekeeping: () => calls.push('housekeeping'),
  } as unknown as PodLifecycle;
  const updates = new UpdateQueue<PodUpdate>();
  let errors: string[] = [];
  const logs: string[] = [];
  const loop = new SyncLoop({ clock, logger: createLogger({ sink: (l) => logs.push(l) }), updates, lifecycle, runtimeErrors: () => errors });
  return { clock, calls, updates, loop, logs, setErrors: (e: string[]) => (errors = e) };
}

test('each input wakes the loop; ticks run on the 1 s / 2 s schedule', async () => {
  const { clock, calls, updates, loop } = setup();
  const ac = new AbortController();
  const done = loop.run(ac.signal);
  await settle();
  updates.push({ op: 'ADD', pods: [], source: 'file' });
  await settle();
  loop.pushPlegEvents([{ id: 'a', type: 'ContainerStarted', data: 'c' }]);
  await settle();
  loop.pushProbeUpdate({ podUID: 'b', containerId: 'c', containerName: 'n', type: 'readiness', result: 'success' });
  await settle();
  assert.deepEqual(calls, ['config:ADD', 'pleg:1', 'resync:b']);
  calls.length = 0;
  clock.step(1_000);
  await settle();
  clock.step(1_000);
  await settle();
  assert.deepEqual(calls, ['syncDue', 'syncDue', 'housekeeping']);
  ac.abort();
  clock.step(1);
  await done;
  assert.equal(loop.state, 'stopped');
});

test('a not-ready runtime makes the loop back off 100 ms → 5 s, doubling, without handling pods', async () => {
  const { clock, calls, updates, loop, logs, setErrors } = setup();
  setErrors(['container runtime not ready: NetworkPluginNotReady']);
  updates.push({ op: 'ADD', pods: [], source: 'file' });
  const ac = new AbortController();
  const done = loop.run(ac.signal);
  const waits: number[] = [];
  for (let i = 0; i < 8; i++) {
    await settle();
    const next = clock.nextTimerAt()!;
    waits.push(next - clock.now());
    clock.stepTo(next);
  }
  assert.deepEqual(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
  assert.deepEqual(calls, [], 'no pod work while the runtime is not ready');
  assert.ok(logs.some((l) => l.includes('container runtime not ready')));
  setErrors([]);
  clock.step(5_000);
  await settle();
  assert.deepEqual(calls, ['config:ADD', 'syncDue', 'housekeeping'], 'pending input first, then the overdue ticks');
  ac.abort();
  clock.step(1);
  await done;
});
