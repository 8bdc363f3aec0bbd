/**
 * The fault tests' verdict on what the runtime holds (test/e2e/runtime-kill-scenario.ts audit):
 * what the kubelet's container GC keeps (one dead instance per container, older than the running
 * one) passes; a real leftover — a second dead instance, a CREATED instance never started, an
 * UNKNOWN one, an EXITED one newer than the running one, a container whose sandbox is gone —
 * and a duplicate fail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RuntimeView } from '../../e2e/agent-harness.js';
import { audit } from '../../e2e/runtime-kill-scenario.js';

type Instance = { id: string; name: string; state: string; attempt: number; sandboxId: string };

function pod(containers: Omit<Instance, 'sandboxId' | 'name'>[], opts: { sandboxes?: { id: string; state: string }[]; sandboxId?: string } = {}): RuntimeView {
  const sandboxes = opts.sandboxes ?? [{ id: 'sb1', state: 'SANDBOX_READY' }];
  return new Map([['uid-1', { sandboxes, containers: containers.map((c) => ({ ...c, name: 'web', sandboxId: opts.sandboxId ?? 'sb1' })) }]]);
}

const RUNNING1 = { id: 'run0000000001', state: 'CONTAINER_RUNNING', attempt: 1 };

test('a running pod with one older EXITED instance (an interrupted start) converged: kept, not left over', () => {
  const a = audit(pod([RUNNING1, { id: 'dead000000000', state: 'CONTAINER_EXITED', attempt: 0 }]));
  assert.equal(a.runningPods, 1);
  assert.deepEqual(a.leftovers, []);
  assert.deepEqual(a.duplicates, []);
  assert.equal(a.keptDead.length, 1);
  assert.match(a.keptDead[0]!, /web#0 dead00000000 CONTAINER_EXITED/);
});

test('a second dead instance of the same container is a leftover (the GC keeps one)', () => {
  const a = audit(pod([{ ...RUNNING1, attempt: 2 }, { id: 'dead000000001', state: 'CONTAINER_EXITED', attempt: 1 }, { id: 'dead000000000', state: 'CONTAINER_EXITED', attempt: 0 }]));
  assert.deepEqual(a.leftovers, ['uid-1: container web#0 dead00000000 CONTAINER_EXITED']);
  assert.equal(a.keptDead.length, 1);
});

test('a CREATED instance never started beside the running one is a leftover', () => {
  const a = audit(pod([RUNNING1, { id: 'crea000000000', state: 'CONTAINER_CREATED', attempt: 0 }]));
  assert.deepEqual(a.leftovers, ['uid-1: container web#0 crea00000000 CONTAINER_CREATED']);
  assert.deepEqual(a.keptDead, []);
});

test('an UNKNOWN instance is a leftover (it may still run)', () => {
  const a = audit(pod([RUNNING1, { id: 'unkn000000000', state: 'CONTAINER_UNKNOWN', attempt: 0 }]));
  assert.equal(a.leftovers.length, 1);
});

test('an EXITED instance newer than the running one is a leftover, not the kept one', () => {
  const a = audit(pod([RUNNING1, { id: 'dead000000002', state: 'CONTAINER_EXITED', attempt: 2 }]));
  assert.equal(a.leftovers.length, 1);
  assert.deepEqual(a.keptDead, []);
});

test('two running instances of a container are a duplicate; two ready sandboxes too', () => {
  const a = audit(pod([RUNNING1, { id: 'run0000000002', state: 'CONTAINER_RUNNING', attempt: 2 }]));
  assert.deepEqual(a.duplicates, ['uid-1: 2 running instances of web']);
  assert.equal(a.runningPods, 0);
  const b = audit(pod([RUNNING1], { sandboxes: [{ id: 'sb1', state: 'SANDBOX_READY' }, { id: 'sb2', state: 'SANDBOX_READY' }] }));
  assert.deepEqual(b.duplicates, ['uid-1: 2 ready sandboxes']);
});

test('a container whose sandbox is not listed is a leftover (an orphan)', () => {
  const a = audit(pod([RUNNING1], { sandboxId: 'gone' }));
  assert.equal(a.leftovers.length, 1);
  assert.match(a.leftovers[0]!, /not listed/);
});

test('a dead instance while nothing runs is not "kept": the pod has not converged', () => {
  const a = audit(pod([{ id: 'dead000000000', state: 'CONTAINER_EXITED', attempt: 0 }]));
  assert.equal(a.runningPods, 0);
  assert.equal(a.leftovers.length, 1);
});
