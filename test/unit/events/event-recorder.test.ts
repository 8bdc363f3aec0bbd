/**
 * EventRecorder with a scripted EventWriter and a fake clock: repeats become a PATCH of count and
 * lastTimestamp; the 10th distinct message of one (object, type, reason) is aggregated; the spam
 * filter lets 25 events of one object through, then 1 per 5 min; a full queue drops (counted);
 * a PATCH of an expired Event (404) creates it again; record() never waits for the server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../../src/main/apiserver/api-errors.js';
import type { EventWriter } from '../../../src/main/apiserver/object-roles.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { EventRecorder, type EventResult, type InvolvedObject } from '../../../src/main/events/event-recorder.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';

class FakeWriter implements EventWriter {
  readonly ops: { op: 'create' | 'patch'; ns: string; body: Record<string, unknown> }[] = [];
  gate: Promise<void> | undefined;
  patchFails: ApiError[] = [];
  async createEvent(ns: string, event: Record<string, unknown>): Promise<void> {
    await this.gate;
    this.ops.push({ op: 'create', ns, body: event });
  }
  async patchEvent(ns: string, _name: string, patch: Record<string, unknown>): Promise<void> {
    await this.gate;
    const e = this.patchFails.shift();
    if (e) throw e;
    this.ops.push({ op: 'patch', ns, body: patch });
  }
}

const pod: InvolvedObject = { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u1', fieldPath: 'spec.containers{c}' };

function setup(opts: { queueCapacity?: number } = {}) {
  const clock = new FakeClock();
  const writer = new FakeWriter();
  const results: EventResult[] = [];
  const r = new EventRecorder({ writer, clock, logger: silentLogger, host: 'n1', onResult: (x) => results.push(x), ...opts });
  r.start();
  return { clock, writer, results, r };
}

test('an event is created with the kubelet source; a repeat patches count and lastTimestamp', async () => {
  const { r, writer, clock } = setup();
  r.record(pod, 'Normal', 'Pulled', 'Container image "x" already present on machine');
  await r.idle();
  const ev = writer.ops[0]!.body;
  assert.equal(writer.ops[0]!.ns, 'ns');
  assert.deepEqual(ev['involvedObject'], { kind: 'Pod', apiVersion: 'v1', name: 'p', uid: 'u1', namespace: 'ns', fieldPath: 'spec.containers{c}' });
  assert.deepEqual(ev['source'], { component: 'kubelet', host: 'n1' });
  assert.equal(ev['count'], 1);
  assert.match(String((ev['metadata'] as { name: string }).name), /^p\.[0-9a-f]+$/);
  clock.step(5_000);
  r.record(pod, 'Normal', 'Pulled', 'Container image "x" already present on machine');
  await r.idle();
  assert.equal(writer.ops[1]!.op, 'patch');
  assert.equal(writer.ops[1]!.body['count'], 2);
  assert.notEqual(writer.ops[1]!.body['lastTimestamp'], ev['lastTimestamp']);
});

test('node events go to the default namespace', async () => {
  const { r, writer } = setup();
  r.record({ kind: 'Node', namespace: '', name: 'n1', uid: 'n1' }, 'Normal', 'NodeReady', 'Node n1 status is now: NodeReady');
  await r.idle();
  assert.equal(writer.ops[0]!.ns, 'default');
  assert.equal((writer.ops[0]!.body['involvedObject'] as { namespace?: string }).namespace, undefined);
});

test('the 10th distinct message of one reason is aggregated into one combined Event', async () => {
  const { r, writer } = setup();
  for (let i = 0; i < 12; i++) r.record(pod, 'Warning', 'Failed', `error ${i}`);
  await r.idle();
  const creates = writer.ops.filter((o) => o.op === 'create');
  assert.equal(creates.length, 10, '9 distinct + 1 combined');
  assert.equal(creates[9]!.body['message'], '(combined from similar events): error 9');
  const patches = writer.ops.filter((o) => o.op === 'patch');
  assert.deepEqual(patches.map((p) => [p.body['count'], p.body['message']]), [[2, '(combined from similar events): error 10'], [3, '(combined from similar events): error 11']]);
});

test('spam filter: 25 events of one object, then one per 5 minutes; other objects unaffected', async () => {
  const { r, writer, results, clock } = setup();
  for (let i = 0; i < 30; i++) r.record(pod, 'Warning', 'BackOff', 'Back-off restarting failed container c in pod p_ns(u1)');
  await r.idle();
  assert.equal(results.filter((x) => x === 'spam_filtered').length, 5);
  assert.equal(writer.ops.length, 25);
  r.record({ ...pod, name: 'q', uid: 'u2' }, 'Normal', 'Started', 'Started container c');
  clock.step(299_000);
  r.record(pod, 'Warning', 'BackOff', 'Back-off restarting failed container c in pod p_ns(u1)');
  clock.step(1_000);
  r.record(pod, 'Warning', 'BackOff', 'Back-off restarting failed container c in pod p_ns(u1)');
  await r.idle();
  assert.equal(writer.ops.length, 27, 'the other object and one refilled token');
  assert.equal(results.filter((x) => x === 'spam_filtered').length, 6);
});

test('a full queue drops (counted); record() does not wait for the server', async () => {
  const { r, writer, results } = setup({ queueCapacity: 3 });
  let open!: () => void;
  writer.gate = new Promise<void>((res) => (open = res));
  for (let i = 0; i < 6; i++) r.record({ ...pod, name: `p${i}`, uid: `u${i}` }, 'Normal', 'Created', 'Created container c');
  // Synchronous calls: the sender has taken nothing yet; three queued, three dropped, and every
  // record() returned while the server (the gate) had not answered anything.
  assert.equal(results.filter((x) => x === 'dropped').length, 3);
  assert.equal(r.queued, 3);
  open();
  await r.idle();
  assert.equal(writer.ops.length, 3);
  await r.close();
});

test('a PATCH of an expired Event (404) creates it again', async () => {
  const { r, writer } = setup();
  r.record(pod, 'Normal', 'Killing', 'Stopping container c');
  r.record(pod, 'Normal', 'Killing', 'Stopping container c');
  writer.patchFails.push(new ApiError('ERR_API_NOT_FOUND', 'not found', 404));
  await r.idle();
  assert.deepEqual(writer.ops.map((o) => o.op), ['create', 'create']);
  assert.equal(writer.ops[1]!.body['count'], 2);
});
