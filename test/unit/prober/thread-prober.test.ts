/**
 * The prober as a pod-worker thread wires it (createThreadProber, used by
 * workers/pod-worker-factory.ts) against a real metrics arena read back through the main
 * thread's aggregator: probe runs show up as prober_probe_* series, and a pod's series leave
 * the exposition when its probe workers stop (pod terminating or removed), so they do not pile
 * up with churn. Synchronised on probe completions (the metrics hook), never on turns.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { createMetricsSystem } from '../../../src/main/metrics/main-metrics.js';
import { createWorkerMetrics, type ProbeObservation } from '../../../workers/metrics/worker-metrics.js';
import { createThreadProber } from '../../../workers/prober/thread-prober.js';
import { sample } from '../metrics/exposition-parse.js';
import { FakeExecRuntime } from './fake-exec-runtime.js';
import { execProbe, makePod, makeStatus } from './prober-fixtures.js';

function setup() {
  const clock = new FakeClock();
  const rt = new FakeExecRuntime(clock);
  const system = createMetricsSystem({ processMetrics: false, eventLoopDelay: false, arena: { slots: 2 } });
  const wm = createWorkerMetrics({ arena: system.arena, threadId: 7 });
  const seen: ProbeObservation[] = [];
  let waiting: { n: number; resolve: () => void } | undefined;
  const metrics = {
    probe(p: ProbeObservation): void {
      wm.probe(p);
      seen.push(p);
      if (waiting && seen.length >= waiting.n) waiting.resolve();
    },
    removeProbeSeries: wm.removeProbeSeries,
  };
  const prober = createThreadProber({ runtime: rt, clock, random: () => 0, onUpdate: () => {}, metrics });
  /** Resolves once `n` probe runs completed in total (bounded: 5 s of real time). */
  const probesDone = async (n: number): Promise<void> => {
    if (seen.length >= n) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        waiting = { n, resolve };
        timer = setTimeout(() => reject(new Error(`${seen.length} of ${n} probe runs completed within 5 s`)), 5_000);
      });
    } finally {
      clearTimeout(timer);
      waiting = undefined;
    }
  };
  const series = async (pod: string): Promise<number> => {
    const text = await system.aggregator.collect();
    return text.split('\n').filter((l) => l.startsWith('prober_probe_') && l.includes(`pod="${pod}"`)).length;
  };
  return { clock, prober, system, probesDone, series, seen, sampleOf: async (labels: Record<string, string>) => sample(await system.aggregator.collect(), 'prober_probe_total', labels) };
}

test('a pod\'s prober series exist while it is probed and leave when it terminates or is removed', async (t) => {
  const { clock, prober, system, probesDone, series, sampleOf } = setup();
  t.after(() => {
    prober.close();
    system.close();
  });
  const t0 = clock.now();
  for (const uid of ['p1', 'p2']) {
    prober.addPod(makePod(uid, [{ name: 'app', livenessProbe: execProbe({ periodSeconds: 10 }), readinessProbe: execProbe({ periodSeconds: 10 }) }]));
    prober.updatePodStatus(uid, makeStatus(uid, [{ name: 'app', id: `c-${uid}`, startedAtMs: t0 }]));
  }
  clock.step(0); // the first ticks (random 0: at offset 0) and the readiness triggered at start
  await probesDone(4);
  assert.equal(await sampleOf({ probe_type: 'Liveness', result: 'successful', container: 'app', pod: 'pod-p1', namespace: 'default', pod_uid: 'p1' }), 1);
  assert.ok((await sampleOf({ probe_type: 'Readiness', result: 'successful', container: 'app', pod: 'pod-p2', namespace: 'default', pod_uid: 'p2' }) ?? 0) >= 1);
  assert.ok(await series('pod-p1') > 0 && await series('pod-p2') > 0);

  // p1 starts terminating (its update carries a deletionTimestamp): every worker stops, its series go.
  const terminating = makePod('p1', []);
  terminating.metadata = { ...terminating.metadata, deletionTimestamp: new Date(clock.now()) };
  prober.addPod(terminating);
  assert.equal(await series('pod-p1'), 0, 'a terminating pod keeps no prober series');
  assert.ok(await series('pod-p2') > 0, 'other pods keep theirs');
  prober.removePod('p2');
  assert.equal(await series('pod-p2'), 0, 'a removed pod keeps no prober series');
});

test('churn: 300 pods probed and removed in turn leave no prober series behind and none is dropped', async (t) => {
  const { clock, prober, system, probesDone, series, seen } = setup();
  t.after(() => {
    prober.close();
    system.close();
  });
  for (let i = 0; i < 300; i++) {
    const uid = `churn-${i}`;
    prober.addPod(makePod(uid, [{ name: 'app', livenessProbe: execProbe({ periodSeconds: 10 }) }]));
    prober.updatePodStatus(uid, makeStatus(uid, [{ name: 'app', id: `c-${uid}`, startedAtMs: clock.now() }]));
    clock.step(0);
    await probesDone(seen.length + 1);
    prober.removePod(uid);
  }
  const text = await system.aggregator.collect();
  assert.equal(text.split('\n').filter((l) => l.startsWith('prober_probe_') && !l.startsWith('#')).length, 0, 'no series left');
  assert.equal(sample(text, 'shardlet_metrics_series_dropped_total') ?? 0, 0);
  assert.equal(await series('pod-churn-299'), 0);
});
