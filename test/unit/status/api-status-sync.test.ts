/**
 * ApiStatusSync with fakes behind its roles (writer/deleter, throttle): coalescing, unchanged
 * statuses not sent, first-Running priority under a throttle, UID mismatch (422) dropped,
 * terminal phase never going back, second-precision timestamps, graceful-deletion order, and
 * backoff while the server fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { SignalClock } from '../node-status/signal-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { ApiError } from '../../../src/main/apiserver/api-errors.js';
import type { PodDeleter, PodRef, PodStatusWriter, RequestOptions } from '../../../src/main/apiserver/api-roles.js';
import type { RequestPriority, RequestThrottle } from '../../../src/main/apiserver/token-bucket.js';
import { ApiStatusSync, type PatchResult } from '../../../src/main/status/api-status-sync.js';

interface Call {
  kind: 'patch' | 'delete';
  ref: PodRef;
  body: Record<string, unknown> | undefined;
  tokenHeld: boolean;
  resolve(): void;
  reject(err: unknown): void;
}

/** Records every write; each call waits for the test to resolve/reject it unless `auto`. */
class FakeApi implements PodStatusWriter, PodDeleter {
  readonly calls: Call[] = [];
  auto = true;
  #waiters: Array<(c: Call) => void> = [];
  #push(kind: Call['kind'], ref: PodRef, body: Record<string, unknown> | undefined, opts: RequestOptions | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const c: Call = { kind, ref, body, tokenHeld: opts?.tokenHeld === true, resolve, reject };
      this.calls.push(c);
      if (this.auto) resolve();
      this.#waiters.shift()?.(c);
    });
  }
  patchPodStatus(ref: PodRef, status: Record<string, unknown>, opts?: RequestOptions): Promise<void> {
    return this.#push('patch', ref, status, opts);
  }
  deletePod(ref: PodRef, opts?: RequestOptions): Promise<void> {
    return this.#push('delete', ref, undefined, opts);
  }
  /** Resolves when the call number `n` (0-based) has been made (bounded). */
  call(n: number, ms = 5_000): Promise<Call> {
    if (this.calls.length > n) return Promise.resolve(this.calls[n]!);
    return new Promise<Call>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`call #${n} not made within ${ms} ms (made ${this.calls.length})`)), ms);
      const check = (): void => {
        if (this.calls.length > n) {
          clearTimeout(t);
          resolve(this.calls[n]!);
        } else this.#waiters.push(check);
      };
      this.#waiters.push(check);
    });
  }
}

/** A throttle that grants tokens only when the test says so, recording the priority asked. */
class GateThrottle implements RequestThrottle {
  readonly asked: RequestPriority[] = [];
  #queue: Array<() => void> = [];
  #free = 0;
  acquire(priority: RequestPriority, signal?: AbortSignal): Promise<void> {
    this.asked.push(priority);
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      this.#queue.push(resolve);
      signal?.addEventListener('abort', () => reject(new ApiError('ERR_API_ABORTED', 'aborted')), { once: true });
    });
  }
  grant(n = 1): void {
    for (let i = 0; i < n; i++) {
      const w = this.#queue.shift();
      if (w) w();
      else this.#free++;
    }
  }
}

const open: RequestThrottle = { acquire: () => Promise.resolve() };

function pod(name: string, uid: string, status: V1PodStatus = { phase: 'Pending' }, deleting = false): V1Pod {
  return {
    metadata: { name, namespace: 'ns', uid, annotations: { 'kubernetes.io/config.source': 'api' }, ...(deleting ? { deletionTimestamp: new Date('2026-11-21T10:00:00Z') } : {}) },
    spec: { containers: [{ name: 'c', image: 'i' }] },
    status,
  };
}

const running = (t = '2026-11-21T10:00:01.250Z', ready = true): V1PodStatus => ({
  phase: 'Running',
  startTime: new Date('2026-11-21T10:00:00.900Z'),
  conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date(t) }],
  containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready, restartCount: 0, state: { running: { startedAt: new Date(t) } } }],
});

function setup(throttle: RequestThrottle = open, concurrency = 1) {
  const clock = new SignalClock(Date.parse('2026-11-21T10:00:00Z'));
  const api = new FakeApi();
  const results: PatchResult[] = [];
  let coalesced = 0;
  const synced: number[] = [];
  const sync = new ApiStatusSync({
    writer: api, deleter: api, throttle, clock, logger: silentLogger, concurrency,
    onPatch: (r) => results.push(r), onCoalesced: () => coalesced++, onSynced: (s) => synced.push(s),
  });
  return { clock, api, sync, results, synced, get coalesced() { return coalesced; } };
}

test('coalescing: statuses arriving while a write waits for its token are merged into the newest one', async () => {
  const gate = new GateThrottle();
  const s = setup(gate);
  s.sync.start();
  const p = pod('a', 'u-a');
  s.sync.setStatus(p, { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] });
  s.sync.setStatus(p, running('2026-11-21T10:00:01Z', false));
  s.sync.setStatus(p, running('2026-11-21T10:00:01Z', true));
  gate.grant(1);
  const c = await s.api.call(0);
  assert.equal(c.kind, 'patch');
  assert.equal(c.tokenHeld, true);
  assert.equal((c.body as { phase?: string }).phase, 'Running');
  assert.equal(((c.body as { containerStatuses: Array<{ ready: boolean }> }).containerStatuses[0]!).ready, true, 'only the newest is written');
  assert.equal(s.coalesced, 2);
  // Nothing else to write: a second token produces no request; the next status does.
  s.sync.setStatus(p, running('2026-11-21T10:00:01.700Z', true)); // same second: unchanged
  s.sync.setStatus(pod('marker', 'u-m'), running());
  gate.grant(2);
  const m = await s.api.call(1);
  assert.equal(m.ref.uid, 'u-m');
  assert.equal(s.api.calls.length, 2);
  await s.sync.close();
});

test('a status equal to what the API already holds is not written (adoption after a restart)', async () => {
  const s = setup();
  s.sync.start();
  const st = running();
  // The API pod carries the status an earlier agent run wrote (strings, second precision).
  const adopted = pod('a', 'u-a', JSON.parse(JSON.stringify({ ...st, qosClass: 'BestEffort' })) as V1PodStatus);
  (adopted.status!.startTime as unknown) = '2026-11-21T10:00:00Z';
  (adopted.status!.conditions![0]!.lastTransitionTime as unknown) = '2026-11-21T10:00:01Z';
  (adopted.status!.containerStatuses![0]!.state!.running!.startedAt as unknown) = '2026-11-21T10:00:01Z';
  s.sync.setStatus(adopted, st);
  s.sync.setStatus(pod('marker', 'u-m'), running());
  const first = await s.api.call(0);
  assert.equal(first.ref.uid, 'u-m', 'the adopted pod wrote nothing');
  await s.sync.close();
});

test('timestamps are written at second precision', async () => {
  const s = setup();
  s.sync.start();
  s.sync.setStatus(pod('a', 'u-a'), running('2026-11-21T10:00:01.999Z'));
  const c = await s.api.call(0);
  const body = c.body as { startTime: string; conditions: Array<{ lastTransitionTime: string }>; containerStatuses: Array<{ state: { running: { startedAt: string } } }> };
  assert.equal(body.startTime, '2026-11-21T10:00:00Z');
  assert.equal(body.conditions[0]!.lastTransitionTime, '2026-11-21T10:00:01Z');
  assert.equal(body.containerStatuses[0]!.state.running.startedAt, '2026-11-21T10:00:01Z');
  await s.sync.close();
});

test('priority: a first Running status is written before refreshes of pods already reported', async () => {
  const gate = new GateThrottle();
  const s = setup(gate);
  s.sync.start();
  const old = pod('old', 'u-old', running());
  s.sync.setStatus(old, running('2026-11-21T10:00:05Z', false)); // refresh of a Running pod: normal
  s.sync.setStatus(pod('p1', 'u-p1'), { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] }); // not Running yet: normal
  s.sync.setStatus(pod('new', 'u-new'), running()); // first Running: high
  gate.grant(3);
  const order = [(await s.api.call(0)).ref.name, (await s.api.call(1)).ref.name, (await s.api.call(2)).ref.name];
  assert.deepEqual(order, ['new', 'old', 'p1']);
  await s.sync.close();
});

test('UID mismatch (422) drops the status and the pod: a recreated pod never gets the old status', async () => {
  const s = setup();
  s.api.auto = false;
  s.sync.start();
  const oldPod = pod('same-name', 'u-old');
  s.sync.setStatus(oldPod, running());
  const c = await s.api.call(0);
  assert.equal(c.ref.uid, 'u-old', 'the write carries the old UID as precondition');
  c.reject(new ApiError('ERR_API_INVALID', 'metadata.uid: field is immutable', 422));
  s.sync.setStatus(oldPod, { phase: 'Failed' });
  s.sync.setStatus(pod('marker', 'u-m'), running());
  const next = await s.api.call(1);
  assert.equal(next.ref.uid, 'u-m');
  next.resolve();
  assert.deepEqual(s.results, ['dropped']);
  await s.sync.close();
});

test('a terminal phase never goes back', async () => {
  const s = setup();
  s.sync.start();
  const p = pod('a', 'u-a');
  s.sync.setStatus(p, { phase: 'Failed', reason: 'Evicted' });
  await s.api.call(0);
  s.sync.setStatus(p, running());
  s.sync.setStatus(pod('marker', 'u-m'), running());
  assert.equal((await s.api.call(1)).ref.uid, 'u-m');
  // Nor for a pod the API already has as Succeeded.
  s.sync.setStatus(pod('done', 'u-d', { phase: 'Succeeded' }), running());
  s.sync.setStatus(pod('marker2', 'u-m2'), running());
  assert.equal((await s.api.call(2)).ref.uid, 'u-m2');
  await s.sync.close();
});

test('graceful deletion: terminal status first, then DELETE (UID precondition) once the worker reports terminated', async () => {
  const s = setup();
  s.sync.start();
  const p = pod('a', 'u-a', running(), true);
  s.sync.podTerminated(p); // containers stopped; the terminal status follows
  s.sync.setStatus(p, { phase: 'Failed' });
  const patch = await s.api.call(0);
  const del = await s.api.call(1);
  assert.deepEqual([patch.kind, del.kind], ['patch', 'delete']);
  assert.equal(del.ref.uid, 'u-a');
  // A pod without deletionTimestamp that finished is not deleted.
  const q = pod('b', 'u-b');
  s.sync.setStatus(q, { phase: 'Succeeded' });
  s.sync.podTerminated(q);
  s.sync.setStatus(pod('marker', 'u-m'), running());
  assert.equal((await s.api.call(2)).ref.uid, 'u-b');
  assert.equal((await s.api.call(3)).ref.uid, 'u-m');
  assert.equal(s.api.calls.filter((c) => c.kind === 'delete').length, 1);
  await s.sync.close();
});

test('failures keep the status pending and pause with backoff 800 ms doubling; success resets it', async () => {
  const s = setup(open, 4);
  s.api.auto = false;
  s.sync.start();
  const p = pod('a', 'u-a');
  s.sync.setStatus(p, running());
  const pauses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const c = await s.api.call(i);
    const pause = s.clock.nextArm();
    c.reject(new ApiError('ERR_API_UNREACHABLE', 'ECONNREFUSED'));
    // The senders sleep until the pause ends: wait for that timer to be armed, then step exactly to it.
    const due = await pause;
    assert.equal(s.clock.nextTimerAt()! - s.clock.now(), due, 'the pause is the earliest timer');
    pauses.push(due);
    assert.equal(s.api.calls.length, i + 1, 'no retry before the pause ends');
    s.clock.step(due);
  }
  assert.deepEqual(pauses, [800, 1600, 3200]);
  const ok = await s.api.call(3);
  ok.resolve();
  assert.equal((ok.body as { phase: string }).phase, 'Running', 'the same status was kept and retried');
  assert.deepEqual(s.results, ['failed', 'failed', 'failed']);
  await s.sync.close();
});

/** A status change that is queued at normal priority (not a first Running). */
const normalMark: V1PodStatus = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] };

test('a status equal to the one being written is not written again (no double PATCH per change)', async () => {
  const s = setup();
  s.api.auto = false;
  s.sync.start();
  const p = pod('a', 'u-a');
  s.sync.setStatus(p, running());
  const first = await s.api.call(0);
  s.sync.setStatus(p, running()); // the worker reports the same status while the PATCH is in flight
  first.resolve();
  s.sync.setStatus(pod('marker', 'u-m'), normalMark); // normal priority, like the duplicate would be
  const next = await s.api.call(1);
  next.resolve();
  assert.equal(next.ref.uid, 'u-m');
  s.sync.setStatus(pod('marker2', 'u-m2'), normalMark);
  const last = await s.api.call(2);
  last.resolve();
  assert.equal(last.ref.uid, 'u-m2', 'no second PATCH of the same status');
  await s.sync.close();
});

test('version skew: fields a kubelet-written API status lacks (server drops them) do not make adopted pods rewrite', async () => {
  const s = setup();
  s.sync.start();
  const st = { ...running(), hostIPs: [{ ip: '10.0.0.1' }] } as V1PodStatus;
  const readBack = JSON.parse(JSON.stringify(running('2026-11-21T10:00:01Z'))) as V1PodStatus;
  (readBack.startTime as unknown) = '2026-11-21T10:00:00Z';
  s.sync.setStatus(pod('adopted', 'u-a', readBack), st);
  s.sync.setStatus(pod('marker', 'u-m'), normalMark); // normal priority, like the duplicate would be
  assert.equal((await s.api.call(0)).ref.uid, 'u-m');
  await s.sync.close();
});
