/**
 * The eviction manager over a summary the test sets, on a fake clock: the kubelet's ranking order
 * for memory and disk, one eviction per pass with the kubelet's status and message, node-level
 * reclaim first for disk, soft thresholds after their grace period, conditions that stay for the
 * transition period then recover, admission under pressure, and pod/container ephemeral-storage
 * limits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { EvictionManager, type EvictionManagerDeps } from '../../../src/main/eviction/eviction-manager.js';
import { parseThresholdConfig } from '../../../src/main/eviction/eviction-thresholds.js';
import { rankDiskPressure, rankMemoryPressure } from '../../../src/main/eviction/eviction-ranking.js';
import type { PodSummary, Summary } from '../../../src/main/server/stats-summary.js';

const Mi = 1024 * 1024;
const Gi = 1024 * Mi;
const T0 = Date.parse('2026-11-27T00:00:00Z');

interface PodSpec {
  name: string;
  priority?: number;
  /** per container: memory request (bytes as text) */
  req?: string;
  lim?: string;
  eph?: { request?: string; limit?: string };
  critical?: boolean;
  grace?: number;
}

function pod(p: PodSpec): V1Pod {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  if (p.req) requests['memory'] = p.req;
  if (p.lim) limits['memory'] = p.lim;
  if (p.eph?.request) requests['ephemeral-storage'] = p.eph.request;
  if (p.eph?.limit) limits['ephemeral-storage'] = p.eph.limit;
  return {
    metadata: { name: p.name, namespace: 'default', uid: `uid-${p.name}`, annotations: p.critical ? { 'kubernetes.io/config.source': 'file' } : { 'kubernetes.io/config.source': 'api' } },
    spec: {
      containers: [{ name: 'app', image: 'busybox', resources: { requests, limits } }],
      ...(p.priority !== undefined ? { priority: p.priority } : {}),
      ...(p.grace !== undefined ? { terminationGracePeriodSeconds: p.grace } : {}),
    },
  };
}

interface Usage {
  ws?: number;
  rootfs?: number;
  logs?: number;
}

function podStats(name: string, u: Usage): PodSummary {
  const time = new Date(T0).toISOString();
  return {
    podRef: { name, namespace: 'default', uid: `uid-${name}` },
    startTime: time,
    containers: [{ name: 'app', startTime: time, memory: { time, workingSetBytes: u.ws ?? 0 }, rootfs: { time, usedBytes: u.rootfs ?? 0, inodesUsed: 1 }, logs: { time, usedBytes: u.logs ?? 0, inodesUsed: 1 } }],
    memory: { time, workingSetBytes: u.ws ?? 0 },
    'ephemeral-storage': { time, usedBytes: (u.rootfs ?? 0) + (u.logs ?? 0) },
  };
}

class World {
  readonly clock = new FakeClock(T0);
  memAvailable = 8 * Gi;
  memWs = 8 * Gi;
  fsAvailable = 50 * Gi;
  fsCapacity = 100 * Gi;
  pods: V1Pod[] = [];
  usage = new Map<string, Usage>();
  evicted: { name: string; grace: number; reason: string; message: string }[] = [];
  events: string[] = [];
  reclaims = 0;
  reclaimFrees = 0;

  summary(): Summary {
    // Every read is a fresh measurement: a newer timestamp.
    const time = new Date(this.clock.now()).toISOString();
    return {
      node: {
        nodeName: 'n', startTime: time, cpu: { time }, memory: { time, availableBytes: this.memAvailable, workingSetBytes: this.memWs }, systemContainers: [],
        fs: { time, availableBytes: this.fsAvailable, capacityBytes: this.fsCapacity, inodes: 1000, inodesFree: 900 },
        runtime: { imageFs: { time, availableBytes: this.fsAvailable, capacityBytes: this.fsCapacity }, containerFs: { time } },
      },
      pods: this.pods.map((p) => podStats(p.metadata!.name!, this.usage.get(p.metadata!.name!) ?? {})),
    };
  }

  manager(thresholds: EvictionManagerDeps['thresholds'], extra: Partial<EvictionManagerDeps> = {}): EvictionManager {
    return new EvictionManager({
      clock: this.clock, logger: silentLogger, thresholds, pressureTransitionPeriodMs: 300_000, maxPodGracePeriodSeconds: 30,
      summary: async () => this.summary(),
      activePods: () => this.pods.filter((p) => !this.evicted.some((e) => e.name === p.metadata!.name)),
      evict: (p, grace, status) => this.evicted.push({ name: p.metadata!.name!, grace, ...status }),
      podEvent: (p, reason, message) => this.events.push(`${p.metadata!.name}:${reason}:${message}`),
      nodeEvent: (reason, message) => this.events.push(`node:${reason}:${message}`),
      reclaimDisk: async () => {
        this.reclaims++;
        this.fsAvailable += this.reclaimFrees;
      },
      ...extra,
    });
  }
}

const hard = (m: Record<string, string>) => parseThresholdConfig({ hard: m, soft: {}, softGracePeriod: {}, minimumReclaim: {} });

test('ranking: memory — over request first, then lower priority, then most above request; no stats first', () => {
  const pods = [pod({ name: 'guaranteed', req: '1Gi', lim: '1Gi' }), pod({ name: 'burst-low', req: '100Mi', priority: -10 }), pod({ name: 'burst-big', req: '100Mi' }), pod({ name: 'besteffort' }), pod({ name: 'nostats' })];
  const usage: Record<string, number> = { guaranteed: 900 * Mi, 'burst-low': 150 * Mi, 'burst-big': 600 * Mi, besteffort: 50 * Mi };
  const stats = (p: V1Pod): PodSummary | undefined => (usage[p.metadata!.name!] === undefined ? undefined : podStats(p.metadata!.name!, { ws: usage[p.metadata!.name!]! }));
  assert.deepEqual(rankMemoryPressure(pods, stats).map((p) => p.metadata!.name), ['nostats', 'burst-low', 'burst-big', 'besteffort', 'guaranteed']);
  const disk = (p: V1Pod): PodSummary => podStats(p.metadata!.name!, { rootfs: { guaranteed: 10, 'burst-low': 5 * Mi, 'burst-big': 50 * Mi, besteffort: 1 * Mi, nostats: 0 }[p.metadata!.name!]!, logs: 1 });
  assert.deepEqual(rankDiskPressure(pods, disk, ['root', 'logs'], 'ephemeral-storage').map((p) => p.metadata!.name), ['burst-low', 'burst-big', 'besteffort', 'guaranteed', 'nostats']);
});

test('memory pressure: one pod per pass in the kubelet order, status Evicted with the kubelet message; condition stays for the transition period, then recovers; BestEffort refused meanwhile', async () => {
  const w = new World();
  w.pods = [pod({ name: 'guaranteed', req: '1Gi', lim: '1Gi' }), pod({ name: 'burstable', req: '100Mi' }), pod({ name: 'besteffort' }), pod({ name: 'static', critical: true })];
  w.usage.set('guaranteed', { ws: 500 * Mi });
  w.usage.set('burstable', { ws: 300 * Mi });
  w.usage.set('besteffort', { ws: 200 * Mi });
  w.usage.set('static', { ws: 2 * Gi });
  const m = w.manager(hard({ 'memory.available': '1Gi' }));
  let r = await m.runOnce();
  assert.deepEqual(r.conditions, []);
  assert.equal(r.evicted, undefined);
  assert.deepEqual(m.admit(pod({ name: 'new-be' })), { admit: true });

  w.memAvailable = 512 * Mi;
  w.clock.step(10_000);
  r = await m.runOnce();
  assert.deepEqual(r.conditions, ['MemoryPressure']);
  // static ranks first but is critical (never evicted); burstable and besteffort are both 200Mi
  // over their request (a tie: the active-pods order decides); guaranteed is within its request.
  assert.deepEqual(w.evicted.map((e) => e.name), ['burstable']);
  assert.equal(w.evicted[0]!.grace, 1);
  assert.equal(w.evicted[0]!.reason, 'Evicted');
  assert.equal(w.evicted[0]!.message, 'The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. Container app was using 300Mi, request is 100Mi, has larger consumption of memory. ');
  assert.ok(w.events.includes('node:EvictionThresholdMet:Attempting to reclaim memory'));
  assert.ok(w.events.some((e) => e.startsWith('burstable:Evicted:The node was low on resource: memory.')));
  assert.equal(w.reclaims, 0, 'no node-level reclaim for memory');
  assert.deepEqual(m.admit(pod({ name: 'new-be' })), { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
  assert.deepEqual(m.admit(pod({ name: 'new-burst', req: '10Mi' })), { admit: true });
  assert.deepEqual(m.admit(pod({ name: 'new-static', critical: true })), { admit: true });

  w.clock.step(10_000);
  await m.runOnce();
  assert.deepEqual(w.evicted.map((e) => e.name), ['burstable', 'besteffort']);
  w.clock.step(10_000);
  await m.runOnce();
  assert.deepEqual(w.evicted.map((e) => e.name), ['burstable', 'besteffort', 'guaranteed'], 'the static pod is never evicted');
  w.clock.step(10_000);
  r = await m.runOnce();
  assert.equal(r.evicted, undefined, 'only critical pods are left');

  // Pressure gone: the condition stays True for the transition period (5 min), then goes.
  w.memAvailable = 4 * Gi;
  w.clock.step(10_000);
  r = await m.runOnce();
  assert.deepEqual(r.conditions, ['MemoryPressure']);
  w.clock.step(300_000 - 10_000 - 1);
  r = await m.runOnce();
  assert.deepEqual(r.conditions, ['MemoryPressure'], 'still within the transition period');
  w.clock.step(1);
  r = await m.runOnce();
  assert.deepEqual(r.conditions, []);
  assert.deepEqual(m.admit(pod({ name: 'new-be' })), { admit: true });
});

test('disk pressure: node-level reclaim first; when it relieves the pressure no pod is evicted; otherwise the largest disk user; every pod refused', async () => {
  const w = new World();
  w.pods = [pod({ name: 'small' }), pod({ name: 'big' }), pod({ name: 'requested', eph: { request: '10Gi' } })];
  w.usage.set('small', { rootfs: 10 * Mi, logs: 1 * Mi });
  w.usage.set('big', { rootfs: 2 * Gi, logs: 5 * Mi });
  w.usage.set('requested', { rootfs: 5 * Gi });
  const m = w.manager(hard({ 'nodefs.available': '10%' }));
  w.fsAvailable = 9 * Gi;
  w.reclaimFrees = 2 * Gi;
  let r = await m.runOnce();
  assert.deepEqual(r.conditions, ['DiskPressure']);
  assert.equal(w.reclaims, 1);
  assert.equal(r.reclaimedNodeLevel, true);
  assert.equal(w.evicted.length, 0);
  assert.deepEqual(m.admit(pod({ name: 'x', req: '1Gi', lim: '1Gi' })), { admit: false, reason: 'Evicted', message: 'The node had condition: [DiskPressure]. ' });

  w.fsAvailable = 5 * Gi;
  w.reclaimFrees = 0;
  w.clock.step(10_000);
  r = await m.runOnce();
  assert.equal(w.reclaims, 2);
  assert.deepEqual(w.evicted.map((e) => e.name), ['big'], 'over its (zero) request and the largest above it; requested is within its request');
  assert.equal(w.evicted[0]!.message, `The node was low on resource: ephemeral-storage. Threshold quantity: ${Math.trunc(100 * Gi * Math.fround(0.1))}, available: 5Gi. Container app was using 2053Mi, request is 0, has larger consumption of ephemeral-storage. `);
});

test('soft thresholds: eviction only after the grace period, with --eviction-max-pod-grace-period capped by the pod\'s own', async () => {
  const w = new World();
  w.pods = [pod({ name: 'a', grace: 10 })];
  w.usage.set('a', { ws: 100 * Mi });
  const soft = parseThresholdConfig({ hard: {}, soft: { 'memory.available': '1Gi' }, softGracePeriod: { 'memory.available': '1m' }, minimumReclaim: {} });
  const m = w.manager(soft);
  w.memAvailable = 512 * Mi;
  let r = await m.runOnce();
  assert.deepEqual(r.conditions, ['MemoryPressure'], 'the condition is immediate');
  assert.equal(w.evicted.length, 0);
  w.clock.step(50_000);
  r = await m.runOnce();
  assert.equal(w.evicted.length, 0);
  w.clock.step(10_000);
  r = await m.runOnce();
  assert.deepEqual(w.evicted.map((e) => [e.name, e.grace]), [['a', 10]]);
});

test('ephemeral-storage limits: pod total and container limits evict with the kubelet messages, before any threshold', async () => {
  const w = new World();
  w.pods = [pod({ name: 'within', eph: { limit: '100Mi' } }), pod({ name: 'over', eph: { limit: '100Mi' } }), pod({ name: 'nolimit' })];
  w.usage.set('within', { rootfs: 50 * Mi, logs: 10 * Mi });
  w.usage.set('over', { rootfs: 90 * Mi, logs: 20 * Mi });
  w.usage.set('nolimit', { rootfs: 10 * Gi });
  const m = w.manager([]);
  const r = await m.runOnce();
  assert.deepEqual(w.evicted.map((e) => [e.name, e.grace, e.message]), [['over', 1, 'Pod ephemeral local storage usage exceeds the total limit of containers 100Mi. ']]);
  assert.equal(r.evicted?.signal, 'ephemeralpodfs.limit');
});

test('nothing to do: no thresholds and no ephemeral-storage limits reads no summary', async () => {
  const w = new World();
  let reads = 0;
  const m = w.manager([], { summary: async () => (reads++, w.summary()) });
  await m.runOnce();
  assert.equal(reads, 0);
});

test('the monitoring loop: a pass at start, then every 10 s on the clock; close() stops it', async () => {
  const w = new World();
  const passes: number[] = [];
  const m = w.manager(hard({ 'memory.available': '1Gi' }), { onPass: () => passes.push(w.clock.now() - T0) });
  m.start();
  await m.running;
  assert.deepEqual(passes, [0]);
  w.clock.step(10_000);
  await m.running;
  assert.deepEqual(passes, [0, 10_000]);
  await m.close();
  w.clock.step(30_000);
  assert.equal(m.running, undefined);
  assert.deepEqual(passes, [0, 10_000]);
});

test('ephemeral-storage limits: a container over its own limit while the pod is within its total', async () => {
  const w = new World();
  const two: V1Pod = {
    metadata: { name: 'two', namespace: 'default', uid: 'uid-two', annotations: { 'kubernetes.io/config.source': 'api' } },
    spec: { containers: ['a', 'b'].map((name) => ({ name, image: 'busybox', resources: { limits: { 'ephemeral-storage': '100Mi' } } })) },
  };
  w.pods = [two];
  const time = new Date(T0).toISOString();
  const m = w.manager([], {
    summary: async () => ({
      ...w.summary(),
      pods: [{
        podRef: { name: 'two', namespace: 'default', uid: 'uid-two' }, startTime: time,
        containers: [
          { name: 'a', startTime: time, rootfs: { time, usedBytes: 140 * Mi }, logs: { time, usedBytes: 10 * Mi } },
          { name: 'b', startTime: time, rootfs: { time, usedBytes: 1 * Mi }, logs: { time, usedBytes: 0 } },
        ],
        'ephemeral-storage': { time, usedBytes: 151 * Mi },
      }],
    }),
  });
  const r = await m.runOnce();
  assert.deepEqual(w.evicted.map((e) => [e.name, e.message]), [['two', 'Container a exceeded its local ephemeral storage limit "100Mi". ']]);
  assert.equal(r.evicted?.signal, 'ephemeralcontainerfs.limit');
});
