import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { PodConfig } from '../../../src/main/config/pod-config.js';
import type { PodUpdate } from '../../../src/shared/manifest/pod-update.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { ConfigError } from '../../../src/shared/manifest/config-errors.js';
import { rfc3339Nano } from '../../../src/main/config/pod-config-diff.js';

function pod(uid: string, name = uid, extra: Partial<V1Pod> = {}): V1Pod {
  return {
    metadata: { uid, name, namespace: 'default', annotations: { 'kubernetes.io/config.hash': uid } },
    spec: { containers: [{ name: 'c', image: 'img:1' }] },
    ...extra,
  };
}

function drain(cfg: PodConfig): string[] {
  const out: string[] = [];
  for (let u = cfg.tryNext(); u !== undefined; u = cfg.tryNext()) out.push(`${u.op}:${u.source}:${u.pods.map((p) => p.metadata?.uid).join(',')}`);
  return out;
}

function setup(capacity?: number): { cfg: PodConfig; clock: FakeClock; errors: ConfigError[] } {
  const clock = new FakeClock(Date.UTC(2024, 0, 2, 3, 4, 5, 120));
  const errors: ConfigError[] = [];
  const cfg = new PodConfig({ clock, logger: silentLogger, onError: (e) => errors.push(e), ...(capacity ? { queueCapacity: capacity } : {}) });
  return { cfg, clock, errors };
}

test('incremental sequence: ADD, unchanged, UPDATE, RECONCILE, DELETE, REMOVE', () => {
  const { cfg } = setup();
  const file = cfg.channel('file');
  file.set([pod('a'), pod('b')]);
  assert.deepEqual(drain(cfg), ['ADD:file:a,b']);
  file.set([pod('a'), pod('b')]); // equal content, new objects
  assert.deepEqual(drain(cfg), []);
  file.set([pod('a', 'a', { spec: { containers: [{ name: 'c', image: 'img:2' }] } }), pod('b')]);
  assert.deepEqual(drain(cfg), ['UPDATE:file:a']);
  file.set([pod('a', 'a', { spec: { containers: [{ name: 'c', image: 'img:2' }] }, status: { phase: 'Running' } }), pod('b')]);
  assert.deepEqual(drain(cfg), ['RECONCILE:file:a']);
  const deleting = pod('b');
  deleting.metadata!.deletionTimestamp = new Date(0);
  deleting.metadata!.deletionGracePeriodSeconds = 30;
  file.set([pod('a', 'a', { spec: { containers: [{ name: 'c', image: 'img:2' }] }, status: { phase: 'Running' } }), deleting]);
  assert.deepEqual(drain(cfg), ['DELETE:file:b']);
  file.set([]);
  assert.deepEqual(drain(cfg), ['REMOVE:file:a,b']);
});

test('an edited static pod (new uid) is REMOVEd then ADDed, in the kubelet order within one SET', () => {
  const { cfg } = setup();
  const file = cfg.channel('file');
  file.set([pod('old', 'web'), pod('keep')]);
  drain(cfg);
  file.set([pod('new', 'web'), pod('keep', 'keep', { metadata: { uid: 'keep', name: 'keep', namespace: 'default', labels: { x: 'y' } } })]);
  assert.deepEqual(drain(cfg), ['REMOVE:file:old', 'ADD:file:new', 'UPDATE:file:keep']);
});

test('config.seen is stamped at first sight and kept; kubelet-local annotations never cause UPDATE', () => {
  const { cfg, clock } = setup();
  const file = cfg.channel('file');
  file.set([pod('a')]);
  const [add] = [cfg.tryNext()];
  assert.equal(add?.pods[0]?.metadata?.annotations?.['kubernetes.io/config.seen'], '2024-01-02T03:04:05.12Z');
  assert.equal(add?.pods[0]?.metadata?.annotations?.['kubernetes.io/config.source'], 'file');
  clock.step(5000);
  const p = pod('a');
  p.metadata!.annotations!['kubernetes.io/config.seen'] = 'something else';
  file.set([p]);
  assert.deepEqual(drain(cfg), []);
  file.set([pod('a', 'a', { metadata: { uid: 'a', name: 'a', namespace: 'default', annotations: { user: 'x' } } })]);
  const upd = cfg.tryNext();
  assert.equal(upd?.op, 'UPDATE');
  assert.equal(upd?.pods[0]?.metadata?.annotations?.['kubernetes.io/config.seen'], '2024-01-02T03:04:05.12Z');
  assert.equal(upd?.pods[0]?.metadata?.annotations?.['user'], 'x');
  assert.equal(rfc3339Nano(Date.UTC(2024, 0, 1)), '2024-01-01T00:00:00Z');
});

test('sourcesReady waits for every registered source; an empty first SET sends an empty ADD', () => {
  const { cfg } = setup();
  const file = cfg.channel('file');
  const http = cfg.channel('http');
  assert.equal(cfg.sourcesReady(), false);
  file.set([]);
  assert.equal(cfg.sourcesReady(), false);
  assert.deepEqual(drain(cfg), ['ADD:file:']);
  http.set([pod('h')]);
  assert.equal(cfg.sourcesReady(), true);
  assert.deepEqual(drain(cfg), ['ADD:http:h']);
  file.set([]);
  assert.deepEqual(drain(cfg), []); // only the first empty SET signals
  assert.deepEqual(cfg.mergedState().map((p) => p.metadata?.uid), ['h']);
});

test('sources are independent: one source removing its pods does not touch another', () => {
  const { cfg } = setup();
  cfg.channel('file').set([pod('f')]);
  cfg.channel('http').set([pod('h')]);
  drain(cfg);
  cfg.channel('http').set([]);
  assert.deepEqual(drain(cfg), ['REMOVE:http:h']);
  assert.deepEqual(cfg.mergedState().map((p) => p.metadata?.uid), ['f']);
});

test('duplicate names within a SET: the first is kept, the later rejected with ERR_MANIFEST_DUPLICATE', () => {
  const { cfg, errors } = setup();
  cfg.channel('http').set([pod('u1', 'web'), pod('u2', 'web'), pod('u3', 'api')]);
  assert.deepEqual(drain(cfg), ['ADD:http:u1,u3']);
  assert.equal(errors.length, 1);
  assert.equal(errors[0]?.code, 'ERR_MANIFEST_DUPLICATE');
});

test('emitted pods are one frozen object per version, shared with the source: no consumer can change them (issue 15)', () => {
  const { cfg } = setup();
  const file = cfg.channel('file');
  const p = pod('a');
  file.set([p]);
  const added = cfg.tryNext()!.pods[0]!;
  assert.ok(Object.isFrozen(added) && Object.isFrozen(added.spec!.containers[0]), 'deeply frozen');
  assert.throws(() => {
    added.spec!.containers[0]!.image = 'mutated';
  }, TypeError);
  assert.equal(cfg.mergedState()[0]?.spec?.containers[0]?.image, 'img:1');
  assert.equal(p.metadata?.annotations?.['kubernetes.io/config.seen'], undefined, 'the source object is not modified');
  assert.equal(added.spec, p.spec, 'the spec is the source\'s, not a copy');
  // A new version is a new object; the previous one stays as it was.
  const p2 = pod('a');
  p2.spec!.containers[0]!.image = 'img:2';
  file.set([p2]);
  const updated = cfg.tryNext()!;
  assert.equal(updated.op, 'UPDATE');
  assert.notEqual(updated.pods[0], added);
  assert.equal(updated.pods[0]?.spec?.containers[0]?.image, 'img:2');
  assert.equal(added.spec?.containers[0]?.image, 'img:1');
  assert.equal(updated.pods[0]?.metadata?.annotations?.['kubernetes.io/config.seen'], added.metadata?.annotations?.['kubernetes.io/config.seen'], 'config.seen kept');
});

test('bounded queue: SETs arriving while full are parked and coalesced per source (latest wins)', () => {
  const { cfg } = setup(2);
  const file = cfg.channel('file');
  const http = cfg.channel('http');
  file.set([pod('a')]);
  http.set([pod('h')]);
  assert.equal(cfg.queued, 2);
  file.set([pod('a'), pod('b')]); // parked
  file.set([pod('a'), pod('c')]); // replaces the parked SET: b is never seen
  http.set([]); // parked behind file
  assert.equal(cfg.queued, 2);
  const seen: string[] = [];
  for (let u = cfg.tryNext(); u !== undefined; u = cfg.tryNext()) seen.push(`${u.op}:${u.source}:${u.pods.map((p) => p.metadata?.uid).join(',')}`);
  assert.deepEqual(seen, ['ADD:file:a', 'ADD:http:h', 'ADD:file:c', 'REMOVE:http:h']);
});

test('async consumption: next() waits for an update; waitReady() does not consume; close() ends iteration', async () => {
  const { cfg } = setup();
  const file = cfg.channel('file');
  const pending = cfg.next();
  const ready = cfg.waitReady();
  file.set([pod('a')]);
  await ready;
  const u = await pending;
  assert.equal(u?.op, 'ADD');
  file.set([pod('a'), pod('b')]);
  await cfg.waitReady();
  assert.equal(cfg.queued, 1);
  const ac = new AbortController();
  cfg.tryNext();
  const aborted = cfg.waitReady(ac.signal);
  ac.abort(new Error('stop'));
  await assert.rejects(aborted, /stop/);
  file.set([]);
  cfg.close();
  file.set([pod('z')]); // ignored after close
  const rest: PodUpdate[] = [];
  for await (const x of cfg) rest.push(x);
  assert.deepEqual(rest.map((x) => x.op), ['REMOVE']);
});

test('options are validated up front', () => {
  assert.throws(() => new PodConfig({ clock: new FakeClock(), logger: silentLogger, queueCapacity: 0 }), (e: unknown) => e instanceof ConfigError && e.code === 'ERR_CONFIG_OPTION');
});
