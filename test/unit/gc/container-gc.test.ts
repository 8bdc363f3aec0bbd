/**
 * The container GC runner over a recording fake runtime: the CRI calls a pass makes and their
 * order, log files of removed containers (real files), the per-pass cap and what the next pass
 * does with the rest, failures, and the period on a fake clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import type { Container, PodSandbox } from '../../../src/shared/cri/cri-types.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { ContainerGc, type ContainerGcDeps, type ContainerGcPass, type ContainerGcRuntime } from '../../../src/main/gc/container-gc.js';
import { T0, ctr, sandbox } from './gc-fixtures.js';

class GcFakeRuntime implements ContainerGcRuntime {
  readonly calls: string[] = [];
  containers: Container[] = [];
  sandboxes: PodSandbox[] = [];
  readonly fail = new Map<string, CriError>();

  #maybeFail(op: string, id: string): void {
    const e = this.fail.get(`${op} ${id}`) ?? this.fail.get(op);
    if (e) throw e;
  }
  async listContainers(): Promise<Container[]> {
    this.calls.push('ListContainers');
    this.#maybeFail('ListContainers', '');
    return [...this.containers];
  }
  async listPodSandbox(): Promise<PodSandbox[]> {
    this.calls.push('ListPodSandbox');
    return [...this.sandboxes];
  }
  async removeContainer(id: string): Promise<void> {
    this.calls.push(`RemoveContainer ${id}`);
    this.#maybeFail('RemoveContainer', id);
    this.containers = this.containers.filter((c) => c.id !== id);
  }
  async stopContainer(id: string, timeout: number): Promise<void> {
    this.calls.push(`StopContainer ${id} ${timeout}`);
    this.#maybeFail('StopContainer', id);
  }
  async stopPodSandbox(id: string): Promise<void> {
    this.calls.push(`StopPodSandbox ${id}`);
    this.#maybeFail('StopPodSandbox', id);
  }
  async removePodSandbox(id: string): Promise<void> {
    this.calls.push(`RemovePodSandbox ${id}`);
    this.#maybeFail('RemovePodSandbox', id);
    this.sandboxes = this.sandboxes.filter((s) => s.id !== id);
  }
}

function setup(t: { after(fn: () => void): void }, over: Partial<ContainerGcDeps> = {}) {
  const logs = fs.mkdtempSync(path.join(os.tmpdir(), 'container-gc-'));
  t.after(() => fs.rmSync(logs, { recursive: true, force: true }));
  const clock = new FakeClock(T0 + 3_600_000);
  const rt = new GcFakeRuntime();
  const gone = new Set<string>();
  let ready = true;
  const passes: ContainerGcPass[] = [];
  const failures: string[] = [];
  const gc = new ContainerGc({
    runtime: rt, clock, logger: silentLogger, podLogsDir: logs,
    policy: { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 },
    sourcesReady: () => ready, isPodGone: (u) => gone.has(u),
    onPass: (r) => passes.push(r), onFailure: (e) => failures.push(e.message),
    ...over,
  });
  /** The log file the agent would have written for this container (and a rotated one beside it). */
  const logOf = (c: Container): string => {
    const dir = path.join(logs, `default_pod-${c.labels['io.kubernetes.pod.uid']}_${c.labels['io.kubernetes.pod.uid']}`, c.metadata!.name);
    fs.mkdirSync(dir, { recursive: true });
    const f = path.join(dir, `${c.annotations['io.kubernetes.container.restartCount']}.log`);
    fs.writeFileSync(f, 'line\n');
    fs.writeFileSync(`${f}.20260101-000000.gz`, 'old');
    return f;
  };
  return { logs, clock, rt, gone, gc, passes, failures, logOf, setReady: (v: boolean) => (ready = v) };
}

test('a pass removes what the plan says, logs first, UNKNOWN containers stopped first, then the emptied sandboxes', async (t) => {
  const { rt, gc, gone, logOf } = setup(t);
  const keep = ctr('keep', 'p1', 'app', T0 + 3, 'CONTAINER_EXITED', { restart: 2, sandbox: 's-live' });
  const old1 = ctr('old1', 'p1', 'app', T0 + 1, 'CONTAINER_EXITED', { restart: 0, sandbox: 's-live' });
  const old2 = ctr('old2', 'p1', 'app', T0 + 2, 'CONTAINER_UNKNOWN', { restart: 1, sandbox: 's-live' });
  const g = ctr('g', 'p2', 'web', T0, 'CONTAINER_EXITED', { sandbox: 's-gone' });
  rt.containers = [keep, old1, old2, g];
  rt.sandboxes = [sandbox('s-live', 'p1', T0), sandbox('s-gone', 'p2', T0)];
  gone.add('p2');
  const lk = logOf(keep);
  const [l1, l2, lg] = [logOf(old1), logOf(old2), logOf(g)];
  const r = await gc.runOnce();
  assert.deepEqual(r, { ok: true, containersRemoved: 3, sandboxesRemoved: 1, failed: 0, deferred: 0 });
  assert.deepEqual(rt.calls, [
    'ListContainers', 'ListPodSandbox',
    'RemoveContainer g',
    'RemoveContainer old1',
    'StopContainer old2 2', 'RemoveContainer old2',
    'StopPodSandbox s-gone', 'RemovePodSandbox s-gone',
  ]);
  assert.ok(fs.existsSync(lk) && fs.existsSync(`${lk}.20260101-000000.gz`), 'the kept instance keeps its logs (--previous)');
  for (const f of [l1, l2, lg]) assert.ok(!fs.existsSync(f) && !fs.existsSync(`${f}.20260101-000000.gz`), `${f} and its rotated file are removed`);
});

test('a log path shared with a kept container is not removed; a container whose logs cannot be removed is kept', async (t) => {
  const { rt, gc, logOf } = setup(t);
  const kept = ctr('kept', 'p', 'c', T0 + 5, 'CONTAINER_RUNNING', { restart: 0 });
  const dead = ctr('dead', 'p', 'c', T0 + 1, 'CONTAINER_EXITED', { restart: 0 });
  const dead2 = ctr('dead2', 'p', 'c', T0 + 2, 'CONTAINER_EXITED', { restart: 0 });
  rt.containers = [kept, dead, dead2];
  const shared = logOf(kept);
  await gc.runOnce();
  assert.ok(rt.calls.includes('RemoveContainer dead'));
  assert.ok(fs.existsSync(shared), 'the running instance\'s log file survives');

  const failing = setup(t, { removeLogs: async () => { throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }); } });
  failing.rt.containers = [ctr('x1', 'p', 'c', T0 + 1, 'CONTAINER_EXITED', { restart: 1 }), ctr('x2', 'p', 'c', T0 + 2, 'CONTAINER_EXITED', { restart: 2 })];
  const r = await failing.gc.runOnce();
  assert.deepEqual(r, { ok: true, containersRemoved: 0, sandboxesRemoved: 0, failed: 1, deferred: 0 });
  assert.ok(!failing.rt.calls.some((c) => c.startsWith('RemoveContainer')), 'no RemoveContainer after its logs failed to go (the kubelet\'s order)');
});

test('a failed stop skips the removal; NotFound counts as removed; a failed listing fails the pass (ContainerGCFailed)', async (t) => {
  const { rt, gc, failures } = setup(t);
  rt.containers = [ctr('u1', 'p', 'c', T0 + 1, 'CONTAINER_UNKNOWN'), ctr('u2', 'p', 'c', T0 + 2, 'CONTAINER_UNKNOWN'), ctr('n', 'p', 'd', T0), ctr('n2', 'p', 'd', T0 + 1)];
  rt.fail.set('StopContainer u1', new CriError('ERR_CRI_UNKNOWN', 'StopContainer', 'boom'));
  rt.fail.set('RemoveContainer n', new CriError('ERR_CRI_NOT_FOUND', 'RemoveContainer', 'gone already'));
  const r = await gc.runOnce();
  assert.deepEqual(r, { ok: true, containersRemoved: 1, sandboxesRemoved: 0, failed: 1, deferred: 0 });
  assert.ok(!rt.calls.includes('RemoveContainer u1'));
  rt.fail.set('ListContainers', new CriError('ERR_CRI_UNAVAILABLE', 'ListContainers', 'runtime down'));
  const r2 = await gc.runOnce();
  assert.equal(r2.ok, false);
  assert.equal(failures.length, 1);
  assert.match(failures[0]!, /runtime down/);
});

test('the per-pass cap: removals beyond it are deferred and done by the next pass, from a fresh listing', async (t) => {
  const { rt, gc } = setup(t, { maxRemovalsPerPass: 3, policy: { minAgeMs: 0, maxPerPodContainer: 0, maxContainers: -1 } });
  for (let i = 0; i < 5; i++) rt.containers.push(ctr(`c${i}`, 'p', 'c', T0 + i, 'CONTAINER_EXITED', { sandbox: 'sb' }));
  rt.sandboxes = [sandbox('sb', 'p', T0), sandbox('sb-old', 'p', T0 - 10)];
  const r1 = await gc.runOnce();
  assert.deepEqual(r1, { ok: true, containersRemoved: 3, sandboxesRemoved: 0, failed: 0, deferred: 3 }, '2 containers + the old sandbox deferred');
  assert.equal(rt.containers.length, 2);
  const r2 = await gc.runOnce();
  assert.deepEqual(r2, { ok: true, containersRemoved: 2, sandboxesRemoved: 1, failed: 0, deferred: 0 });
  assert.deepEqual(rt.sandboxes.map((s) => s.id), ['sb'], 'the newest sandbox of an existing pod stays');
});

test('runs at start, then every minute after the previous pass; gone pods only once the sources are ready; close() stops it', async (t) => {
  const { rt, gc, clock, gone, passes, setReady } = setup(t);
  setReady(false);
  gone.add('p');
  rt.containers = [ctr('a', 'p', 'c', T0), ctr('b', 'p', 'c', T0 + 1)];
  gc.start();
  await gc.running;
  assert.equal(passes.length, 1);
  assert.deepEqual(rt.containers.map((c) => c.id), ['b'], 'before the sources are ready only the per-container cap applies');
  setReady(true);
  clock.step(59_999);
  assert.equal(gc.running, undefined, 'no pass before a minute');
  clock.step(1);
  await gc.running;
  assert.equal(passes.length, 2);
  assert.deepEqual(rt.containers, [], 'the gone pod\'s last dead container goes once the sources are ready');
  await gc.close();
  clock.step(120_000);
  assert.equal(gc.running, undefined);
  assert.equal(clock.pendingTimers, 0);
});
