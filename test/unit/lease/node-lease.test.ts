/**
 * NodeLease against a scripted LeaseStore and a fake clock: creation on 404 with the Node as
 * owner, renewal by PUT of the last lease (no GET), 409 → GET → PUT, a failure → the next renewal
 * starts over with a GET, the ownerReference added once the Node's UID is known, and the
 * start-to-start 10 s cadence with lateness reported (due → the renewing write stamped and sent;
 * a slow answer is request time, not lateness).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../../src/main/apiserver/api-errors.js';
import type { LeaseObject, LeaseStore } from '../../../src/main/apiserver/object-roles.js';
import { NodeLease, microTime, type LeaseRenewal } from '../../../src/main/lease/node-lease.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { SignalClock } from '../node-status/signal-clock.js';

type Op = { op: 'get' } | { op: 'create'; lease: LeaseObject } | { op: 'update'; lease: LeaseObject };

/** An in-memory lease server: resourceVersion checked on update; `failNext` scripts errors. */
class FakeLeaseStore implements LeaseStore {
  stored: LeaseObject | undefined;
  rv = 0;
  readonly ops: Op[] = [];
  readonly failNext: ApiError[] = [];
  #save(l: LeaseObject): LeaseObject {
    this.stored = { ...l, metadata: { ...l.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.stored);
  }
  #maybeFail(): void {
    const e = this.failNext.shift();
    if (e) throw e;
  }
  async getLease(): Promise<LeaseObject> {
    this.ops.push({ op: 'get' });
    this.#maybeFail();
    if (!this.stored) throw new ApiError('ERR_API_NOT_FOUND', 'not found', 404);
    return structuredClone(this.stored);
  }
  async createLease(lease: LeaseObject): Promise<LeaseObject> {
    this.ops.push({ op: 'create', lease: structuredClone(lease) });
    this.#maybeFail();
    if (this.stored) throw new ApiError('ERR_API_CONFLICT', 'exists', 409);
    return this.#save(lease);
  }
  async updateLease(lease: LeaseObject): Promise<LeaseObject> {
    this.ops.push({ op: 'update', lease: structuredClone(lease) });
    this.#maybeFail();
    if (lease.metadata.resourceVersion !== this.stored?.metadata.resourceVersion) throw new ApiError('ERR_API_CONFLICT', 'conflict', 409);
    return this.#save(lease);
  }
}

function bounded<T>(p: Promise<T>, what: string, ms = 5_000): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (t = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)))]).finally(() => clearTimeout(t));
}

function setup(uid: string | null = 'node-uid-1') {
  const clock = new SignalClock();
  const store = new FakeLeaseStore();
  let nodeUid: string | undefined = uid ?? undefined;
  const renewals: LeaseRenewal[] = [];
  const lease = new NodeLease({ store, clock, logger: silentLogger, nodeName: 'n1', nodeUid: () => nodeUid, onRenew: (r) => renewals.push(r) });
  return { clock, store, lease, renewals, setUid: (u: string) => (nodeUid = u) };
}

test('first renewal: GET 404 → POST a lease held by the node, 40 s, owned by the Node', async () => {
  const { store, lease, clock } = setup();
  assert.equal(await lease.renewOnce(), true);
  assert.deepEqual(store.ops.map((o) => o.op), ['get', 'create']);
  const created = store.stored!;
  assert.equal(created.metadata.namespace, 'kube-node-lease');
  assert.equal(created.metadata.name, 'n1');
  assert.equal(created.spec.holderIdentity, 'n1');
  assert.equal(created.spec.leaseDurationSeconds, 40);
  assert.equal(created.spec.renewTime, microTime(clock.now()));
  assert.match(created.spec.renewTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.deepEqual(created.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid-1' }]);
});

test('later renewals PUT the last lease with its resourceVersion, no GET', async () => {
  const { store, lease, clock } = setup();
  await lease.renewOnce();
  clock.step(10_000);
  assert.equal(await lease.renewOnce(), true);
  clock.step(10_000);
  assert.equal(await lease.renewOnce(), true);
  assert.deepEqual(store.ops.map((o) => o.op), ['get', 'create', 'update', 'update']);
  assert.equal(store.stored!.spec.renewTime, microTime(clock.now()));
  assert.equal(store.rv, 3);
});

test('409 on PUT: GET the lease someone else wrote, PUT on top of it', async () => {
  const { store, lease } = setup();
  await lease.renewOnce();
  // Someone else (an operator, a second agent) wrote the lease: our resourceVersion is stale.
  store.stored = { ...store.stored!, metadata: { ...store.stored!.metadata, resourceVersion: String(++store.rv) }, spec: { ...store.stored!.spec, holderIdentity: 'intruder' } };
  assert.equal(await lease.renewOnce(), true);
  assert.deepEqual(store.ops.map((o) => o.op), ['get', 'create', 'update', 'get', 'update']);
  assert.equal(store.stored!.spec.holderIdentity, 'n1');
});

test('a failed renewal: false, and the next one starts from a GET (no stale resourceVersion)', async () => {
  const { store, lease } = setup();
  await lease.renewOnce();
  store.failNext.push(new ApiError('ERR_API_UNREACHABLE', 'connection refused'));
  assert.equal(await lease.renewOnce(), false);
  assert.equal(lease.latest, undefined);
  assert.equal(await lease.renewOnce(), true);
  assert.deepEqual(store.ops.map((o) => o.op), ['get', 'create', 'update', 'get', 'update']);
});

test('a refusal (403) is not retried in a loop: one request per renewal', async () => {
  const { store, lease } = setup();
  store.failNext.push(new ApiError('ERR_API_FORBIDDEN', 'forbidden', 403));
  assert.equal(await lease.renewOnce(), false);
  assert.equal(store.ops.length, 1);
});

test('the ownerReference is added once the Node UID is known', async () => {
  const { store, lease, setUid } = setup(null);
  await lease.renewOnce();
  assert.equal(store.stored!.metadata.ownerReferences, undefined);
  setUid('later-uid');
  await lease.renewOnce();
  assert.deepEqual(store.stored!.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'later-uid' }]);
});

test('run: renewals start every 10 s from the first; an overrun one pushes the next, lateness reported', async () => {
  const { store, lease, clock, renewals } = setup();
  const stop = new AbortController();
  const done = lease.run(stop.signal);
  assert.equal(await clock.nextSleep(), 10_000);
  assert.equal(renewals.length, 1);
  clock.step(10_000);
  assert.equal(await clock.nextSleep(), 10_000);
  assert.equal(store.ops.filter((o) => o.op === 'update').length, 1);
  // The next renewal is slow: its PUT answers 3 s late (a slow server).
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inPut = new Promise<void>((r) => (entered = r));
  const orig = store.updateLease.bind(store);
  store.updateLease = async (l) => {
    entered();
    await gate;
    clock.step(3_000);
    return orig(l);
  };
  clock.step(10_000);
  await bounded(inPut, 'the slow PUT to start');
  release();
  assert.equal(await clock.nextSleep(), 7_000, 'the next renewal stays on the 10 s schedule');
  assert.deepEqual(renewals.map((r) => r.ok), [true, true, true]);
  // The slow answer is request time, not lateness: the renewal was stamped and sent on time.
  assert.deepEqual(renewals.map((r) => [r.latenessMs, r.requestMs]), [[0, 0], [0, 0], [0, 3_000]]);
  stop.abort();
  await done;
});

test('run: a renewal that needs a GET first (409) is as late as its renewing PUT was stamped', async () => {
  const { store, lease, clock, renewals } = setup();
  const stop = new AbortController();
  const done = lease.run(stop.signal);
  assert.equal(await clock.nextSleep(), 10_000);
  // Someone else wrote the lease: the next PUT is refused, the GET that follows answers in 2 s.
  store.stored = { ...store.stored!, metadata: { ...store.stored!.metadata, resourceVersion: String(++store.rv) } };
  const get = store.getLease.bind(store);
  store.getLease = async () => {
    clock.step(2_000);
    return get();
  };
  clock.step(10_000);
  assert.equal(await clock.nextSleep(), 8_000);
  assert.deepEqual(store.ops.slice(-3).map((o) => o.op), ['update', 'get', 'update']);
  assert.equal(store.stored!.spec.renewTime, microTime(clock.now()), 'renewTime stamped when the PUT went out, 2 s after due');
  assert.deepEqual(renewals.map((r) => [r.latenessMs, r.requestMs, r.ok]), [[0, 0, true], [2_000, 2_000, true]]);
  stop.abort();
  await done;
});

test('run: a timer that fires late (a busy main thread) counts as lateness, not as request time; the schedule holds', async () => {
  const { lease, clock, renewals } = setup();
  const stop = new AbortController();
  const done = lease.run(stop.signal);
  assert.equal(await clock.nextSleep(), 10_000);
  clock.step(10_700); // the timer due at 10 s fires at 10.7 s
  assert.equal(await clock.nextSleep(), 9_300, 're-armed against the schedule (due at 20 s), not 10 s after the late one');
  clock.step(9_300);
  assert.equal(await clock.nextSleep(), 10_000);
  assert.deepEqual(renewals.map((r) => [r.latenessMs, r.requestMs, r.ok]), [[0, 0, true], [700, 0, true], [0, 0, true]]);
  stop.abort();
  await done;
});

test('run: a paused lease sends nothing and keeps its schedule; resumed, it renews at the next due time', async () => {
  const { store, lease, clock, renewals } = setup();
  const stop = new AbortController();
  const done = lease.run(stop.signal);
  assert.equal(await clock.nextSleep(), 10_000);
  const opsBefore = store.ops.length;
  lease.pause();
  assert.equal(lease.paused, true);
  clock.step(10_000);
  assert.equal(await clock.nextSleep(), 10_000);
  clock.step(10_000);
  assert.equal(await clock.nextSleep(), 10_000);
  assert.equal(store.ops.length, opsBefore, 'no request while paused');
  assert.equal(renewals.length, 1, 'no renewal reported while paused');
  lease.resume();
  clock.step(10_000);
  assert.equal(await clock.nextSleep(), 10_000);
  assert.deepEqual(store.ops.slice(opsBefore).map((o) => o.op), ['update']);
  assert.deepEqual(renewals.map((r) => [r.ok, r.latenessMs]), [[true, 0], [true, 0]]);
  stop.abort();
  await done;
});
