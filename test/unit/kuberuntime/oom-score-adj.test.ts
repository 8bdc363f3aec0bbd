import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { containerOOMScoreAdjust } from '../../../workers/kuberuntime/oom-score-adj.js';

const CAP = 10 * 1024 ** 3; // 10 GiB

function c(name: string, memReq?: string, limits?: Record<string, string>, extra: Partial<V1Container> = {}): V1Container {
  return { name, image: 'b', resources: { ...(memReq ? { requests: { memory: memReq } } : {}), ...(limits ? { limits } : {}) }, ...extra };
}
function pod(containers: V1Container[], extra: Partial<V1Pod['spec']> = {}, annotations: Record<string, string> = { 'kubernetes.io/config.source': 'api' }): V1Pod {
  return { metadata: { name: 'p', uid: 'u', annotations }, spec: { containers, ...extra } };
}

test('Guaranteed -997, BestEffort 1000', () => {
  const g = pod([{ name: 'a', image: 'b', resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } }]);
  assert.equal(containerOOMScoreAdjust(g, g.spec!.containers[0]!, CAP), -997);
  const be = pod([c('a')]);
  assert.equal(containerOOMScoreAdjust(be, be.spec!.containers[0]!, CAP), 1000);
});

test('Burstable: 1000 - 1000*request/capacity, clamped to [3, 999]', () => {
  const p = pod([c('a', '1Gi'), c('b'), c('big', '20Gi'), c('tiny', '1')]);
  const [a, b, big, tiny] = p.spec!.containers as [V1Container, V1Container, V1Container, V1Container];
  assert.equal(containerOOMScoreAdjust(p, a, CAP), 900);
  assert.equal(containerOOMScoreAdjust(p, b, CAP), 999, 'no request: 1000 → 999 (survives before BestEffort)');
  assert.equal(containerOOMScoreAdjust(p, big, CAP), 3, 'more than the node: at least 1000 + (-997)');
  assert.equal(containerOOMScoreAdjust(p, tiny, CAP), 999);
  // Exact integer division (Go int64): 1000*3Gi/10Gi = 300 exactly.
  const q = pod([c('x', '3Gi')]);
  assert.equal(containerOOMScoreAdjust(q, q.spec!.containers[0]!, CAP), 700);
});

test('a node-critical pod gets -997; a sidecar scores no higher than the regular container with the smallest request', () => {
  const crit = pod([c('a', '1Gi')], { priorityClassName: 'system-node-critical', priority: 2_000_001_000 });
  assert.equal(containerOOMScoreAdjust(crit, crit.spec!.containers[0]!, CAP), -997);
  const staticCrit = pod([c('a', '1Gi')], { priorityClassName: 'system-node-critical' }, { 'kubernetes.io/config.source': 'file' });
  assert.equal(containerOOMScoreAdjust(staticCrit, staticCrit.spec!.containers[0]!, CAP), -997);
  const notNodeCrit = pod([c('a', '1Gi')], { priorityClassName: 'system-cluster-critical', priority: 2_000_000_000 });
  assert.equal(containerOOMScoreAdjust(notNodeCrit, notNodeCrit.spec!.containers[0]!, CAP), 900);
  const side = c('side', '5Gi', undefined, { restartPolicy: 'Always' });
  const withSidecar = pod([c('a', '1Gi'), c('b', '2Gi')], { initContainers: [side] });
  assert.equal(containerOOMScoreAdjust(withSidecar, side, CAP), 500, 'max(5Gi, min(1Gi, 2Gi)) = 5Gi');
  const small = c('small', '512Mi', undefined, { restartPolicy: 'Always' });
  const withSmall = pod([c('a', '1Gi'), c('b', '2Gi')], { initContainers: [small] });
  assert.equal(containerOOMScoreAdjust(withSmall, small, CAP), 900, 'max(512Mi, min(1Gi, 2Gi)) = 1Gi');
  assert.throws(() => containerOOMScoreAdjust(withSidecar, side, 0), RangeError);
});
