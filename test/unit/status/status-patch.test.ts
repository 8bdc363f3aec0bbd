/**
 * The status PATCH body (status-patch.ts) and ApiStatusSync writing through it: only the
 * conditions the kubelet owns are compared and written (a readiness gate set by another client is
 * never overwritten with an older copy); an owned condition without reason/message clears the
 * old ones (a strategic merge keeps what a patch does not name); podIPs/hostIPs the API holds
 * and the status lacks are deleted; top-level fields no longer reported are removed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { SignalClock } from '../node-status/signal-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import type { PodDeleter, PodRef, PodStatusWriter } from '../../../src/main/apiserver/api-roles.js';
import { ApiStatusSync } from '../../../src/main/status/api-status-sync.js';
import { statusPatchBody, withOwnedConditions } from '../../../src/main/status/status-patch.js';

const GATE = 'example.com/gate';

test('statusPatchBody: owned conditions only, reason/message cleared when absent, IP lists replaced, dropped fields nulled', () => {
  const status = {
    phase: 'Running',
    podIP: '10.0.0.2',
    podIPs: [{ ip: '10.0.0.2' }],
    hostIPs: [{ ip: '192.168.1.10' }],
    conditions: [
      { type: GATE, status: 'False' },
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-11-21T10:00:00Z' },
      { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [a]' },
    ],
  };
  assert.deepEqual(statusPatchBody(status, { phase: 'Pending', message: 'old', conditions: [], podIPs: [{ ip: '10.0.0.1' }], hostIPs: [{ ip: '192.168.1.10' }] }), {
    phase: 'Running',
    podIP: '10.0.0.2',
    podIPs: [{ ip: '10.0.0.2' }, { ip: '10.0.0.1', $patch: 'delete' }],
    hostIPs: [{ ip: '192.168.1.10' }],
    conditions: [
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-11-21T10:00:00Z', reason: null, message: null },
      { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [a]' },
    ],
    message: null,
  });
  assert.deepEqual(withOwnedConditions({ conditions: [{ type: GATE, status: 'True' }] }), {}, 'only foreign conditions: none written');
  // Nothing known of the API's IPs (a first write): the lists as they are, never a directive the
  // API server would copy verbatim into a list it does not hold yet.
  assert.deepEqual(statusPatchBody({ podIPs: [{ ip: '10.0.0.2' }] }, undefined), { podIPs: [{ ip: '10.0.0.2' }] });
  // The API pod's own IPs count when nothing was written yet.
  assert.deepEqual(statusPatchBody({ podIPs: [{ ip: '10.0.0.2' }] }, undefined, { podIPs: [{ ip: '10.0.0.9' }] }), { podIPs: [{ ip: '10.0.0.2' }, { ip: '10.0.0.9', $patch: 'delete' }] });
  const same = { phase: 'Running' };
  assert.equal(withOwnedConditions(same), same);
});

class FakeApi implements PodStatusWriter, PodDeleter {
  readonly bodies: Record<string, unknown>[] = [];
  #waiter: (() => void) | undefined;
  async patchPodStatus(_ref: PodRef, status: Record<string, unknown>): Promise<void> {
    this.bodies.push(status);
    this.#waiter?.();
  }
  async deletePod(): Promise<void> {}
  /** Resolves once `n` patches were made (bounded). */
  until(n: number, ms = 5_000): Promise<void> {
    if (this.bodies.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`only ${this.bodies.length} of ${n} patches within ${ms} ms`)), ms);
      this.#waiter = () => {
        if (this.bodies.length < n) return;
        clearTimeout(t);
        this.#waiter = undefined;
        resolve();
      };
    });
  }
}

function pod(status: V1PodStatus): V1Pod {
  return {
    metadata: { name: 'a', namespace: 'ns', uid: 'u-a', annotations: { 'kubernetes.io/config.source': 'api' } },
    spec: { readinessGates: [{ conditionType: GATE }], containers: [{ name: 'c', image: 'i' }] },
    status,
  };
}

test('ApiStatusSync: a gate condition is never written; a change of it alone is no write; Ready turning True clears its reason', async () => {
  const api = new FakeApi();
  const sync = new ApiStatusSync({ writer: api, deleter: api, throttle: { acquire: () => Promise.resolve() }, clock: new SignalClock(Date.parse('2026-11-21T10:00:00Z')), logger: silentLogger });
  sync.start();
  const notReady: V1PodStatus = {
    phase: 'Running',
    conditions: [{ type: GATE, status: 'False' }, { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: `the status of pod readiness gate "${GATE}" is not "True", but False` }],
  };
  // The API pod already carries the gate (set by its controller) and nothing of the kubelet's.
  const p = pod({ phase: 'Pending', conditions: [{ type: GATE, status: 'False' }] });
  sync.setStatus(p, notReady);
  await api.until(1);
  assert.deepEqual(api.bodies[0]!['conditions'], [{ type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: `the status of pod readiness gate "${GATE}" is not "True", but False` }]);
  // The worker's status differs only in its copy of the gate: nothing to write.
  sync.setStatus(p, { ...notReady, conditions: [{ type: GATE, status: 'True' }, notReady.conditions![1]!] });
  sync.setStatus(pod({ phase: 'Pending' }), { phase: 'Running', conditions: [{ type: GATE, status: 'True' }, { type: 'Ready', status: 'True' }] });
  await api.until(2);
  assert.equal(api.bodies.length, 2, 'the gate-only change was not written');
  assert.deepEqual(api.bodies[1]!['conditions'], [{ type: 'Ready', status: 'True', reason: null, message: null }]);
  await sync.close();
});

test('ApiStatusSync: a new sandbox IP deletes the old one (the API pod\'s at first, then what was written)', async () => {
  const api = new FakeApi();
  const sync = new ApiStatusSync({ writer: api, deleter: api, throttle: { acquire: () => Promise.resolve() }, clock: new SignalClock(Date.parse('2026-11-21T10:00:00Z')), logger: silentLogger });
  sync.start();
  const p = pod({ phase: 'Running', podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }] });
  sync.setStatus(p, { phase: 'Running', podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.2' }] });
  await api.until(1);
  assert.deepEqual(api.bodies[0]!['podIPs'], [{ ip: '10.0.0.2' }, { ip: '10.0.0.1', $patch: 'delete' }]);
  sync.setStatus(p, { phase: 'Running', podIP: '10.0.0.3', podIPs: [{ ip: '10.0.0.3' }] });
  await api.until(2);
  assert.deepEqual(api.bodies[1]!['podIPs'], [{ ip: '10.0.0.3' }, { ip: '10.0.0.2', $patch: 'delete' }]);
  await sync.close();
});
