import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { parseMeminfo, parseProcStat, procNodeStats, type NodeStatsReader } from '../../../src/main/server/stats-node.js';
import { resourceMetricsText } from '../../../src/main/server/stats-resource-metrics.js';
import { SummaryProvider } from '../../../src/main/server/stats-summary.js';
import { promtoolCheckMetrics } from '../../prometheus/prometheus-harness.js';
import { containerConfig, sandboxConfig, startHarness } from '../simruntime/sim-harness.js';

const NODE: NodeStatsReader = { read: async () => ({ cpuUsageCoreSeconds: 123.5, memoryUsageBytes: 4e9, memoryWorkingSetBytes: 3e9, memoryAvailableBytes: 1e9 }) };

test('summary and resource metrics from the simulated runtime: every managed pod listed, figures equal to the CRI stats, promtool-clean', async () => {
  const h = await startHarness();
  try {
    const pods: V1Pod[] = [];
    for (const name of ['a', 'b']) {
      const sb = sandboxConfig({ name, logDirectory: path.join(h.dir, name) });
      const sbId = await h.client.runPodSandbox({ config: sb });
      const c = await h.client.createContainer({ podSandboxId: sbId, config: containerConfig('main', ['sleep', '3600'], { labels: { 'io.kubernetes.container.name': 'main', 'io.kubernetes.pod.uid': sb.metadata.uid } }), sandboxConfig: sb });
      await h.client.startContainer(c);
      pods.push({ metadata: { name, namespace: 'default', uid: sb.metadata.uid }, spec: { containers: [{ name: 'main' }] } });
    }
    // A pod the runtime knows nothing about yet is still listed.
    pods.push({ metadata: { name: 'pending', namespace: 'default', uid: 'uid-pending' }, spec: { containers: [{ name: 'main' }] } });
    h.clock.step(10_000);
    const provider = new SummaryProvider({ runtime: h.client, pods: () => pods, node: NODE, nodeName: 'n1', clock: h.clock, startedAtMs: h.clock.now() - 60_000 });
    const s = await provider.summary();
    assert.deepEqual(s.pods.map((p) => p.podRef.name), ['a', 'b', 'pending']);
    assert.equal(s.pods[2]!.containers.length, 0);
    const cs = await h.client.listContainerStats();
    for (const p of s.pods.slice(0, 2)) {
      const mine = cs.find((c) => c.attributes?.labels['io.kubernetes.pod.uid'] === p.podRef.uid)!;
      assert.equal(p.containers[0]!.name, 'main');
      assert.equal(p.containers[0]!.cpu?.usageCoreNanoSeconds, Number(mine.cpu!.usageCoreNanoSeconds!.value));
      assert.equal(p.containers[0]!.memory?.workingSetBytes, Number(mine.memory!.workingSetBytes!.value));
      // The sim: 2 ms of CPU per second running; pod = its container (+ 0.5 MiB pause memory).
      assert.equal(p.containers[0]!.cpu?.usageCoreNanoSeconds, 20_000_000);
      assert.equal(p.memory?.workingSetBytes, p.containers[0]!.memory!.workingSetBytes! + 512 * 1024);
    }
    assert.equal(s.node.cpu.usageCoreNanoSeconds, 123.5e9);
    const text = resourceMetricsText(s);
    assert.match(text, /^container_cpu_usage_seconds_total\{container="main",namespace="default",pod="a"\} 0\.02 \d+$/m);
    assert.match(text, /^node_cpu_usage_seconds_total 123\.5 \d+$/m);
    assert.match(text, /^node_memory_working_set_bytes 3000000000 \d+$/m);
    assert.match(text, /^resource_scrape_error 0$/m);
    for (const fam of ['container_memory_working_set_bytes', 'container_start_time_seconds', 'pod_cpu_usage_seconds_total', 'pod_memory_working_set_bytes']) assert.match(text, new RegExp(`^# TYPE ${fam} `, 'm'));
    const check = promtoolCheckMetrics(text);
    assert.deepEqual(check.problems, []);
    assert.equal(check.status, 0);
    assert.match(resourceMetricsText(undefined), /^resource_scrape_error 1$/m);
  } finally {
    await h.close();
  }
});

test('node figures from /proc: non-idle ticks at USER_HZ, working set = total − available', async () => {
  assert.equal(parseProcStat('cpu  100 10 50 1000 5 3 2 1 0 0\ncpu0 1 2 3\n'), (100 + 10 + 50 + 3 + 2 + 1) / 100);
  assert.deepEqual(parseMeminfo('MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    600 kB\n'), { totalBytes: 1024000, freeBytes: 204800, availableBytes: 614400 });
  const n = await procNodeStats.read();
  assert.ok(n.cpuUsageCoreSeconds > 0 && n.memoryWorkingSetBytes > 0 && n.memoryAvailableBytes > 0);
});

test('a runtime without sandbox stats (containerd 1.6 host-network sandboxes): pod figures are the sums of its containers, the error reported once', async () => {
  const h = await startHarness();
  try {
    const sb = sandboxConfig({ name: 'solo', logDirectory: path.join(h.dir, 'solo') });
    const sbId = await h.client.runPodSandbox({ config: sb });
    for (const name of ['one', 'two']) {
      const c = await h.client.createContainer({ podSandboxId: sbId, config: containerConfig(name, ['sleep', '3600'], { labels: { 'io.kubernetes.container.name': name, 'io.kubernetes.pod.uid': sb.metadata.uid } }), sandboxConfig: sb });
      await h.client.startContainer(c);
    }
    h.clock.step(5_000);
    const errors: unknown[] = [];
    const runtime = {
      listContainerStats: h.client.listContainerStats.bind(h.client),
      listContainers: h.client.listContainers.bind(h.client),
      listPodSandboxStats: async () => { throw new Error('cgroupPath is empty'); },
    };
    const provider = new SummaryProvider({ runtime, pods: () => [{ metadata: { name: 'solo', namespace: 'default', uid: sb.metadata.uid } }], node: NODE, nodeName: 'n1', clock: h.clock, startedAtMs: 0, onSandboxStatsError: (e) => errors.push(e) });
    const s = await provider.summary();
    await provider.summary();
    const pod = s.pods[0]!;
    assert.equal(pod.containers.length, 2);
    assert.equal(pod.memory?.workingSetBytes, pod.containers[0]!.memory!.workingSetBytes! + pod.containers[1]!.memory!.workingSetBytes!);
    assert.equal(pod.cpu?.usageCoreNanoSeconds, 2 * 10_000_000);
    assert.equal(errors.length, 1);
    assert.deepEqual(promtoolCheckMetrics(resourceMetricsText(s)).problems, []);
  } finally {
    await h.close();
  }
});
