/**
 * The API pod source (reflector state machine + store) feeding the real PodConfig merger:
 * list at RV 0, watch from the list's RV with bookmarks and a bounded random timeout, RV
 * tracking, 410 → relist at RV "" with no pod restarted (no ADD/REMOVE for unchanged pods),
 * connection errors → backoff 800 ms doubling to 30 s, nothing delivered while unreachable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { PodConfig } from '../../../src/main/config/pod-config.js';
import type { PodUpdate } from '../../../src/shared/manifest/pod-update.js';
import { ApiserverPodSource } from '../../../src/main/config/source-apiserver.js';
import type { ReflectorState } from '../../../src/main/apiserver/pod-reflector.js';
import { ApiError } from '../../../src/main/apiserver/api-errors.js';
import type { ConfigError } from '../../../src/shared/manifest/config-errors.js';
import { FakeListWatcher, apiPod, type WatchCall } from './fake-list-watcher.js';

/** A SET reached the merger (bounded wait). */
function setArrived(cfg: PodConfig, ms = 5_000): Promise<void> {
  const ac = new AbortController();
  const t = setTimeout(() => ac.abort(), ms);
  return cfg.waitReady(ac.signal).finally(() => clearTimeout(t));
}

function setup(random = 0.5, batchWindowMs = 0) {
  const clock = new FakeClock();
  const lw = new FakeListWatcher();
  const cfg = new PodConfig({ clock, logger: silentLogger });
  const states: ReflectorState[] = [];
  const stateWaiters: Array<{ s: ReflectorState; resolve: () => void }> = [];
  const errors: ConfigError[] = [];
  const src = new ApiserverPodSource({
    lw, nodeName: 'n1', sink: cfg.channel('api'), clock, random: () => random, logger: silentLogger, batchWindowMs,
    onError: (e) => errors.push(e),
    onState: (s) => {
      states.push(s);
      for (const w of stateWaiters.filter((x) => x.s === s)) w.resolve();
    },
  });
  const drain = (): PodUpdate[] => {
    const out: PodUpdate[] = [];
    for (let u = cfg.tryNext(); u; u = cfg.tryNext()) out.push(u);
    return out;
  };
  const untilState = (s: ReflectorState): Promise<void> =>
    src.reflectorState === s ? Promise.resolve() : new Promise((resolve) => stateWaiters.push({ s, resolve }));
  return { clock, lw, cfg, src, states, drain, untilState, errors };
}

const summary = (us: PodUpdate[]): string[] => us.map((u) => `${u.op}:${u.pods.map((p) => p.metadata?.name).join(',')}`);

test('first list at RV 0 → one SET (sources ready), then a watch from the list RV with bookmarks and a 5–10 min timeout', async () => {
  const { lw, cfg, src, drain } = setup(0.25);
  src.start();
  assert.equal(cfg.sourcesReady(), false);
  const list = await lw.nextList();
  assert.equal(list.rv, '0');
  list.respond({ items: [apiPod('a', 'u-a', '10'), apiPod('b', 'u-b', '11')], resourceVersion: '12' });
  const watch = await lw.nextWatch();
  assert.equal(watch.rv, '12');
  assert.equal(watch.timeoutSeconds, 375, 'random 0.25 → 300 + 75 s');
  assert.equal(cfg.sourcesReady(), true);
  const ups = drain();
  assert.deepEqual(summary(ups), ['ADD:a,b']);
  const a = ups[0]!.pods[0]!;
  assert.equal(a.metadata?.uid, 'u-a', 'API pods keep their UID');
  assert.equal(a.metadata?.name, 'a', 'and their name');
  assert.equal(a.metadata?.annotations?.['team'], 'a', 'and their annotations');
  assert.equal(a.metadata?.annotations?.['kubernetes.io/config.source'], 'api');
  await src.close();
});

test('an empty first list still makes the source ready', async () => {
  const { lw, cfg, src } = setup();
  src.start();
  (await lw.nextList()).respond({ items: [], resourceVersion: '5' });
  await lw.nextWatch();
  assert.equal(cfg.sourcesReady(), true);
  await src.close();
});

test('watch events: ADDED / MODIFIED (deletionTimestamp → DELETE) / DELETED → REMOVE; bookmarks move the RV; a timeout rewatches from the newest RV', async () => {
  const { lw, src, drain, cfg } = setup();
  src.start();
  (await lw.nextList()).respond({ items: [apiPod('a', 'u-a', '10')], resourceVersion: '10' });
  let w = await lw.nextWatch();
  drain();
  w.emit({ type: 'ADDED', object: apiPod('b', 'u-b', '20') });
  w.emit({ type: 'MODIFIED', object: apiPod('a', 'u-a', '21', 'n1', { deletionTimestamp: '2026-11-21T10:05:00Z' }) });
  w.emit({ type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '30' } } });
  // Delivered together: one SET for the three events.
  await setArrived(cfg);
  assert.deepEqual(summary(drain()), ['ADD:b', 'DELETE:a']);
  w.emit({ type: 'DELETED', object: apiPod('a', 'u-a', '31') });
  await setArrived(cfg);
  assert.deepEqual(summary(drain()), ['REMOVE:a']);
  w.end();
  w = await lw.nextWatch();
  assert.equal(w.rv, '31', 'resumes from the newest RV seen');
  await src.close();
  assert.equal(w.aborted, true, 'close aborts the watch in flight');
});

test('410 Gone (ERROR event or answer) → relist at RV "" without restarting unchanged pods', async () => {
  const { lw, src, drain, states } = setup();
  src.start();
  const items = [apiPod('a', 'u-a', '10'), apiPod('b', 'u-b', '11')];
  (await lw.nextList()).respond({ items, resourceVersion: '11' });
  let w = await lw.nextWatch();
  drain();
  w.emit({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version' } });
  const relist = await lw.nextList();
  assert.equal(relist.rv, '', 'relist is a quorum read');
  // Same pods (fresh objects, same RVs) plus one that changed only in status, minus one deleted meanwhile.
  relist.respond({ items: [apiPod('a', 'u-a', '10'), apiPod('c', 'u-c', '40')], resourceVersion: '41' });
  w = await lw.nextWatch();
  assert.equal(w.rv, '41');
  assert.deepEqual(summary(drain()), ['REMOVE:b', 'ADD:c'], 'a is neither removed nor re-added');
  // The same through a 410 answer instead of an event.
  w.end({ kind: 'status', status: 410 });
  (await lw.nextList()).respond({ items: [apiPod('a', 'u-a', '10'), apiPod('c', 'u-c', '40')], resourceVersion: '42' });
  await lw.nextWatch();
  assert.deepEqual(drain(), []);
  assert.ok(!states.includes('backoff'), '410 is not a failure');
  await src.close();
});

test('connection errors back off 800 ms doubling to 30 s; nothing is delivered meanwhile; success resets the backoff', async () => {
  const { clock, lw, src, drain, untilState } = setup();
  src.start();
  (await lw.nextList()).respond({ items: [apiPod('a', 'u-a', '10')], resourceVersion: '10' });
  let first: WatchCall | undefined = await lw.nextWatch();
  drain();
  const delays: number[] = [];
  for (let i = 0; i < 8; i++) {
    const w = first ?? (await lw.nextWatch());
    first = undefined;
    const backoff = untilState('backoff');
    w.fail(new ApiError('ERR_API_UNREACHABLE', 'connect ECONNREFUSED'));
    await backoff;
    const due = clock.nextTimerAt()! - clock.now();
    delays.push(due);
    clock.step(due - 1);
    assert.equal(src.reflectorState, 'backoff', 'still waiting 1 ms before the deadline');
    clock.step(1);
  }
  assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  assert.deepEqual(drain(), [], 'no SET while unreachable: pods are kept');
  const w = await lw.nextWatch();
  w.emit({ type: 'ADDED', object: apiPod('b', 'u-b', '50') });
  const backoff = untilState('backoff');
  w.fail(new ApiError('ERR_API_UNREACHABLE', 'reset'));
  await backoff;
  assert.equal(clock.nextTimerAt()! - clock.now(), 800, 'a watch that delivered resets the backoff');
  await src.close();
});

test('a failed first list backs off and retries at RV 0; a watch that ends at once without events backs off', async () => {
  const { clock, lw, src, untilState } = setup();
  src.start();
  const b1 = untilState('backoff');
  (await lw.nextList()).fail(new ApiError('ERR_API_SERVER', '503'));
  await b1;
  clock.step(800);
  const l2 = await lw.nextList();
  assert.equal(l2.rv, '0');
  l2.respond({ items: [], resourceVersion: '3' });
  const w = await lw.nextWatch();
  const b2 = untilState('backoff');
  w.end(); // closed at once, nothing delivered
  await b2;
  await src.close();
});

test('an invalid API pod is reported with its field and left out; an earlier valid version is kept', async () => {
  const { lw, src, drain, errors, cfg } = setup();
  src.start();
  const bad = apiPod('bad', 'u-bad', '10');
  (bad['spec'] as { containers: unknown[] }).containers = [{ name: 'c' }];
  (await lw.nextList()).respond({ items: [apiPod('a', 'u-a', '9'), bad, apiPod('other', 'u-o', '8', 'another-node')], resourceVersion: '10' });
  const w = await lw.nextWatch();
  assert.deepEqual(summary(drain()), ['ADD:a']);
  assert.equal(errors.length, 2);
  assert.match(errors[0]!.message, /spec\.containers\[0\]\.image: Required value/);
  assert.match(errors[1]!.message, /spec\.nodeName/);
  const badA = apiPod('a', 'u-a', '11');
  (badA['spec'] as { containers: unknown[] }).containers = [{ name: 'c', image: 'busybox', ports: [{ containerPort: 70000 }] }];
  w.emit({ type: 'MODIFIED', object: badA });
  w.emit({ type: 'ADDED', object: apiPod('z', 'u-z', '12') });
  await setArrived(cfg);
  assert.deepEqual(summary(drain()), ['ADD:z'], 'the valid version of a stays (no UPDATE, no REMOVE)');
  assert.match(errors[2]!.message, /spec\.containers\[0\]\.ports\[0\]\.containerPort/);
  await src.close();
});

test('watch events within the 50 ms batch window make one SET: a burst of events one by one is not a full merge per event', async () => {
  const clock = new FakeClock();
  const lw = new FakeListWatcher();
  const sets: string[][] = [];
  const src = new ApiserverPodSource({
    lw, nodeName: 'n1', clock, random: () => 0.5, logger: silentLogger,
    sink: { set: (pods) => sets.push(pods.map((p) => p.metadata?.name ?? '').sort()) },
  });
  src.start();
  (await lw.nextList()).respond({ items: [], resourceVersion: '1' });
  const w = await lw.nextWatch();
  assert.deepEqual(sets, [[]], 'the list publishes at once');
  // 100 pods arrive one by one, 10 ms apart (each its own read from the socket).
  for (let i = 0; i < 100; i++) {
    w.emit({ type: 'ADDED', object: apiPod(`p${i}`, `u-${i}`, String(10 + i)) });
    await Promise.resolve();
    clock.step(10);
  }
  clock.step(50);
  assert.equal(sets.length - 1, 20, `one SET per 50 ms window, not one per event (${sets.length - 1} SETs)`);
  assert.equal(sets.at(-1)!.length, 100, 'the last SET holds every pod');
  // A lone event is published within the window, not later.
  w.emit({ type: 'DELETED', object: apiPod('p0', 'u-0', '200') });
  clock.step(49);
  assert.equal(sets.at(-1)!.length, 100);
  clock.step(1);
  assert.equal(sets.at(-1)!.length, 99);
  await src.close();
  w.emit({ type: 'DELETED', object: apiPod('p1', 'u-1', '201') });
  clock.step(100);
  assert.equal(sets.at(-1)!.length, 99, 'a closed source publishes nothing');
});
