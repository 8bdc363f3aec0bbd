/**
 * GenericPleg's quiet relist (generic-pleg.ts #quiet) over the product's own pieces: the
 * CriClient (whose list memo returns the same object for an unchanged item) against the
 * in-process simulated runtime, and the shared pod cache with a pod worker's writer attached
 * separately (another thread's writes, as in the agent).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { KubernetesPodNameLabel, KubernetesPodNamespaceLabel, KubernetesPodUIDLabel } from '../../../src/shared/kubetypes/kubelet-labels.js';
import { attachPodCache, createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import type { RuntimePodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { GenericPleg, type RelistReport } from '../../../workers/pleg/generic-pleg.js';
import { startHarness, runPod } from '../simruntime/sim-harness.js';

async function setup() {
  const h = await startHarness({});
  const clock = new FakeClock();
  const cache = createPodCache({ capacity: 16 });
  const worker = attachPodCache(cache.buffer); // a pod worker thread's view: its writes are foreign to the PLEG
  const reports: RelistReport[] = [];
  const pleg = new GenericPleg({ runtime: h.client, clock, cache: cache.writer, cacheReader: cache.reader, sink: (r) => reports.push(r) });
  const relist = async (): Promise<string[]> => {
    clock.step(1000);
    await pleg.relist();
    const r = reports.at(-1)!;
    assert.ok(r.ok);
    pleg.ackEvents(r.events.length);
    return r.events.map((e) => `${e.type}:${e.data}`);
  };
  const start = async (name: string) => {
    const uid = `uid-${name}`;
    const labels = { [KubernetesPodUIDLabel]: uid, [KubernetesPodNameLabel]: name, [KubernetesPodNamespaceLabel]: 'default' };
    const ids = await runPod(h, ['sleep', '1000'], { labels: { ...labels, 'io.kubernetes.container.name': 'app' } }, { name, labels });
    return { uid, ...ids };
  };
  return { h, clock, cache, worker, pleg, reports, relist, start };
}

test('an idle runtime and cache make a relist quiet: only the global time moves; any runtime change or foreign cache write makes the next one full', async () => {
  const { h, clock, cache, worker, pleg, reports, relist, start } = await setup();
  try {
    const a = await start('a');
    assert.deepEqual((await relist()).sort(), [`ContainerStarted:${a.containerId}`, `ContainerStarted:${a.sandboxId}`].sort(), 'the first relist inspects (never quiet, never deferred)');
    assert.deepEqual(await relist(), []);
    assert.equal(pleg.counters().quietRelistsTotal, 0, 'the first relist does not settle');
    const entryTs = cache.reader.get(a.uid)!.timestampMs;

    assert.deepEqual(await relist(), []);
    assert.equal(pleg.counters().quietRelistsTotal, 1, 'nothing changed since a settled relist');
    assert.equal(cache.reader.globalTimestampMs(), clock.now(), 'a quiet relist still moves the global timestamp');
    assert.equal(cache.reader.get(a.uid)!.timestampMs, entryTs, 'and writes no entry');
    assert.deepEqual(reports.at(-1)!.runtimeCounts, { runningPods: 1, containers: { created: 0, running: 1, exited: 0, unknown: 0 } }, 'the runtime counts of the settled listing');
    assert.deepEqual(await relist(), []);
    assert.equal(pleg.counters().quietRelistsTotal, 2);

    // A pod worker publishes an entry naming a container the runtime does not have (it lost it):
    // the runtime's answers are the same, but the cache moved, so the relist is full and sees it.
    const published = cache.reader.get(a.uid)!.status;
    worker.writer.set(a.uid, { ...published, containers: [...published.containers, { ...published.containers[0]!, id: 'lost-by-the-runtime' }] }, null, clock.now());
    assert.deepEqual(await relist(), ['PodSync:'], 'objects in the cache gone from the runtime: reinspected and synced');
    assert.equal(pleg.counters().quietRelistsTotal, 2);
    assert.deepEqual(cache.reader.get(a.uid)!.status.containers.map((c) => c.id), [a.containerId]);

    // That relist settled: its own writes do not keep the next one from being quiet.
    assert.deepEqual(await relist(), []);
    assert.equal(pleg.counters().quietRelistsTotal, 3);

    // The runtime changes (an exit): full relist, the event, the exit code.
    await h.client.stopContainer(a.containerId, 0);
    assert.deepEqual(await relist(), [`ContainerDied:${a.containerId}`]);
    assert.equal(cache.reader.get(a.uid)!.status.containers[0]!.state, 'CONTAINER_EXITED');
    assert.equal(pleg.counters().quietRelistsTotal, 3);

    // A worker publishes a pod the runtime has no objects for (the runtime restarted empty under it).
    assert.deepEqual(await relist(), []);
    assert.equal(pleg.counters().quietRelistsTotal, 4);
    worker.writer.set('uid-ghost', { ...published, uid: 'uid-ghost', name: 'ghost' }, null, clock.now());
    assert.deepEqual(await relist(), ['PodSync:'], 'the sweep runs: the entry is dropped and a resync asked for');
    assert.equal(cache.reader.get('uid-ghost'), undefined);
    assert.equal(pleg.counters().quietRelistsTotal, 4);
  } finally {
    await h.close();
  }
});

test('a relist that left work pending (a deferred pod) is not followed by a quiet one', async () => {
  const { h, pleg, relist, start } = await setup();
  try {
    await relist(); // the first relist
    await relist();
    assert.deepEqual(await relist(), []);
    assert.equal(pleg.counters().quietRelistsTotal, 1);
    const b = await start('b');
    assert.deepEqual(await relist(), [], 'b deferred: its worker may publish it');
    assert.equal(pleg.counters().inspectsDeferredTotal, 2);
    assert.deepEqual((await relist()).sort(), [`ContainerStarted:${b.containerId}`, `ContainerStarted:${b.sandboxId}`].sort(), 'same listing, yet a full relist: b inspected');
    assert.equal(pleg.counters().quietRelistsTotal, 1);
    assert.deepEqual(await relist(), []);
    assert.equal(pleg.counters().quietRelistsTotal, 2);
  } finally {
    await h.close();
  }
});

test('a swept entry whose resync does not fit the event capacity stays and is swept again once there is room', async () => {
  const h = await startHarness({});
  try {
    const clock = new FakeClock();
    const cache = createPodCache({ capacity: 16 });
    const worker = attachPodCache(cache.buffer);
    const reports: RelistReport[] = [];
    const pleg = new GenericPleg({ runtime: h.client, clock, cache: cache.writer, cacheReader: cache.reader, sink: (r) => reports.push(r), eventCapacity: 1 });
    const relist = async (ack: boolean): Promise<RelistReport> => {
      clock.step(1000);
      await pleg.relist();
      const r = reports.at(-1)!;
      assert.ok(r.ok);
      if (ack) pleg.ackEvents(r.events.length);
      return r;
    };
    await relist(true);
    // Pods a worker published whose objects the runtime does not have (it restarted empty).
    const ghost = (name: string): RuntimePodStatus => ({ uid: `uid-${name}`, name, namespace: 'default', ips: [], sandboxes: [{ id: `sb-${name}`, state: 'SANDBOX_READY', createdAtNs: '1', attempt: 0, ip: '', ips: [], hostNetwork: true }], containers: [] });
    worker.writer.set('uid-g1', ghost('g1'), null, clock.now());
    worker.writer.set('uid-g2', ghost('g2'), null, clock.now());
    const first = await relist(false);
    assert.equal(first.events.length, 1, 'one resync fits');
    assert.equal(first.discarded, 1, 'the other is counted as discarded');
    const kept = ['uid-g1', 'uid-g2'].filter((u) => cache.reader.get(u) !== undefined);
    assert.equal(kept.length, 1, 'the entry whose resync did not fit is kept');
    const none = await relist(false);
    assert.deepEqual(none.events, [], 'still no room (nothing acked)');
    assert.ok(cache.reader.get(kept[0]!) !== undefined, 'kept while there is no room');
    pleg.ackEvents(1);
    const second = await relist(true);
    assert.deepEqual(second.events.map((e) => `${e.type}:${e.id}`), [`PodSync:${kept[0]}`], 'swept again once there is room: its resync is asked for');
    assert.equal(cache.reader.get(kept[0]!), undefined);
  } finally {
    await h.close();
  }
});
