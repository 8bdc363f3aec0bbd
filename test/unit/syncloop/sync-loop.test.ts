/**
 * SyncLoop wake-ups and backoff on a SignalClock: the test waits for completion signals only —
 * the loop parking on its timer (the clock tells when a timer is armed) and an iteration
 * finishing (the loop's onIteration observer, the one the agent wires to its iteration-duration
 * metric) — each bounded in real time, never a count of event-loop turns.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodUpdate } from '../../../src/shared/manifest/pod-update.js';
import { UpdateQueue } from '../../../src/main/config/update-queue.js';
import { createLogger } from '../../../src/shared/logging/logger.js';
import type { PodLifecycle } from '../../../src/main/syncloop/pod-lifecycle.js';
import { SyncLoop } from '../../../src/main/syncloop/sync-loop.js';
import { within } from '../../harness/poll.js';
import { SignalClock } from '../node-status/signal-clock.js';

function setup() {
  const clock = new SignalClock();
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
  let iterationWaiters: (() => void)[] = [];
  const loop = new SyncLoop({
    clock, logger: createLogger({ sink: (l) => logs.push(l) }), updates, lifecycle, runtimeErrors: () => errors,
    onIteration: () => {
      const w = iterationWaiters;
      iterationWaiters = [];
      for (const f of w) f();
    },
  });
  /** The next completed iteration; take it before the action that causes it. */
  const nextIteration = (what: string): Promise<void> => within(new Promise<void>((r) => iterationWaiters.push(r)), `an iteration (${what})`);
  return { clock, calls, updates, loop, logs, nextIteration, setErrors: (e: string[]) => (errors = e) };
}

test('each input wakes the loop; ticks run on the 1 s / 2 s schedule', async () => {
  const { clock, calls, updates, loop, nextIteration } = setup();
  const ac = new AbortController();
  const done = loop.run(ac.signal);
  assert.equal(await clock.nextSleep(), 1_000, 'parked until the 1 s sync tick');
  let it = nextIteration('config update');
  updates.push({ op: 'ADD', pods: [], source: 'file' });
  await it;
  it = nextIteration('PLEG events');
  loop.pushPlegEvents([{ id: 'a', type: 'ContainerStarted', data: 'c' }]);
  await it;
  it = nextIteration('probe update');
  loop.pushProbeUpdate({ podUID: 'b', containerId: 'c', containerName: 'n', type: 'readiness', result: 'success' });
  await it;
  assert.deepEqual(calls, ['config:ADD', 'pleg:1', 'resync:b']);
  calls.length = 0;
  it = nextIteration('the 1 s tick');
  clock.step(1_000);
  await it;
  assert.deepEqual(calls, ['syncDue'], 'no housekeeping before 2 s');
  it = nextIteration('the 2 s tick');
  clock.step(1_000);
  await it;
  assert.deepEqual(calls, ['syncDue', 'syncDue', 'housekeeping']);
  ac.abort();
  await within(done, 'the loop to stop');
  assert.equal(loop.state, 'stopped');
});

test('a not-ready runtime makes the loop back off 100 ms → 5 s, doubling, without handling pods', async () => {
  const { clock, calls, updates, loop, logs, nextIteration, setErrors } = setup();
  setErrors(['container runtime not ready: NetworkPluginNotReady']);
  updates.push({ op: 'ADD', pods: [], source: 'file' });
  const ac = new AbortController();
  const done = loop.run(ac.signal);
  const waits: number[] = [];
  for (let i = 0; i < 8; i++) {
    // The loop is parked in its backoff sleep: everything it did before parking is visible.
    const ms = await clock.nextSleep();
    waits.push(ms);
    assert.deepEqual(calls, [], 'no pod work while the runtime is not ready');
    clock.step(ms);
  }
  assert.deepEqual(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
  assert.equal(await clock.nextSleep(), 5_000, 'still backing off at the cap');
  assert.deepEqual(calls, []);
  assert.ok(logs.some((l) => l.includes('container runtime not ready')));
  const it = nextIteration('the first iteration with a ready runtime');
  setErrors([]);
  clock.step(5_000);
  await it;
  assert.deepEqual(calls, ['config:ADD', 'syncDue', 'housekeeping'], 'pending input first, then the overdue ticks');
  ac.abort();
  await within(done, 'the loop to stop');
});
