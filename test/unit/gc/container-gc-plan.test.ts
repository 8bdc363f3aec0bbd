/**
 * The container GC's decisions (the kubelet's evictContainers / evictSandboxes): which dead
 * containers and sandboxes go, in which order, for each policy knob.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planContainerRemovals, planSandboxRemovals, type ContainerGcPolicy } from '../../../src/main/gc/container-gc-plan.js';
import { T0, ctr, sandbox } from './gc-fixtures.js';

const DEFAULT: ContainerGcPolicy = { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 };
const ids = (l: { id: string }[]): string[] => l.map((c) => c.id);

test('per container: the newest dead instance is kept, older ones go oldest first; running ones never count', () => {
  const list = [
    ctr('a3', 'p1', 'app', T0 + 3000), ctr('a1', 'p1', 'app', T0 + 1000), ctr('a2', 'p1', 'app', T0 + 2000),
    ctr('run', 'p1', 'app', T0 + 4000, 'CONTAINER_RUNNING'),
    ctr('s1', 'p1', 'side', T0 + 1500),
    ctr('b1', 'p2', 'app', T0 + 500), ctr('b2', 'p2', 'app', T0 + 600, 'CONTAINER_UNKNOWN'), ctr('b0', 'p2', 'app', T0 + 100, 'CONTAINER_CREATED'),
  ];
  const out = planContainerRemovals(list, DEFAULT, T0 + 10_000, undefined);
  assert.deepEqual(ids(out), ['a1', 'a2', 'b0', 'b1']);
  assert.equal(out.find((c) => c.id === 'b1')?.unknown, false);
  // Two kept per container.
  assert.deepEqual(ids(planContainerRemovals(list, { ...DEFAULT, maxPerPodContainer: 2 }, T0 + 10_000, undefined)), ['a1', 'b0']);
  // No per-container limit.
  assert.deepEqual(ids(planContainerRemovals(list, { ...DEFAULT, maxPerPodContainer: -1 }, T0 + 10_000, undefined)), []);
  // 0 keeps none.
  assert.deepEqual(ids(planContainerRemovals(list, { ...DEFAULT, maxPerPodContainer: 0 }, T0 + 10_000, undefined)).sort(), ['a1', 'a2', 'a3', 'b0', 'b1', 'b2', 's1']);
});

test('minimum TTL: containers created less than minAge ago are not evictable at all', () => {
  const list = [ctr('old1', 'p', 'c', T0), ctr('old2', 'p', 'c', T0 + 1000), ctr('young', 'p', 'c', T0 + 50_000)];
  // now = T0+60s, minAge 30s: "young" (10 s old) is invisible; of the two old ones the newer is kept.
  assert.deepEqual(ids(planContainerRemovals(list, { ...DEFAULT, minAgeMs: 30_000 }, T0 + 60_000, undefined)), ['old1']);
  // Exactly minAge old counts as evictable (the kubelet skips only createdAt after now-minAge).
  assert.deepEqual(ids(planContainerRemovals(list, { ...DEFAULT, minAgeMs: 10_000 }, T0 + 60_000, undefined)), ['old1', 'old2']);
});

test('gone pods lose every dead container once the sources are ready; not before', () => {
  const list = [ctr('g1', 'gone', 'c', T0), ctr('g2', 'gone', 'c', T0 + 1), ctr('k1', 'kept', 'c', T0), ctr('g3', 'gone', 'd', T0, 'CONTAINER_RUNNING')];
  const gone = (uid: string): boolean => uid === 'gone';
  assert.deepEqual(ids(planContainerRemovals(list, DEFAULT, T0 + 10, gone)).sort(), ['g1', 'g2']);
  assert.deepEqual(ids(planContainerRemovals(list, DEFAULT, T0 + 10, undefined)), ['g1'], 'sources not ready: only the per-container cap');
  assert.deepEqual(ids(planContainerRemovals(list, { ...DEFAULT, maxPerPodContainer: -1 }, T0 + 10, gone)).sort(), ['g1', 'g2'], 'gone pods go whatever the caps');
});

test('global cap: units cut to max(1, max/units), then the oldest across units until max remain', () => {
  // 3 units × 3 dead; no per-container limit; at most 4 on the node.
  const list: ReturnType<typeof ctr>[] = [];
  for (const [u, base] of [['u1', 0], ['u2', 10], ['u3', 20]] as const) for (let i = 0; i < 3; i++) list.push(ctr(`${u}-${i}`, u, 'c', T0 + base + i));
  const out = planContainerRemovals(list, { minAgeMs: 0, maxPerPodContainer: -1, maxContainers: 4 }, T0 + 100, undefined);
  // 4/3 → 1 per unit: each unit's two oldest go (6 removals); 3 remain ≤ 4.
  assert.deepEqual(ids(out), ['u1-0', 'u1-1', 'u2-0', 'u2-1', 'u3-0', 'u3-1']);
  // At most 2 with 3 units: 1 per unit (min 1), then the oldest of the three newest go until 2 remain.
  const out2 = planContainerRemovals(list, { minAgeMs: 0, maxPerPodContainer: -1, maxContainers: 2 }, T0 + 100, undefined);
  assert.deepEqual(ids(out2), ['u1-0', 'u1-1', 'u2-0', 'u2-1', 'u3-0', 'u3-1', 'u1-2']);
  // 0: everything dead goes.
  assert.equal(planContainerRemovals(list, { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: 0 }, T0 + 100, undefined).length, 9);
  // Under the cap: nothing beyond the per-container limit.
  assert.deepEqual(ids(planContainerRemovals(list, { minAgeMs: 0, maxPerPodContainer: -1, maxContainers: 9 }, T0 + 100, undefined)), []);
});

test('containers without the kubelet pod UID label are never planned', () => {
  const foreign = ctr('f1', 'x', 'c', T0);
  foreign.labels = {};
  assert.deepEqual(ids(planContainerRemovals([foreign, ctr('f0', 'x', 'c', T0 - 1)], { ...DEFAULT, maxPerPodContainer: 0 }, T0 + 10, () => true)), ['f0']);
});

test('sandboxes: inactive ones of gone pods go; existing pods keep their newest; ready or with containers never go', () => {
  const sbs = [
    sandbox('g-old', 'gone', T0), sandbox('g-new', 'gone', T0 + 10), sandbox('g-ready', 'gone', T0 + 20, 'SANDBOX_READY'),
    sandbox('e-old', 'live', T0), sandbox('e-mid', 'live', T0 + 5), sandbox('e-new', 'live', T0 + 10),
    sandbox('h-old', 'held', T0), sandbox('h-new', 'held', T0 + 10),
  ];
  const remaining = [{ podSandboxId: 'e-mid' }, { podSandboxId: 'h-old' }];
  const gone = (uid: string): boolean => uid === 'gone';
  assert.deepEqual(ids(planSandboxRemovals(sbs, remaining, gone)), ['g-old', 'g-new', 'e-old']);
  // Before the sources are ready every pod counts as existing: its newest stays.
  assert.deepEqual(ids(planSandboxRemovals(sbs, remaining, undefined)), ['g-old', 'g-new', 'e-old']);
  assert.deepEqual(ids(planSandboxRemovals([sandbox('only', 'live', T0)], [], () => false)), [], 'the newest dead sandbox of an existing pod stays');
  assert.deepEqual(ids(planSandboxRemovals([sandbox('only', 'gone', T0)], [], gone)), ['only']);
});
