import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { cpuSharesToWeight, milliCPUToQuota, milliCPUToShares, resourceConfigForPod } from '../../../src/shared/cgroups/cgroup-resources.js';
import { podLimits } from '../../../src/shared/resources/pod-requests.js';
import { podQOSClass } from '../../../src/shared/resources/pod-qos.js';

function c(name: string, requests?: Record<string, string>, limits?: Record<string, string>, extra: Partial<V1Container> = {}): V1Container {
  return { name, image: 'busybox', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) }, ...extra };
}
function pod(containers: V1Container[], initContainers: V1Container[] = [], overhead?: Record<string, string>): V1Pod {
  return { metadata: { name: 'p', uid: 'u1' }, spec: { containers, initContainers, ...(overhead ? { overhead } : {}) } };
}

test('conversions: shares, quota and cgroup v2 weight, as the kubelet and runc compute them', () => {
  assert.equal(milliCPUToShares(0), 2);
  assert.equal(milliCPUToShares(1), 2);
  assert.equal(milliCPUToShares(100), 102);
  assert.equal(milliCPUToShares(1000), 1024);
  assert.equal(milliCPUToShares(10_000_000), 262144);
  assert.equal(milliCPUToQuota(0, 100_000), 0);
  assert.equal(milliCPUToQuota(5, 100_000), 1000, 'at least 1 ms');
  assert.equal(milliCPUToQuota(250, 100_000), 25_000);
  assert.equal(cpuSharesToWeight(2), 1);
  assert.equal(cpuSharesToWeight(1024), 39);
  assert.equal(cpuSharesToWeight(262144), 10000);
});

test('Guaranteed: shares, quota and memory limit of the summed containers', () => {
  const p = pod([c('a', { cpu: '250m', memory: '64Mi' }, { cpu: '250m', memory: '64Mi' }), c('b', undefined, { cpu: '250m', memory: '64Mi' })]);
  // "b" has limits only; the API server defaults its requests to them (static pods are defaulted too).
  p.spec!.containers[1]!.resources!.requests = { cpu: '250m', memory: '64Mi' };
  assert.equal(podQOSClass(p), 'Guaranteed');
  assert.deepEqual(resourceConfigForPod(p), { cpuShares: 512, cpuQuotaUs: 50_000, cpuPeriodUs: 100_000, memoryLimitBytes: 128 * 1024 * 1024 });
});

test('Burstable: quota and memory only when every container (init included) declares that limit', () => {
  const all = pod([c('a', { cpu: '100m', memory: '32Mi' }, { cpu: '500m', memory: '64Mi' })], [c('init', { cpu: '100m' }, { cpu: '1', memory: '16Mi' })]);
  assert.equal(podQOSClass(all), 'Burstable');
  // limits: max(app 500m, init 1000m) = 1000m; memory max(64Mi, 16Mi)
  assert.deepEqual(resourceConfigForPod(all), { cpuShares: 102, cpuQuotaUs: 100_000, cpuPeriodUs: 100_000, memoryLimitBytes: 64 * 1024 * 1024 });
  const partial = pod([c('a', { cpu: '100m' }, { cpu: '500m' }), c('b', { memory: '10Mi' }, { memory: '20Mi' })]);
  assert.deepEqual(resourceConfigForPod(partial), { cpuShares: 102 }, 'b has no cpu limit, a has no memory limit');
  const memOnly = pod([c('a', { memory: '10Mi' }, { memory: '20Mi' })]);
  assert.deepEqual(resourceConfigForPod(memOnly), { cpuShares: 2, memoryLimitBytes: 20 * 1024 * 1024 });
});

test('BestEffort: minimum shares only', () => {
  assert.deepEqual(resourceConfigForPod(pod([c('a'), c('b')])), { cpuShares: 2 });
});

test('overhead counts in: requests always, limits when non-zero; sidecars add to the app sum', () => {
  const p = pod([c('a', { cpu: '1', memory: '100Mi' }, { cpu: '1', memory: '100Mi' })], [], { cpu: '250m', memory: '20Mi' });
  assert.deepEqual(resourceConfigForPod(p), { cpuShares: 1280, cpuQuotaUs: 125_000, cpuPeriodUs: 100_000, memoryLimitBytes: 120 * 1024 * 1024 });
  const side = pod([c('a', { cpu: '1', memory: '64Mi' }, { cpu: '1', memory: '64Mi' })], [c('s', { cpu: '500m', memory: '32Mi' }, { cpu: '500m', memory: '32Mi' }, { restartPolicy: 'Always' })]);
  assert.deepEqual(podLimits(side).limits.cpuMillis, 1500);
  assert.deepEqual(resourceConfigForPod(side), { cpuShares: 1536, cpuQuotaUs: 150_000, cpuPeriodUs: 100_000, memoryLimitBytes: 96 * 1024 * 1024 });
  const noLimits = pod([c('a', { cpu: '1' })], [], { cpu: '250m' });
  assert.equal(podLimits(noLimits).limits.cpuMillis, 0, 'overhead is not added to an unset limit');
});
