/**
 * The /stats/summary figures the eviction manager measures, through the provider the agent wires
 * (agent-eviction.ts createSummaryProvider) against the in-process simulated runtime: usage set
 * on a live container (SimulatedRuntime.setContainerUsage) shows as its memory, its rootfs and
 * the pod's ephemeral storage; the log directory's files as `logs`; node.fs from the capacity
 * source, node.rlimit from the task source; on the simulated runtime node memory is what its
 * containers use. Plus the parsers of the kernel files behind the real sources.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { AGENT_DEFAULTS, type AgentConfig } from '../../../src/main/agent/agent-config.js';
import { createSummaryProvider } from '../../../src/main/agent/agent-eviction.js';
import { signalObservations } from '../../../src/main/eviction/eviction-observations.js';
import { memoryStatField, rootCgroupMemory } from '../../../src/main/server/stats-node.js';
import { parseLoadavgTasks } from '../../../src/main/server/stats-summary-fs.js';
import { containerConfig, sandboxConfig, startHarness } from '../simruntime/sim-harness.js';

const Mi = 1024 * 1024;

test('summary figures through the agent\'s provider on the sim: set usage → memory, rootfs, logs, pod ephemeral storage, node fs, rlimit, node memory', async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  const podLogsDir = path.join(h.dir, 'pods');
  const sb = sandboxConfig({ name: 'web', logDirectory: path.join(podLogsDir, 'default_web_uid-web') });
  const sbId = await h.client.runPodSandbox({ config: sb });
  const id = await h.client.createContainer({
    podSandboxId: sbId, sandboxConfig: sb,
    config: containerConfig('main', ['sleep', '3600'], { logPath: 'main/0.log', labels: { 'io.kubernetes.container.name': 'main', 'io.kubernetes.pod.uid': 'uid-web' } }),
  });
  await h.client.startContainer(id);
  fs.mkdirSync(path.join(podLogsDir, 'default_web_uid-web', 'main'), { recursive: true });
  fs.appendFileSync(path.join(podLogsDir, 'default_web_uid-web', 'main', '0.log.20261127-000000'), Buffer.alloc(1000, 'x'));
  h.rt.setContainerUsage(id, { workingSetBytes: 300 * Mi, writableLayerBytes: 7 * Mi });
  assert.throws(() => h.rt.setContainerUsage(id, { workingSetBytes: -1 }), /workingSetBytes must be a non-negative integer/);
  assert.throws(() => h.rt.setContainerUsage('nope', { workingSetBytes: 1 }), /no container/);

  const config: AgentConfig = { ...AGENT_DEFAULTS, nodeName: 'n1', rootDir: h.dir, podLogsDir, podManifestPath: undefined } as AgentConfig;
  const pods: V1Pod[] = [{ metadata: { name: 'web', namespace: 'default', uid: 'uid-web' }, spec: { containers: [{ name: 'main' }] } }];
  const provider = createSummaryProvider({
    config, clock: h.clock, logger: silentLogger, runtime: h.client, pods: () => pods, simulatedRuntime: true, memoryCapacityBytes: 4096 * Mi,
    capacity: { statfs: async () => ({ capacityBytes: 100 * Mi, availableBytes: 30 * Mi, inodes: 1000, inodesFree: 10 }) },
    rlimit: { read: async () => ({ maxPid: 4096, runningTasks: 4000 }) },
  });
  const s = await provider.summary();
  const c = s.pods[0]!.containers[0]!;
  assert.equal(c.memory?.workingSetBytes, 300 * Mi);
  assert.equal(c.rootfs?.usedBytes, 7 * Mi);
  const logs = fs.readdirSync(path.join(podLogsDir, 'default_web_uid-web', 'main')).reduce((n, f) => n + fs.statSync(path.join(podLogsDir, 'default_web_uid-web', 'main', f)).size, 0);
  assert.equal(c.logs?.usedBytes, logs);
  assert.ok(logs >= 1000);
  assert.equal(s.pods[0]!['ephemeral-storage']?.usedBytes, 7 * Mi + logs);
  assert.deepEqual(s.pods[0]!.process_stats, { process_count: 2 }, 'the sandbox\'s process count (pause + one running container)');
  assert.deepEqual({ a: s.node.fs?.availableBytes, c: s.node.fs?.capacityBytes, f: s.node.fs?.inodesFree, i: s.node.fs?.inodes }, { a: 30 * Mi, c: 100 * Mi, f: 10, i: 1000 });
  assert.deepEqual({ maxpid: s.node.rlimit?.maxpid, curproc: s.node.rlimit?.curproc }, { maxpid: 4096, curproc: 4000 });
  assert.equal(s.node.memory.workingSetBytes, 300 * Mi, 'on the sim the node uses what its containers use');
  assert.equal(s.node.memory.availableBytes, 4096 * Mi - 300 * Mi);
  const obs = signalObservations(s);
  assert.deepEqual(obs.get('memory.available'), { available: 3796 * Mi, capacity: 4096 * Mi, timeMs: obs.get('memory.available')!.timeMs! });
  assert.equal(obs.get('nodefs.available')?.available, 30 * Mi);
  assert.equal(obs.get('nodefs.inodesFree')?.available, 10);
  assert.equal(obs.get('pid.available')?.available, 96);
  assert.equal(obs.get('imagefs.available')?.capacity, 100 * Mi, 'imagefs: the runtime\'s ImageFsInfo against the capacity source');
  // The container filesystem figure of ImageFsInfo counts the set writable layer too.
  assert.equal(h.rt.imageFs.figures().containerBytes, 7 * Mi);
});

test('kernel figures: /proc/loadavg task count, memory.stat fields, the root cgroup working set (v1 and v2 layouts)', async () => {
  assert.equal(parseLoadavgTasks('0.50 0.40 0.30 2/1234 56789\n'), 1234);
  assert.equal(parseLoadavgTasks('garbage'), undefined);
  assert.equal(memoryStatField('cache 5\ninactive_file 300\ntotal_inactive_file 700\n', 'inactive_file'), 300);
  assert.equal(memoryStatField('cache 5\n', 'inactive_file'), undefined);
  const v1 = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-v1-'));
  const v2 = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-v2-'));
  try {
    fs.mkdirSync(path.join(v1, 'memory'));
    fs.writeFileSync(path.join(v1, 'memory', 'memory.usage_in_bytes'), '5000\n');
    fs.writeFileSync(path.join(v1, 'memory', 'memory.stat'), 'cache 1\ntotal_inactive_file 1200\n');
    assert.deepEqual(await rootCgroupMemory({ totalBytes: 10_000, freeBytes: 1_000 }, v1), { usageBytes: 5000, workingSetBytes: 3800 });
    fs.writeFileSync(path.join(v2, 'cgroup.controllers'), 'cpu memory\n');
    fs.writeFileSync(path.join(v2, 'memory.stat'), 'anon 1\ninactive_file 2000\n');
    assert.deepEqual(await rootCgroupMemory({ totalBytes: 10_000, freeBytes: 1_000 }, v2), { usageBytes: 9000, workingSetBytes: 7000 });
    assert.equal(await rootCgroupMemory({ totalBytes: 10_000, freeBytes: 1_000 }, path.join(v1, 'absent')), undefined);
  } finally {
    fs.rmSync(v1, { recursive: true, force: true });
    fs.rmSync(v2, { recursive: true, force: true });
  }
});
