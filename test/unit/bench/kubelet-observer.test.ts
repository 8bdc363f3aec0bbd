/**
 * The kubelet's pod-Running signal as the side-by-side bench reads it from klog lines (lines
 * shaped exactly as kubelet v1.20.2's `SyncLoop (PLEG)` output), and the kubelet's flags that keep
 * it off host state.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeletRunningLog, parsePlegStarted } from '../../../bench/kubelet-observer.js';
import { kubeletArgs } from '../../../bench/kubelet-process.js';
import { realClock } from '../../../src/shared/clock/clock.js';

const UID = '3f1c2a9e-0000-4000-8000-000000000001';
const line = (type: string, data: string, uid = UID): string =>
  `I1127 23:01:02.123456   4242 kubelet.go:1926] SyncLoop (PLEG): "bench-00001-bench-node_bench(${uid})", event: &pleg.PodLifecycleEvent{ID:"${uid}", Type:"${type}", Data:"${data}"}`;

describe('kubelet PLEG log observer', () => {
  it('parses ContainerStarted lines only', () => {
    assert.deepEqual(parsePlegStarted(line('ContainerStarted', 'abc')), { podUID: UID, id: 'abc' });
    assert.equal(parsePlegStarted(line('ContainerDied', 'abc')), null);
    assert.equal(parsePlegStarted('I1127 23:01:02.1 1 kubelet.go:1] SyncLoop (ADD, "file"): "x_bench(u)"'), null);
  });

  it('sees a pod Running at its second distinct started id (sandbox, then container), at that line', () => {
    let now = 100;
    const log = new KubeletRunningLog(() => now);
    log.onLine(line('ContainerStarted', 'sandbox1'));
    assert.equal(log.get(UID), undefined);
    now = 200;
    log.onLine(line('ContainerStarted', 'sandbox1')); // the same id again: not a second start
    assert.equal(log.get(UID), undefined);
    now = 300;
    log.onLine(line('ContainerStarted', 'ctr1'));
    assert.deepEqual(log.get(UID), { atMs: 300 });
    assert.equal(log.size, 1);
    now = 400;
    log.onLine(line('ContainerStarted', 'ctr2'));
    assert.deepEqual(log.get(UID), { atMs: 300 }, 'a restart does not move the first Running');
    assert.equal(log.restarts, 1);
  });
});

describe('kubelet flags', () => {
  it('keep the kubelet on its own dirs, cgroup root and ports, off iptables, swap and sysctls', () => {
    const args = kubeletArgs({ clock: realClock, kubelet: '/k', endpoint: 'unix:///r/c.sock', dir: '/t', manifestDir: '/t/m', nodeName: 'n', cgroupRoot: '/shardlet-e2e-x', maxPods: 300, healthzPort: 1, port: 2 });
    for (const a of [
      '--container-runtime=remote',
      '--container-runtime-endpoint=unix:///r/c.sock',
      '--image-service-endpoint=unix:///r/c.sock',
      '--root-dir=/t/root',
      '--cert-dir=/t/pki',
      '--volume-plugin-dir=/t/volume-plugins',
      '--cgroup-root=/shardlet-e2e-x',
      '--enforce-node-allocatable=',
      '--make-iptables-util-chains=false',
      '--fail-swap-on=false',
      '--protect-kernel-defaults=true',
      '--read-only-port=0',
      '--max-pods=300',
    ])
      assert.ok(args.includes(a), a);
  });
});
