import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import { CacheError } from '../../../src/shared/pod-cache/pod-cache-errors.js';
import { attachPodCache, createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import type { PodCacheWriter } from '../../../src/shared/pod-cache/pod-cache.js';
import type { RuntimeContainerStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { GenericPleg, type RelistReport } from '../../../workers/pleg/generic-pleg.js';
import type { PodLifecycleEvent } from '../../../src/shared/pleg/pod-lifecycle-event.js';
import { FakeRuntime } from './fake-runtime.js';

function setup(opts: { eventCapacity?: number; cache?: (w: PodCacheWriter) => PodCacheWriter; cacheSize?: { capacity: number; maxCapacity: number } } = {}) {
  const clock = new FakeClock();
  const runtime = new FakeRuntime();
  const { reader, writer: plegWriter, buffer } = createPodCache(opts.cacheSize ?? { capacity: 256 });
  // What tests write stands for a pod worker's publish: another thread's view of the cache, as in
  // the agent (the PLEG tells its own writes from others', generic-pleg.ts #entriesCheckedAt).
  const { writer } = attachPodCache(buffer);
  const reports: RelistReport[] = [];
  const pleg = new GenericPleg({
    runtime, clock, cache: opts.cache ? opts.cache(plegWriter) : plegWriter, cacheReader: reader, sink: (r) => reports.push(r),
    ...(opts.eventCapacity !== undefined ? { eventCapacity: opts.eventCapacity } : {}),
  });
  /** One relist one second later; returns its events as [type, id] pairs. */
  const relist = async (): Promise<[string, string][]> => {
    clock.step(1000);
    await pleg.relist();
    const r = reports.at(-1);
    assert.ok(r);
    pleg.ackEvents(r.events.length);
    return r.events.map((e: PodLifecycleEvent) => [e.type, e.data]);
  };
  return { clock, runtime, reader, writer, pleg, reports, relist };
}

test('relist emits the kubelet event sequence over a pod\'s life and keeps the cache in step', async () => {
  const { runtime, reader, relist, clock } = setup();
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('c1', 's1', 'app');
  runtime.start('c1');
  assert.deepEqual(await relist(), [['ContainerStarted', 'c1'], ['ContainerStarted', 's1']]);
  let e = reader.get('A');
  assert.equal(e?.timestampMs, clock.now());
  assert.equal(e?.error, null);
  assert.deepEqual(e?.status.ips, ['10.1.0.2']);
  assert.deepEqual(e?.status.containers.map((c) => [c.id, c.name, c.state, c.hash]), [['c1', 'app', 'CONTAINER_RUNNING', 'abc123']]);
  assert.equal(reader.globalTimestampMs(), clock.now());

  assert.deepEqual(await relist(), []);
  assert.equal(reader.get('A')?.timestampMs, clock.now() - 1000, 'unchanged pod is not rewritten');
  assert.equal(reader.globalTimestampMs(), clock.now(), 'global timestamp advances every relist');

  runtime.exit('c1', 1);
  assert.deepEqual(await relist(), [['ContainerDied', 'c1']]);
  e = reader.get('A');
  assert.deepEqual(e?.status.containers.map((c) => [c.state, c.exitCode, c.reason]), [['CONTAINER_EXITED', 1, 'Error']]);

  runtime.addContainer('c2', 's1', 'app', { restartCount: 1 });
  assert.deepEqual(await relist(), [], 'ContainerChanged (created) is not sent');
  assert.equal(reader.get('A')?.status.containers[0]?.id, 'c2', 'but the cache has the new container, newest first');

  runtime.remove('c1');
  runtime.start('c2');
  // Running and published by no worker: its worker's answer may be in flight, so the pod waits
  // one relist (bulk-pod-status.ts build, mayDefer), then c2 is inspected.
  assert.deepEqual(await relist(), [], 'deferred one relist');
  assert.deepEqual(await relist(), [['ContainerRemoved', 'c1'], ['ContainerStarted', 'c2']]);

  runtime.remove('c2');
  runtime.stopSandbox('s1');
  assert.deepEqual(await relist(), [['ContainerDied', 'c2'], ['ContainerRemoved', 'c2'], ['ContainerDied', 's1']]);
  e = reader.get('A');
  assert.deepEqual(e?.status.sandboxes.map((s) => s.state), ['SANDBOX_NOTREADY']);
  assert.deepEqual(e?.status.ips, ['10.1.0.2'], 'a dead pod keeps its last IPs');

  runtime.remove('s1');
  assert.deepEqual(await relist(), [['ContainerRemoved', 's1']]);
  assert.equal(reader.get('A'), undefined, 'a pod with nothing left is deleted from the cache');
});

test('only new or changed objects are inspected', async () => {
  const { runtime, pleg, relist } = setup({ eventCapacity: 10_000 });
  for (let p = 0; p < 50; p++) {
    runtime.addSandbox(`s${p}`, `P${p}`);
    runtime.addContainer(`c${p}`, `s${p}`, 'app');
    runtime.start(`c${p}`);
  }
  assert.equal((await relist()).length, 100);
  assert.equal(pleg.counters().inspectCallsTotal, 100);
  await relist();
  assert.equal(pleg.counters().inspectCallsTotal, 100);
  runtime.exit('c7', 0);
  assert.deepEqual(await relist(), [['ContainerDied', 'c7']]);
  assert.equal(pleg.counters().inspectCallsTotal, 101);
  assert.deepEqual({ sb: runtime.calls.listPodSandbox, c: runtime.calls.listContainers }, { sb: 3, c: 3 });
});

test('a failed inspection withholds the pod\'s events, stores the error and reinspects next relist', async () => {
  const { runtime, reader, relist, pleg } = setup();
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('c1', 's1', 'app');
  runtime.start('c1');
  runtime.failStatusOf.set('c1', new CriError('ERR_CRI_UNAVAILABLE', 'ContainerStatus', 'runtime restarting'));
  assert.deepEqual(await relist(), []);
  assert.equal(reader.get('A')?.error?.code, 'ERR_CRI_UNAVAILABLE');
  assert.equal(pleg.counters().inspectErrorsTotal, 1);
  runtime.failStatusOf.clear();
  assert.deepEqual(await relist(), [['ContainerStarted', 'c1'], ['ContainerStarted', 's1']]);
  assert.equal(reader.get('A')?.error, null);
  assert.equal(reader.get('A')?.status.containers[0]?.startedAtNs !== '0', true);
});

test('objects that vanish between list and status are left out, not errors', async () => {
  const { runtime, reader, relist } = setup();
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('c1', 's1', 'app');
  runtime.start('c1'); // a created, never started container is not inspected at all
  runtime.failStatusOf.set('c1', new CriError('ERR_CRI_NOT_FOUND', 'ContainerStatus', 'gone'));
  await relist();
  assert.equal(reader.get('A')?.error, null);
  assert.deepEqual(reader.get('A')?.status.containers, []);
});

test('a list failure changes nothing, is counted, and the next relist catches up', async () => {
  const { runtime, reader, relist, reports, pleg } = setup();
  runtime.addSandbox('s1', 'A');
  await relist();
  const before = reader.globalTimestampMs();
  runtime.failNext.listContainers = [new CriError('ERR_CRI_UNAVAILABLE', 'ListContainers', 'down')];
  runtime.stopSandbox('s1');
  assert.deepEqual(await relist(), []);
  assert.equal(reports.at(-1)?.ok, false);
  assert.equal(reader.globalTimestampMs(), before);
  assert.equal(pleg.counters().relistErrorsTotal, 1);
  assert.deepEqual(await relist(), [['ContainerDied', 's1']]);
  assert.equal(reports.at(-1)?.intervalSeconds, 2, 'interval spans back to the last successful relist');
});

test('updateTime comes after every set of the relist', async () => {
  const calls: string[] = [];
  const { runtime, relist } = setup({
    cache: (w) => ({
      set: (uid, st, err, ts) => { calls.push(`set ${uid}`); return w.set(uid, st, err, ts); },
      delete: (uid) => { calls.push(`delete ${uid}`); w.delete(uid); },
      updateTime: (ts) => { calls.push('updateTime'); w.updateTime(ts); },
    }),
  });
  runtime.addSandbox('s1', 'A');
  runtime.addSandbox('s2', 'B');
  await relist();
  assert.deepEqual(calls, ['set A', 'set B', 'updateTime']);
  calls.length = 0;
  runtime.remove('s1');
  runtime.stopSandbox('s2');
  await relist();
  assert.deepEqual(calls, ['delete A', 'set B', 'updateTime']);
});

test('events beyond the unacknowledged capacity are counted as discarded and come again later', async () => {
  const { runtime, pleg, reports, clock } = setup({ eventCapacity: 2 });
  for (const p of ['A', 'B']) runtime.addSandbox(`s${p}`, p);
  runtime.addContainer('cA', 'sA', 'app');
  runtime.start('cA');
  runtime.addContainer('cB', 'sB', 'app');
  runtime.start('cB');
  clock.step(1000);
  await pleg.relist();
  assert.deepEqual(reports.at(-1)?.events.map((e) => e.data), ['cA', 'sA']);
  assert.equal(reports.at(-1)?.discarded, 2);
  clock.step(1000);
  await pleg.relist(); // nothing acknowledged yet: no room
  assert.deepEqual(reports.at(-1)?.events, []);
  assert.equal(pleg.counters().discardEventsTotal, 4);
  pleg.ackEvents(2);
  clock.step(1000);
  await pleg.relist();
  assert.deepEqual(reports.at(-1)?.events.map((e) => e.data), ['cB', 'sB']);
});

test('more runtime pods than the cache was sized for: it grows, every pod is stored and its events delivered', async () => {
  const { runtime, reader, relist, pleg } = setup({ eventCapacity: 10_000, cacheSize: { capacity: 4, maxCapacity: 64 } });
  for (let p = 0; p < 40; p++) {
    runtime.addSandbox(`s${p}`, `P${p}`);
    runtime.addContainer(`c${p}`, `s${p}`, 'app');
    runtime.start(`c${p}`);
  }
  const events = await relist();
  assert.equal(events.length, 80, 'ContainerStarted for every container and sandbox');
  for (let p = 0; p < 40; p++) assert.equal(reader.get(`P${p}`)?.status.containers[0]?.id, `c${p}`);
  assert.deepEqual({ capacity: reader.stats().capacity >= 40, full: reader.stats().fullTotal, unstored: reader.stats().unstored }, { capacity: true, full: 0, unstored: 0 });
  assert.equal(pleg.counters().cacheFullTotal, 0);
});

test('a cache full at its maximum: unstored pods read as unknown (ERR_CACHE_FULL), are logged once, and are stored once there is room', async () => {
  const clock = new FakeClock();
  const runtime = new FakeRuntime();
  const { reader, writer } = createPodCache({ capacity: 2, maxCapacity: 2 });
  const reports: RelistReport[] = [];
  const logged: string[] = [];
  const logger = { ...silentLogger, error: (msg: string) => logged.push(msg) };
  const pleg = new GenericPleg({ runtime, clock, cache: writer, cacheReader: reader, sink: (r) => reports.push(r), logger });
  const relist = async (): Promise<string[]> => {
    clock.step(1000);
    await pleg.relist();
    const r = reports.at(-1)!;
    pleg.ackEvents(r.events.length);
    return r.events.map((e) => `${e.id}:${e.type}`);
  };
  for (const p of ['A', 'B', 'C']) {
    runtime.addSandbox(`s${p}`, p);
    runtime.addContainer(`c${p}`, `s${p}`, 'app');
    runtime.start(`c${p}`);
  }
  const first = await relist();
  const stored = ['A', 'B', 'C'].filter((p) => reader.get(p) !== undefined);
  const missing = ['A', 'B', 'C'].find((p) => reader.get(p) === undefined)!;
  assert.equal(stored.length, 2);
  assert.equal(reader.stats().unstored, 1);
  assert.ok(!first.some((e) => e.startsWith(`${missing}:`)), 'no events for a pod without a status');
  // A pod worker asking for the missing pod's status gets "unknown", never "no sandbox".
  const e = await reader.getNewerThan(missing, clock.now() - 1);
  assert.equal(e.error?.code, 'ERR_CACHE_FULL');
  assert.deepEqual(await relist(), [], 'still full: nothing new');
  assert.equal(logged.filter((m) => m.includes('pod cache full')).length, 1, 'one log line while the count stays the same');
  // A stored pod leaves the runtime: its slot goes to the missing pod at the next relist.
  const gone = stored[0]!;
  runtime.remove(`c${gone}`);
  runtime.remove(`s${gone}`);
  const after = await relist();
  assert.ok(after.includes(`${missing}:ContainerStarted`), `the missing pod's events come now: ${after.join(', ')}`);
  assert.equal(reader.get(missing)?.error, null);
  assert.equal(reader.stats().unstored, 0);
  assert.equal(pleg.counters().cacheFullTotal, 2);
});

test('a set that loses to a newer entry still delivers events and rewrites the pod until it wins', async () => {
  const { runtime, reader, writer, relist, clock } = setup();
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('c1', 's1', 'app');
  runtime.start('c1');
  // A pod worker published a status stamped 1.5 s after the coming relist's timestamp.
  const workerTs = clock.now() + 2500;
  writer.set('A', { uid: 'A', name: 'pod-A', namespace: 'default', ips: [], sandboxes: [], containers: [] }, null, workerTs);
  assert.deepEqual(await relist(), [['ContainerStarted', 'c1'], ['ContainerStarted', 's1']]);
  assert.equal(reader.get('A')?.timestampMs, workerTs, 'newer entry kept');
  assert.deepEqual(await relist(), []);
  assert.equal(reader.get('A')?.timestampMs, workerTs, 'still older than the worker\'s');
  assert.deepEqual(await relist(), [], 'no events again, only the cache write');
  assert.equal(reader.get('A')?.timestampMs, clock.now());
  assert.deepEqual(reader.get('A')?.status.containers.map((c) => c.id), ['c1']);
});

test('start relists at once and then every period after the previous relist; close stops it', async () => {
  const { runtime, pleg, reports, clock } = setup();
  runtime.addSandbox('s1', 'A');
  pleg.start();
  assert.ok(await clock.runUntil(() => reports.length === 1, { stepMs: 10, maxMs: 50 }));
  assert.ok(await clock.runUntil(() => reports.length === 3, { stepMs: 100, maxMs: 2500 }));
  await pleg.close();
  const relists = pleg.counters().relistTotal;
  assert.equal(clock.pendingTimers, 0, 'no relist scheduled after close');
  // A timer firing would start a relist synchronously (relistTotal counts at its start).
  clock.step(10_000);
  assert.equal(pleg.counters().relistTotal, relists);
  await pleg.close(); // idempotent
});

test('an entry a pod worker published for a pod the runtime no longer has is dropped and resynced; newer entries are kept', async () => {
  const { reader, writer, relist, clock } = setup();
  const published = {
    uid: 'W', name: 'w', namespace: 'default', ips: [],
    sandboxes: [{ id: 'sw', state: 'SANDBOX_READY' as const, createdAtNs: '1', attempt: 0, ip: '', ips: [], hostNetwork: true }],
    containers: [],
  };
  writer.set('W', published, null, clock.now());
  assert.deepEqual(await relist(), [['PodSync', '']], 'the runtime never listed W: its worker-published entry is stale');
  assert.equal(reader.get('W'), undefined);
  // A worker publishing after the relist began (timestamp >= the relist's) is not overridden.
  writer.set('W', published, null, clock.now() + 1000);
  assert.deepEqual(await relist(), []);
  assert.ok(reader.get('W'));
});

test('each successful relist reports what it listed: pods with a ready sandbox and containers by state (kubelet_running_*)', async () => {
  const { runtime, relist, reports } = setup({ eventCapacity: 10_000 });
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('a1', 's1', 'app');
  runtime.start('a1');
  runtime.addContainer('a2', 's1', 'side');
  runtime.addSandbox('s2', 'B');
  runtime.addContainer('b1', 's2', 'app');
  runtime.start('b1');
  runtime.exit('b1', 0);
  runtime.stopSandbox('s2');
  runtime.addSandbox('s3', 'C'); // an orphan the agent never asked for counts too
  await relist();
  assert.deepEqual(reports.at(-1)?.runtimeCounts, { runningPods: 2, containers: { created: 1, running: 1, exited: 1, unknown: 0 } });
  runtime.start('a2');
  runtime.stopSandbox('s3');
  await relist();
  assert.deepEqual(reports.at(-1)?.runtimeCounts, { runningPods: 1, containers: { created: 0, running: 2, exited: 1, unknown: 0 } });
  runtime.failNext.listContainers = [new CriError('ERR_CRI_UNAVAILABLE', 'ListContainers', 'down')];
  await relist();
  assert.equal(reports.at(-1)?.ok, false);
  assert.equal(reports.at(-1)?.runtimeCounts, undefined, 'a failed relist reports no counts (the gauges keep their last values)');
});

test('runtime lost a container a worker published while the sandbox survived: reinspected and PodSync at the next relist', async () => {
  const { runtime, reader, writer, relist, clock } = setup();
  runtime.addSandbox('s1', 'A');
  assert.deepEqual(await relist(), [['ContainerStarted', 's1']]);
  // The pod worker created and started c1 and published it; the runtime then restarted
  // without it before any relist listed it. The PLEG's records see no change for A.
  const seen = reader.get('A');
  assert.ok(seen);
  const c1: RuntimeContainerStatus = {
    id: 'c1', podSandboxId: 's1', name: 'app', state: 'CONTAINER_RUNNING', createdAtNs: '5', startedAtNs: '6', finishedAtNs: '0',
    exitCode: 0, reason: '', message: '', image: 'i', imageRef: 'i', hash: '', restartCount: 0, attempt: 0,
  };
  writer.set('A', { ...seen.status, containers: [c1] }, null, clock.now() + 1);
  assert.deepEqual(await relist(), [['PodSync', '']]);
  assert.deepEqual(reader.get('A')?.status.containers, [], 'the entry shows what the runtime has');
  assert.deepEqual(await relist(), [], 'once');
});

test('a pod seen only by a failed inspection, then lost by the runtime, gets a PodSync', async () => {
  const { runtime, reader, relist } = setup();
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('c1', 's1', 'app');
  runtime.start('c1');
  runtime.failStatusOf.set('c1', new CriError('ERR_CRI_UNAVAILABLE', 'ContainerStatus', 'runtime going down'));
  assert.deepEqual(await relist(), []);
  assert.equal(reader.get('A')?.error?.code, 'ERR_CRI_UNAVAILABLE');
  runtime.failStatusOf.clear();
  runtime.remove('c1');
  runtime.remove('s1');
  assert.deepEqual(await relist(), [['PodSync', '']]);
  assert.equal(reader.get('A'), undefined);
});

test('a created, never started container is taken from its listing; once running it is inspected', async () => {
  const { runtime, reader, relist } = setup();
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('c1', 's1', 'app');
  assert.deepEqual(await relist(), [['ContainerStarted', 's1']], 'ContainerChanged (created) is not sent');
  assert.equal(runtime.calls.containerStatus, 0, 'no ContainerStatus for a created container');
  assert.deepEqual(reader.get('A')?.status.containers.map((c) => [c.id, c.state, c.startedAtNs, c.exitCode, c.image]), [['c1', 'CONTAINER_CREATED', '0', 0, 'busybox:1']]);
  runtime.start('c1');
  assert.deepEqual(await relist(), [], 'running, no worker entry: deferred one relist');
  assert.equal(runtime.calls.containerStatus, 0);
  assert.deepEqual(await relist(), [['ContainerStarted', 'c1']]);
  assert.equal(runtime.calls.containerStatus, 1, 'inspected once it runs');
  assert.notEqual(reader.get('A')?.status.containers[0]?.startedAtNs, '0');
});

test('a cache error on one pod skips that pod only: the relist completes, others get their events', async () => {
  const { runtime, relist, pleg } = setup({
    cache: (w) => ({
      ...w,
      delete: (uid: string) => {
        if (uid === 'B') throw new CacheError('ERR_CACHE_LOCK_STUCK', 'stuck');
        w.delete(uid);
      },
    }),
  });
  runtime.addSandbox('sb', 'B');
  assert.deepEqual(await relist(), [['ContainerStarted', 'sb']]);
  runtime.addSandbox('sa', 'A');
  assert.deepEqual(await relist(), [], 'sa deferred one relist (no worker entry)');
  runtime.remove('sb');
  assert.deepEqual(await relist(), [['ContainerStarted', 'sa']]);
  assert.equal(pleg.counters().podErrorsTotal, 1);
  assert.equal(pleg.counters().relistErrorsTotal, 0);
  assert.equal(pleg.healthy().healthy, true);
});

test('a replacement PLEG resyncs from the cache: matching entries get a PodSync without inspection; changed, erroneous or missing ones are inspected', async () => {
  const clock = new FakeClock();
  const runtime = new FakeRuntime();
  const { reader, writer } = createPodCache({ capacity: 64 });
  for (const p of ['A', 'B', 'C', 'D']) {
    runtime.addSandbox(`s${p}`, p);
    runtime.addContainer(`c${p}`, `s${p}`, 'app');
    runtime.start(`c${p}`);
  }
  // The PLEG that died: it wrote every pod (its events may or may not have been delivered).
  const dead = new GenericPleg({ runtime, clock, cache: writer, cacheReader: reader, sink: () => {} });
  clock.step(1000);
  await dead.relist();
  dead.destroy();
  // While no PLEG ran: B's container exited, C's entry was repaired into an error entry (its
  // writer died mid-write), D gained a container, E appeared.
  runtime.exit('cB', 1);
  writer.set('C', { ...reader.get('C')!.status }, { code: 'ERR_CACHE_WRITER_DIED', message: 'died' }, reader.get('C')!.timestampMs);
  runtime.addContainer('cD2', 'sD', 'sidecar');
  runtime.addSandbox('sE', 'E');

  const reports: RelistReport[] = [];
  const pleg = new GenericPleg({ runtime, clock, cache: writer, cacheReader: reader, sink: (r) => reports.push(r) });
  const inspectionsBefore = runtime.calls.podSandboxStatus + runtime.calls.containerStatus;
  clock.step(1000);
  await pleg.relist();
  const events = reports.at(-1)!.events.map((e) => `${e.id}:${e.type}:${e.data}`).sort();
  assert.deepEqual(events, [
    'A:PodSync:',
    'B:ContainerDied:cB',
    'B:ContainerStarted:sB',
    'C:ContainerStarted:cC',
    'C:ContainerStarted:sC',
    'D:ContainerStarted:cD',
    'D:ContainerStarted:sD',
    'E:ContainerStarted:sE',
  ], 'A from the cache; B, C, D, E inspected with their cold-start events');
  const inspections = runtime.calls.podSandboxStatus + runtime.calls.containerStatus - inspectionsBefore;
  // Objects whose entry names them in their listed state take their details from it (the dead
  // PLEG inspected them): B's exited container, C (error entry: 2), E. D's new container was
  // created and never started: its listing says all an inspection would (bulk-pod-status.ts).
  assert.equal(inspections, 4, 'cB, sC+cC and sE; none of A, nor sB, sD, cD, cD2');
  assert.equal(pleg.counters().inspectsFromPublishedTotal, 3, 'sB, sD and cD from their entries');
  assert.equal(reader.get('C')?.error, null, 'the error entry was rewritten');
  assert.equal(reader.get('B')?.status.containers[0]?.state, 'CONTAINER_EXITED');
  // From then on A is an ordinary record: its next change is an event.
  runtime.exit('cA', 0);
  clock.step(1000);
  pleg.ackEvents(reports.at(-1)!.events.length);
  await pleg.relist();
  assert.deepEqual(reports.at(-1)!.events.map((e) => `${e.id}:${e.type}:${e.data}`), ['A:ContainerDied:cA']);
});

test('objects a pod worker published in their listed state are not inspected; events still come; a changed state is inspected', async () => {
  const { runtime, reader, writer, relist, pleg, clock } = setup();
  assert.deepEqual(await relist(), [], 'past the first relist (a replacement PLEG resyncs from the cache there)');
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('c1', 's1', 'app');
  runtime.start('c1');
  // What the worker's derived post-sync status would say (workers/kuberuntime/post-sync-status.ts).
  const derived = { ...(await (async () => {
    const { getPodStatus } = await import('../../../workers/runtime-status/get-pod-status.js');
    return getPodStatus(runtime, 'A', 'a', 'default');
  })()) };
  const before = runtime.calls.podSandboxStatus + runtime.calls.containerStatus;
  writer.set('A', derived, null, clock.now() + 1);
  assert.deepEqual(await relist(), [['ContainerStarted', 'c1'], ['ContainerStarted', 's1']], 'the kubelet events, as for an inspected pod');
  assert.equal(runtime.calls.podSandboxStatus + runtime.calls.containerStatus, before, 'no PodSandboxStatus, no ContainerStatus');
  assert.equal(pleg.counters().inspectsFromPublishedTotal, 2);
  assert.deepEqual(reader.get('A')?.status.ips, ['10.1.0.2'], 'the IP from the published entry');

  // Published RUNNING, listed EXITED: the entry is out of date, the container is inspected.
  runtime.addContainer('c2', 's1', 'side');
  runtime.start('c2');
  const published = reader.get('A')!.status;
  writer.set('A', { ...published, containers: [...published.containers, { ...published.containers[0]!, id: 'c2', name: 'side' }] }, null, clock.now() + 1);
  runtime.exit('c2', 3);
  const calls = runtime.calls.containerStatus;
  assert.deepEqual(await relist(), [['ContainerDied', 'c2']]);
  assert.equal(runtime.calls.containerStatus, calls + 1);
  assert.equal(reader.get('A')?.status.containers.find((c) => c.id === 'c2')?.exitCode, 3);
});

test('a worker publishing mid-relist (its set wins) costs no reinspection when the next listing agrees; a disagreeing one is reinspected', async () => {
  const { runtime, reader, writer, relist, clock } = setup();
  assert.deepEqual(await relist(), [], 'past the first relist');
  const { getPodStatus } = await import('../../../workers/runtime-status/get-pod-status.js');
  // The burst race: the relist lists A's sandbox alone; while it inspects it, A's worker creates
  // and starts its container and publishes the pod's full status, stamped after the relist began.
  const inspect = runtime.podSandboxStatus.bind(runtime);
  let raced = false;
  runtime.podSandboxStatus = async (id: string) => {
    const res = await inspect(id);
    if (!raced) {
      raced = true;
      runtime.addContainer('c1', 's1', 'app');
      runtime.start('c1');
      writer.set('A', await getPodStatus(runtime, 'A', 'a', 'default'), null, clock.now() + 1);
    }
    return res;
  };
  runtime.addSandbox('s1', 'A');
  assert.deepEqual(await relist(), [], 's1 deferred one relist (no worker entry yet)');
  assert.ok(!raced);
  assert.deepEqual(await relist(), [['ContainerStarted', 's1']]);
  assert.ok(raced);
  assert.deepEqual(reader.get('A')?.status.containers.map((c) => c.id), ['c1'], 'the worker\'s newer entry stands');
  const calls = { ...runtime.calls };
  assert.deepEqual(await relist(), [['ContainerStarted', 'c1']]);
  assert.equal(runtime.calls.podSandboxStatus, calls.podSandboxStatus, 'no PodSandboxStatus: the entry agrees with this listing');
  assert.equal(runtime.calls.containerStatus, calls.containerStatus, 'no ContainerStatus: c1 taken from the entry');
  assert.deepEqual(await relist(), []);
  assert.equal(runtime.calls.podSandboxStatus + runtime.calls.containerStatus, calls.podSandboxStatus + calls.containerStatus);

  // Same race for pod B, but its container exits before the next relist: the entry (RUNNING)
  // disagrees with the listing (EXITED), so B is reinspected and the cache follows the runtime.
  raced = false;
  runtime.podSandboxStatus = async (id: string) => {
    const res = await inspect(id);
    if (!raced && id === 's2') {
      raced = true;
      runtime.addContainer('c2', 's2', 'app');
      runtime.start('c2');
      writer.set('B', await getPodStatus(runtime, 'B', 'b', 'default'), null, clock.now() + 1);
    }
    return res;
  };
  runtime.addSandbox('s2', 'B');
  await relist(); // deferred
  await relist(); // inspected: the race
  assert.ok(raced);
  runtime.exit('c2', 7);
  const before = { ...runtime.calls };
  assert.deepEqual(await relist(), [['ContainerDied', 'c2']]);
  assert.equal(runtime.calls.podSandboxStatus, before.podSandboxStatus + 1, 'B reinspected: its sandbox');
  assert.equal(runtime.calls.containerStatus, before.containerStatus + 1, 'and its container');
  assert.deepEqual(reader.get('B')?.status.containers.map((c) => [c.id, c.state, c.exitCode]), [['c2', 'CONTAINER_EXITED', 7]]);
});

test('an error entry or a pod marked for reinspection is inspected, not taken from its entry', async () => {
  const { runtime, writer, relist, clock } = setup();
  await relist();
  runtime.addSandbox('s1', 'A');
  const { getPodStatus } = await import('../../../workers/runtime-status/get-pod-status.js');
  const st = await getPodStatus(runtime, 'A', 'a', 'default');
  writer.set('A', st, { code: 'ERR_CACHE_WRITER_DIED', message: 'died' }, clock.now() + 1);
  const before = runtime.calls.podSandboxStatus;
  await relist();
  assert.equal(runtime.calls.podSandboxStatus, before + 1);
});

test('a sandbox READY or container RUNNING no worker entry names waits one relist for its worker\'s publish: then taken from it, no inspection', async () => {
  const { runtime, reader, writer, relist, pleg, clock } = setup();
  const { getPodStatus } = await import('../../../workers/runtime-status/get-pod-status.js');
  assert.deepEqual(await relist(), [], 'past the first relist (it defers nothing)');
  // The burst race: the runtime created and started A's objects; A's worker has the answers
  // but has not published yet.
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('c1', 's1', 'app');
  runtime.start('c1');
  const calls = { ...runtime.calls };
  assert.deepEqual(await relist(), [], 'deferred: no events');
  assert.equal(runtime.calls.podSandboxStatus + runtime.calls.containerStatus, calls.podSandboxStatus + calls.containerStatus, 'no inspection');
  assert.equal(reader.get('A'), undefined, 'nothing written for the pod');
  assert.equal(pleg.counters().inspectsDeferredTotal, 2, 'the sandbox and the container');
  assert.equal(reader.globalTimestampMs(), clock.now(), 'the relist itself completed');

  // The worker publishes (what workers/kuberuntime/post-sync-status.ts derives).
  const derived = await getPodStatus(runtime, 'A', 'a', 'default');
  const inspectedByWorker = { ...runtime.calls };
  writer.set('A', derived, null, clock.now() + 1);
  assert.deepEqual(await relist(), [['ContainerStarted', 'c1'], ['ContainerStarted', 's1']], 'the events, one relist later');
  assert.equal(runtime.calls.podSandboxStatus + runtime.calls.containerStatus, inspectedByWorker.podSandboxStatus + inspectedByWorker.containerStatus, 'taken from the entry');
  assert.equal(pleg.counters().inspectsFromPublishedTotal, 2);
  assert.deepEqual(reader.get('A')?.status.ips, ['10.1.0.2']);

  // The same pod restarts its container (a new RUNNING instance); the worker published only up to the sandbox.
  runtime.exit('c1', 1);
  assert.deepEqual(await relist(), [['ContainerDied', 'c1']], 'an exit is never deferred');
  runtime.addContainer('c2', 's1', 'app', { restartCount: 1 });
  runtime.start('c2');
  const before = runtime.calls.containerStatus;
  assert.deepEqual(await relist(), [], 'c2 deferred');
  writer.set('A', await getPodStatus(runtime, 'A', 'a', 'default'), null, clock.now() + 1);
  const published = runtime.calls.containerStatus;
  assert.deepEqual(await relist(), [['ContainerStarted', 'c2']]);
  assert.equal(runtime.calls.containerStatus, published, 'c2 from the entry');
  assert.ok(published > before);
});

test('an object its worker never publishes is inspected by the next relist: deferred once, never twice in a row', async () => {
  const { runtime, reader, relist, pleg } = setup();
  assert.deepEqual(await relist(), []);
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('c1', 's1', 'app');
  runtime.start('c1');
  assert.deepEqual(await relist(), [], 'deferred');
  assert.deepEqual(await relist(), [['ContainerStarted', 'c1'], ['ContainerStarted', 's1']], 'inspected: no worker published');
  assert.deepEqual({ sb: runtime.calls.podSandboxStatus, c: runtime.calls.containerStatus }, { sb: 1, c: 1 });
  assert.equal(pleg.counters().inspectsDeferredTotal, 2);
  assert.deepEqual(reader.get('A')?.status.containers.map((c) => c.state), ['CONTAINER_RUNNING']);
  assert.deepEqual(reader.get('A')?.status.ips, ['10.1.0.2']);

  // A container started and exited between relists is listed EXITED: inspected at once, with
  // its exit code (a crash is noticed by the relist that first sees it, as before).
  runtime.addContainer('c2', 's1', 'side');
  runtime.start('c2');
  runtime.exit('c2', 2);
  assert.deepEqual(await relist(), [['ContainerDied', 'c2']]);
  assert.equal(reader.get('A')?.status.containers.find((c) => c.id === 'c2')?.exitCode, 2);
  // A pod whose new sandbox is READY and whose other container exited: the pod waits as a whole.
  runtime.addSandbox('s2', 'B');
  runtime.addContainer('c3', 's2', 'app');
  runtime.start('c3');
  runtime.exit('c3', 0);
  assert.deepEqual(await relist(), [], 'B deferred (its sandbox), its exited container with it');
  assert.deepEqual(await relist(), [['ContainerDied', 'c3'], ['ContainerStarted', 's2']]);
  assert.equal(reader.get('B')?.status.containers[0]?.exitCode, 0);
});

test('a changed pod whose worker entry names exactly the listing is neither inspected nor rewritten: the entry stands, the events come, later changes build on it', async () => {
  const { runtime, reader, writer, relist, pleg, clock } = setup();
  const { getPodStatus } = await import('../../../workers/runtime-status/get-pod-status.js');
  assert.deepEqual(await relist(), []);
  runtime.addSandbox('s1', 'A');
  runtime.addContainer('c1', 's1', 'app');
  runtime.start('c1');
  const published = await getPodStatus(runtime, 'A', 'a', 'default');
  const calls = runtime.calls.podSandboxStatus + runtime.calls.containerStatus;
  const ts = clock.now() - 500; // published before the next relist's timestamp: a PLEG write would win
  writer.set('A', published, null, ts);
  assert.deepEqual(await relist(), [['ContainerStarted', 'c1'], ['ContainerStarted', 's1']]);
  assert.equal(runtime.calls.podSandboxStatus + runtime.calls.containerStatus, calls, 'no inspection');
  assert.equal(reader.get('A')?.timestampMs, ts, 'not rewritten: the worker\'s entry stands');
  assert.equal(reader.globalTimestampMs(), clock.now(), 'and the relist vouches for it');
  assert.equal(pleg.counters().inspectsFromPublishedTotal, 2);
  // The pod's next change is built on what the entry told: only the exited container is inspected.
  const before = { ...runtime.calls };
  runtime.exit('c1', 4);
  assert.deepEqual(await relist(), [['ContainerDied', 'c1']]);
  assert.equal(runtime.calls.podSandboxStatus, before.podSandboxStatus, 'no PodSandboxStatus');
  assert.equal(runtime.calls.containerStatus, before.containerStatus + 1, 'one ContainerStatus: the exit');
  assert.equal(reader.get('A')?.status.containers[0]?.exitCode, 4);
  assert.deepEqual(reader.get('A')?.status.ips, ['10.1.0.2'], 'the sandbox details remembered from the entry');
});
