/**
 * Pod IPs as the kubelet reports and uses them (pod-ips.ts): a host-network pod has the node's IP
 * in status.podIP(s) and in its containers' downward API (POD_IP), and a pod that finished keeps
 * its last IPs. Module rules, then the syncer paths that use them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyPodStatus, type RuntimePodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { statusPodIPs, withHostNetworkIPs } from '../../../workers/kuberuntime/pod-ips.js';
import { container, makeHarness, makePod, summary } from './kuberuntime-harness.js';

const sandbox = (state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY', ip: string): RuntimePodStatus['sandboxes'][number] => ({ id: 's', state, createdAtNs: '1', attempt: 0, ip, ips: ip ? [ip] : [], hostNetwork: ip === '' });

test('statusPodIPs: sandbox IPs; kept while no sandbox is ready; host network gets the node IP', () => {
  const pod = makePod({ containers: [container('a')] });
  const host = makePod({ hostNetwork: true, containers: [container('a')] });
  const ready = { ...emptyPodStatus('u'), ips: ['10.0.0.2'], sandboxes: [sandbox('SANDBOX_READY', '10.0.0.2')] };
  const stopped = { ...emptyPodStatus('u'), sandboxes: [sandbox('SANDBOX_NOTREADY', '')] };
  assert.deepEqual(statusPodIPs(pod, ready, ['10.0.0.1'], '192.168.1.10'), ['10.0.0.2'], 'the current sandbox wins');
  assert.deepEqual(statusPodIPs(pod, stopped, ['10.0.0.2'], '192.168.1.10'), ['10.0.0.2'], 'finished: the last IPs stay');
  assert.deepEqual(statusPodIPs(pod, emptyPodStatus('u'), [], '192.168.1.10'), [], 'never had any');
  // A ready sandbox without IPs (its network not set up) reports none, as the PLEG does.
  assert.deepEqual(statusPodIPs(pod, { ...emptyPodStatus('u'), sandboxes: [sandbox('SANDBOX_READY', '')] }, ['10.0.0.2'], '192.168.1.10'), []);
  assert.deepEqual(statusPodIPs(host, { ...emptyPodStatus('u'), sandboxes: [sandbox('SANDBOX_READY', '')] }, [], '192.168.1.10'), ['192.168.1.10']);
  assert.deepEqual(withHostNetworkIPs(host, [], ''), [], 'no node IP known: none');
  assert.deepEqual(withHostNetworkIPs(pod, [], '192.168.1.10'), [], 'not host network');
});

test('host-network pod: status.podIP(s) and the containers\' POD_IP / status.podIPs are the node IP', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({
    hostNetwork: true,
    containers: [container('app', { env: [
      { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'POD_IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
      { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
    ] })],
  });
  await h.sync(pod);
  const envs = Object.fromEntries((h.rt.lastConfigOf('app').envs ?? []).map((e) => [e.key, e.value]));
  assert.deepEqual(envs, { POD_IP: '192.168.1.10', POD_IPS: '192.168.1.10', HOST_IP: '192.168.1.10' });
  const out = await h.sync(pod);
  assert.equal(out.apiStatus.podIP, '192.168.1.10');
  assert.deepEqual(out.apiStatus.podIPs, [{ ip: '192.168.1.10' }]);
  assert.deepEqual(out.apiStatus.hostIPs, [{ ip: '192.168.1.10' }]);
});

test('a pod keeps its podIP once it finished and its sandbox is stopped', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ restartPolicy: 'Never', containers: [container('app')] });
  await h.sync(pod);
  const running = await h.sync(pod);
  assert.equal(running.apiStatus.podIP, '10.88.0.2');
  h.rt.exitContainer('app', 0);
  const done = await h.sync(pod);
  assert.equal(summary(done.apiStatus), 'Succeeded app=terminated:Completed:0');
  const term = await h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus('uid-web'), gracePeriodSeconds: 1, signal: new AbortController().signal });
  assert.ok(h.rt.calls.includes('StopPodSandbox web'), 'the sandbox was stopped (no IP from the runtime any more)');
  assert.deepEqual(h.rt.podStatus('uid-web').ips, []);
  assert.equal(term.apiStatus.podIP, '10.88.0.2');
  assert.deepEqual(term.apiStatus.podIPs, [{ ip: '10.88.0.2' }]);
  // And from the runtime status alone afterwards (a later status refresh).
  assert.equal(h.syncer.generateAPIStatus(pod, h.rt.podStatus('uid-web')).podIP, '10.88.0.2');
});
