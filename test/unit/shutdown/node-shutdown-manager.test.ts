/**
 * The graceful node shutdown manager (node-shutdown-manager.ts) with an injected clock, an
 * injected signal source and a fake pod side: the kubelet's two groups (regular first, then
 * critical, each within its share of the grace period and never beyond a pod's own
 * terminationGracePeriodSeconds), the terminal status, NotReady and admission while shutting
 * down, the delay lock released when done and taken again on cancellation, group timeouts, and a
 * source that cannot start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import type { KillOptions } from '../../../src/shared/protocol/pod-worker-protocol.js';
import { NodeShutdownManager, groupByPriority, shutdownGroups, type ShutdownGroupReport, type ShutdownPods } from '../../../src/main/shutdown/node-shutdown-manager.js';
import { ShutdownSignalError, type ShutdownEventHandler, type ShutdownSignalSource } from '../../../src/main/shutdown/shutdown-signal.js';

const S = 1000;

function pod(name: string, spec: Partial<NonNullable<V1Pod['spec']>> = {}): V1Pod {
  return { metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { containers: [{ name: 'c' }], ...spec } };
}

/** The pod side: records kills (with the fake time), stops pods when the test says so. */
class FakePods implements ShutdownPods {
  readonly kills: Array<{ name: string; kill: KillOptions; atMs: number }> = [];
  readonly #stops = new Map<string, () => void>();
  readonly #killWaiters: Array<{ n: number; resolve: () => void }> = [];
  constructor(public active: V1Pod[], readonly clock: FakeClock) {}
  activePods(): V1Pod[] {
    return [...this.active];
  }
  killPod(p: V1Pod, kill: KillOptions): void {
    this.kills.push({ name: p.metadata!.name!, kill, atMs: this.clock.now() });
    for (const w of this.#killWaiters.filter((x) => this.kills.length >= x.n)) w.resolve();
  }
  whenStopped(uid: string): Promise<void> {
    return new Promise((resolve) => this.#stops.set(uid, resolve));
  }
  stop(name: string): void {
    const f = this.#stops.get(`uid-${name}`);
    assert.ok(f, `${name} is being waited on`);
    f();
  }
  /** Resolves once `n` kills were made in all. */
  killsReach(n: number): Promise<void> {
    if (this.kills.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.#killWaiters.push({ n, resolve }));
  }
}

/** The injected signal: the test fires "shutdown is imminent" or "cancelled"; lock calls are recorded. */
class FakeSource implements ShutdownSignalSource {
  readonly calls: string[] = [];
  #fire: ShutdownEventHandler | undefined;
  constructor(readonly name = 'fake', readonly failStart = false) {}
  async start(onEvent: ShutdownEventHandler): Promise<void> {
    if (this.failStart) throw new ShutdownSignalError('ERR_SHUTDOWN_NO_SYSTEM_BUS', 'no bus');
    this.#fire = onEvent;
    this.calls.push('start');
  }
  fire(shuttingDown: boolean): void {
    assert.ok(this.#fire, 'started');
    this.#fire(shuttingDown);
  }
  async release(): Promise<void> { this.calls.push('release'); }
  async reacquire(): Promise<void> { this.calls.push('reacquire'); }
  async close(): Promise<void> { this.calls.push('close'); }
}

function setup(active: V1Pod[], totalS = 30, criticalS = 10) {
  const clock = new FakeClock();
  const pods = new FakePods(active, clock);
  const source = new FakeSource();
  const broken = new FakeSource('broken', true);
  const events: string[] = [];
  let syncs = 0;
  const handled: ShutdownGroupReport[][] = [];
  let onHandled: (() => void) | undefined;
  const mgr = new NodeShutdownManager({
    clock, logger: silentLogger, config: { shutdownGracePeriodMs: totalS * S, shutdownGracePeriodCriticalPodsMs: criticalS * S },
    sources: [broken, source], pods,
    syncNodeStatus: () => syncs++,
    event: (reason, message) => events.push(`${reason}: ${message}`),
    onShutdownHandled: (r) => {
      handled.push(r);
      onHandled?.();
    },
  });
  const nextHandled = () => new Promise<void>((r) => (onHandled = r));
  return { clock, pods, source, mgr, events, syncs: () => syncs, handled, nextHandled };
}

test('migrateConfig groups and groupByPriority: below 2e9 regular, at or above critical; class names where no priority was resolved', () => {
  assert.deepEqual(shutdownGroups({ shutdownGracePeriodMs: 0, shutdownGracePeriodCriticalPodsMs: 0 }), []);
  assert.deepEqual(shutdownGroups({ shutdownGracePeriodMs: 30_500, shutdownGracePeriodCriticalPodsMs: 10_000 }), [
    { priority: 0, gracePeriodSeconds: 20 }, { priority: 2_000_000_000, gracePeriodSeconds: 10 },
  ]);
  const groups = groupByPriority(shutdownGroups({ shutdownGracePeriodMs: 30_000, shutdownGracePeriodCriticalPodsMs: 10_000 }), [
    pod('plain'), pod('negative', { priority: -5 }), pod('high', { priority: 1_999_999_999 }), pod('crit', { priority: 2_000_000_000 }),
    pod('node-crit-class', { priorityClassName: 'system-node-critical' }), pod('cluster-crit-class', { priorityClassName: 'system-cluster-critical' }),
    pod('other-class', { priorityClassName: 'batch' }), pod('resolved-wins', { priorityClassName: 'system-node-critical', priority: 7 }),
  ]);
  assert.deepEqual(groups.map((g) => g.pods.map((p) => p.metadata!.name)), [
    ['plain', 'negative', 'high', 'other-class', 'resolved-wins'],
    ['crit', 'node-crit-class', 'cluster-crit-class'],
  ]);
});

test('shutdown: NotReady, admission refused, regular pods killed first within their share, then critical pods; the lock released when done', async () => {
  const regularA = pod('regular-a');
  const regularShort = pod('regular-short', { terminationGracePeriodSeconds: 3 });
  const critical = pod('critical', { priorityClassName: 'system-node-critical', terminationGracePeriodSeconds: 60 });
  const { clock, pods, source, mgr, events, syncs, handled, nextHandled } = setup([regularA, critical, regularShort]);
  assert.deepEqual(await mgr.start(), ['fake'], 'the broken source was left out');
  assert.deepEqual(mgr.errors(), []);
  assert.deepEqual(mgr.admit(), { admit: true });
  const t0 = clock.now();

  const done = nextHandled();
  source.fire(true);
  await pods.killsReach(2);
  assert.deepEqual(mgr.errors(), ['node is shutting down']);
  assert.deepEqual(mgr.admit(), { admit: false, reason: 'NodeShutdown', message: 'Pod was rejected as the node is shutting down.' });
  assert.equal(syncs(), 1, 'node status pushed at once');
  assert.deepEqual(events, ['NodeShutdown: Shutdown manager detected shutdown event']);
  const terminalStatus = { reason: 'Terminated', message: 'Pod was terminated in response to imminent node shutdown.' };
  assert.deepEqual(pods.kills.map((k) => [k.name, k.kill.gracePeriodSeconds, k.atMs - t0]), [['regular-a', 20, 0], ['regular-short', 3, 0]]);
  for (const k of pods.kills) assert.deepEqual(k.kill.terminalStatus, terminalStatus);
  assert.equal(pods.kills[0]!.kill.removed, false);

  // The regular pods stop after 4 s: the critical group starts then, not at the 20 s deadline.
  clock.step(4 * S);
  pods.stop('regular-a');
  pods.stop('regular-short');
  await pods.killsReach(3);
  assert.deepEqual(pods.kills[2]!.name, 'critical');
  assert.equal(pods.kills[2]!.kill.gracePeriodSeconds, 10, 'the critical share, shorter than its own 60 s');
  assert.equal(pods.kills[2]!.atMs - t0, 4 * S);
  assert.ok(!source.calls.includes('release'), 'the lock is held while pods terminate');
  clock.step(2 * S);
  pods.stop('critical');
  await done;
  assert.deepEqual(handled[0]!.map((g) => [g.priority, g.timedOut, g.elapsedMs]), [[0, false, 4 * S], [2_000_000_000, false, 2 * S]]);
  assert.deepEqual(source.calls, ['start', 'release']);
  assert.deepEqual(mgr.errors(), ['node is shutting down'], 'still shutting down once pods are handled');

  // Cancelled: Ready again, admission again, the lock is taken again.
  source.fire(false);
  await mgr.idle;
  assert.deepEqual(mgr.errors(), []);
  assert.deepEqual(mgr.admit(), { admit: true });
  assert.deepEqual(source.calls, ['start', 'release', 'reacquire']);
  assert.equal(events[1], 'NodeShutdown: Shutdown manager detected shutdown cancellation');
  await mgr.close();
  assert.ok(source.calls.includes('close'));
});

test('a group whose pods do not stop ends at its grace period; a group without pods takes no time', async () => {
  const { clock, pods, source, mgr, handled, nextHandled } = setup([pod('stuck'), pod('crit', { priority: 2_000_000_100 })], 30, 10);
  await mgr.start();
  const t0 = clock.now();
  const done = nextHandled();
  source.fire(true);
  await pods.killsReach(1);
  clock.step(20 * S - 1);
  assert.equal(pods.kills.length, 1, 'critical pods wait for the regular group\'s 20 s');
  clock.step(1);
  await pods.killsReach(2);
  assert.equal(pods.kills[1]!.atMs - t0, 20 * S);
  clock.step(10 * S);
  await done;
  assert.deepEqual(handled[0]!.map((g) => [g.gracePeriodSeconds, g.timedOut, g.elapsedMs]), [[20, true, 20 * S], [10, true, 10 * S]]);

  const only = setup([pod('crit', { priority: 2_000_000_000 })]);
  await only.mgr.start();
  const t1 = only.clock.now();
  const done2 = only.nextHandled();
  only.source.fire(true);
  await only.pods.killsReach(1);
  assert.equal(only.pods.kills[0]!.atMs, t1, 'no regular pods: critical pods are killed at once');
  only.pods.stop('crit');
  await done2;
  assert.equal(only.handled[0]!.length, 1);
});

test('critical equal to the total: regular pods get grace 0', async () => {
  const { pods, source, mgr } = setup([pod('a', { terminationGracePeriodSeconds: 30 })], 10, 10);
  await mgr.start();
  source.fire(true);
  await pods.killsReach(1);
  assert.equal(pods.kills[0]!.kill.gracePeriodSeconds, 0);
  assert.throws(() => new NodeShutdownManager({ clock: new FakeClock(), logger: silentLogger, config: { shutdownGracePeriodMs: 0, shutdownGracePeriodCriticalPodsMs: 0 }, sources: [], pods }), RangeError);
});
