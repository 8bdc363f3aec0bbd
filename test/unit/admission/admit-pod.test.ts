import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { admitPod } from '../../../src/main/admission/admit-pod.js';
import { podRequests } from '../../../src/shared/resources/pod-requests.js';
import { computeNodeResources, NodeResourcesError } from '../../../src/main/node-status/node-resources.js';

function ctr(name: string, cpu?: string, memory?: string, restartPolicy?: string): V1Container {
  const requests: Record<string, string> = {};
  if (cpu !== undefined) requests['cpu'] = cpu;
  if (memory !== undefined) requests['memory'] = memory;
  return { name, image: 'img', resources: { requests }, ...(restartPolicy ? { restartPolicy } : {}) };
}

function pod(name: string, containers: V1Container[], initContainers: V1Container[] = []): V1Pod {
  return { metadata: { name }, spec: { containers, initContainers } };
}

const node = { cpuMillis: 2000, memoryBytes: 4 * 1024 ** 3 };

test('OutOfpods with the kubelet message when maxPods is reached', () => {
  const active = Array.from({ length: 110 }, (_, i) => pod(`p${i}`, [ctr('c')]));
  const r = admitPod(pod('new', [ctr('c')]), active, node, 110);
  assert.deepEqual(r, { admit: false, reason: 'OutOfpods', message: "Node didn't have enough resource: pods, requested: 1, used: 110, capacity: 110" });
  assert.deepEqual(admitPod(pod('new', [ctr('c')]), active.slice(1), node, 110), { admit: true });
});

test('OutOfcpu: requests in millicores against allocatable minus used', () => {
  const active = [pod('a', [ctr('c', '1500m')]), pod('b', [ctr('c', '300m')])];
  const r = admitPod(pod('new', [ctr('c', '500m')]), active, node, 110);
  assert.deepEqual(r, { admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 500, used: 1800, capacity: 2000" });
  assert.deepEqual(admitPod(pod('new', [ctr('c', '200m')]), active, node, 110), { admit: true });
});

test('OutOfmemory: bytes; cpu is checked before memory; a pod requesting nothing always fits', () => {
  const active = [pod('a', [ctr('c', '100m', '3Gi')])];
  const r = admitPod(pod('new', [ctr('c', '100m', '2Gi')]), active, node, 110);
  assert.equal(r.admit, false);
  if (!r.admit) {
    assert.equal(r.reason, 'OutOfmemory');
    assert.equal(r.message, `Node didn't have enough resource: memory, requested: ${2 * 1024 ** 3}, used: ${3 * 1024 ** 3}, capacity: ${4 * 1024 ** 3}`);
  }
  const both = admitPod(pod('new', [ctr('c', '5', '10Gi')]), active, node, 110);
  assert.equal(!both.admit && both.reason, 'OutOfcpu');
  const full = [pod('hog', [ctr('c', '2', '4Gi')])];
  assert.deepEqual(admitPod(pod('besteffort', [ctr('c')]), full, node, 110), { admit: true });
});

test('init containers count as max(init) against sum(app); sidecars add to both', () => {
  // app sum 300m, largest init 1 → 1000m
  assert.equal(podRequests(pod('p', [ctr('a', '100m'), ctr('b', '200m')], [ctr('i1', '1'), ctr('i2', '500m')])).cpuMillis, 1000);
  // app sum wins when larger
  assert.equal(podRequests(pod('p', [ctr('a', '2')], [ctr('i', '1')])).cpuMillis, 2000);
  // a sidecar (restartPolicy Always) runs alongside later inits and the app containers
  const withSidecar = pod('p', [ctr('a', '100m', '64Mi')], [ctr('side', '200m', '32Mi', 'Always'), ctr('i', '1', '16Mi')]);
  assert.deepEqual(podRequests(withSidecar), { cpuMillis: 1200, memoryBytes: 96 * 1024 ** 2, ephemeralStorageBytes: 0 });
  // overhead is added on top
  const oh = pod('p', [ctr('a', '100m')]);
  oh.spec!.overhead = { cpu: '50m' };
  assert.equal(podRequests(oh).cpuMillis, 150);
  // admission uses the same arithmetic
  const r = admitPod(pod('new', [ctr('a', '100m')], [ctr('i', '1900m')]), [pod('x', [ctr('c', '200m')])], node, 110);
  assert.equal(!r.admit && r.message, "Node didn't have enough resource: cpu, requested: 1900, used: 200, capacity: 2000");
});

test('node allocatable (the one admission uses): the machine, minus reserved, overridable by --node-allocatable', () => {
  const machine = { cpus: 8, memoryBytes: 16 * 1024 ** 3, ephemeralStorageBytes: undefined };
  const flags = { maxPods: 110, systemReserved: {}, kubeReserved: {}, allocatableOverride: {} };
  assert.deepEqual(computeNodeResources(machine, flags).admission, { cpuMillis: 8000, memoryBytes: 16 * 1024 ** 3 });
  assert.deepEqual(computeNodeResources(machine, { ...flags, allocatableOverride: { cpu: '2', memory: '4Gi' } }).admission, { cpuMillis: 2000, memoryBytes: 4 * 1024 ** 3 });
  assert.deepEqual(computeNodeResources(machine, { ...flags, allocatableOverride: { cpu: '1500m' } }).admission, { cpuMillis: 1500, memoryBytes: 16 * 1024 ** 3 });
  assert.deepEqual(computeNodeResources(machine, { ...flags, systemReserved: { cpu: '500m' }, kubeReserved: { memory: '1Gi' } }).admission, { cpuMillis: 7500, memoryBytes: 15 * 1024 ** 3 });
  assert.deepEqual(computeNodeResources(machine, { ...flags, allocatableOverride: { 'ephemeral-storage': '1G' } }).admission, { cpuMillis: 8000, memoryBytes: 16 * 1024 ** 3, ephemeralStorageBytes: 1e9 });
  assert.throws(() => computeNodeResources(machine, { ...flags, allocatableOverride: { cpu: 'lots' } }), (e: unknown) => e instanceof NodeResourcesError && e.code === 'ERR_NODE_RESOURCES');
  assert.throws(() => computeNodeResources(machine, { ...flags, allocatableOverride: { gpu: '1' } }), NodeResourcesError);
});
