import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { podStartSLISeconds } from '../../../src/main/status/status-manager.js';
import { ConfigFirstSeenAnnotationKey } from '../../../src/shared/kubetypes/kubelet-labels.js';

const T0 = Date.UTC(2026, 0, 1);
const at = (s: number): Date => new Date(T0 + s * 1000);
const created = (s: number): V1Pod => ({ metadata: { name: 'p', creationTimestamp: at(s) }, spec: { containers: [{ name: 'a' }] } });
const initRan = (...runs: Array<[number, number]>): V1PodStatus => ({
  initContainerStatuses: runs.map(([s, e], i) => ({
    name: `i${i}`, image: 'x', imageID: '', ready: false, restartCount: 0,
    state: { terminated: { exitCode: 0, startedAt: at(s), finishedAt: at(e) } },
  })),
});

test('SLI: creation → now without anything to exclude', () => {
  assert.equal(podStartSLISeconds(created(0), {}, undefined, T0 + 7_500), 7.5);
});

test('SLI: a finished pull window is excluded; an unfinished one (pull still failing) is not', () => {
  assert.equal(podStartSLISeconds(created(0), {}, { firstStartedMs: T0 + 1_000, lastFinishedMs: T0 + 4_000 }, T0 + 10_000), 7);
  assert.equal(podStartSLISeconds(created(0), {}, { firstStartedMs: T0 + 1_000 }, T0 + 10_000), 10);
});

test('SLI: init container runs are excluded as one window from the first start to the last finish', () => {
  assert.equal(podStartSLISeconds(created(0), initRan([1, 2], [3, 5]), undefined, T0 + 10_000), 6);
});

test('SLI: overlapping pull and init windows are excluded once (their union)', () => {
  // Pulls 1→6 (the second init container's image pulled after the first ran), init 2→8: union 1→8.
  assert.equal(podStartSLISeconds(created(0), initRan([2, 4], [7, 8]), { firstStartedMs: T0 + 1_000, lastFinishedMs: T0 + 6_000 }, T0 + 10_000), 3);
  // Disjoint: pull 1→2, init 5→6: 2 s excluded.
  assert.equal(podStartSLISeconds(created(0), initRan([5, 6]), { firstStartedMs: T0 + 1_000, lastFinishedMs: T0 + 2_000 }, T0 + 10_000), 8);
});

test('SLI: without creationTimestamp the first-seen annotation is the start; without either there is none', () => {
  const fromFile: V1Pod = { metadata: { name: 'p', annotations: { [ConfigFirstSeenAnnotationKey]: new Date(T0 + 2_000).toISOString() } } };
  assert.equal(podStartSLISeconds(fromFile, {}, undefined, T0 + 5_000), 3);
  assert.equal(podStartSLISeconds({ metadata: { name: 'p' } }, {}, undefined, T0 + 5_000), undefined);
});

test('SLI: never negative (a clock step backwards)', () => {
  assert.equal(podStartSLISeconds(created(10), {}, undefined, T0 + 5_000), 0);
});
