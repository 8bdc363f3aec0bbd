import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { ContainerLogRotation, rotationTimestamp } from '../../../src/main/logs/container-log-rotation.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { runPod, startHarness } from '../simruntime/sim-harness.js';

function seqsOf(text: string): number[] {
  return text.split('\n').filter((l) => l !== '').map((l) => Number(/ F chatter (\d+) x+$/.exec(l)?.[1] ?? NaN));
}

test('rotation at the size limit through the simulated runtime: at most maxFiles files, older ones gzipped, no line lost between kept files', async () => {
  const h = await startHarness();
  try {
    const logDirectory = path.join(h.dir, 'pods', 'p1');
    const { containerId } = await runPod(h, ['sleep', '3600'], {
      logPath: 'app/0.log',
      annotations: { 'sim.shardlet.io/log-lines-per-second': '500', 'sim.shardlet.io/log-line-bytes': '100' },
    }, { logDirectory });
    const file = path.join(logDirectory, 'app/0.log');
    const rotation = new ContainerLogRotation({ runtime: h.client, clock: h.clock, logger: silentLogger, maxSizeBytes: 64 * 1024, maxFiles: 3, intervalMs: 1000 });
    // Each CRI line is ~100 bytes of text plus ~40 of header: 500 lines/s ≈ 70 KB/s, so one
    // rotation per second of fake time.
    for (let i = 0; i < 6; i++) {
      h.clock.step(1000);
      await rotation.rotateOnce();
    }
    await rotation.close();
    const names = fs.readdirSync(path.dirname(file)).sort();
    assert.ok(names.length <= 3, `at most maxFiles files: ${names.join(', ')}`);
    assert.ok(names.includes('0.log'));
    const gz = names.filter((n) => n.endsWith('.gz'));
    const plain = names.filter((n) => n !== '0.log' && !n.endsWith('.gz'));
    assert.equal(gz.length, 1, names.join(', '));
    assert.equal(plain.length, 1, 'the newest rotated file stays uncompressed');
    assert.equal(plain[0], `0.log.${rotationTimestamp(h.clock.now())}`);
    // Oldest kept (gz) → newest rotated → live: consecutive sequence numbers.
    const all = [
      ...seqsOf(zlib.gunzipSync(fs.readFileSync(path.join(path.dirname(file), gz[0]!))).toString()),
      ...seqsOf(fs.readFileSync(path.join(path.dirname(file), plain[0]!), 'utf8')),
      ...seqsOf(fs.readFileSync(file, 'utf8')),
    ];
    for (let i = 1; i < all.length; i++) assert.equal(all[i], all[i - 1]! + 1, `line ${i}`);
    assert.equal(all.at(-1), 3000, 'the newest line is in the live file');
    assert.ok(fs.statSync(file).size < 64 * 1024 + 80 * 1024);
    assert.ok(containerId);
  } finally {
    await h.close();
  }
});

test('a failed ReopenContainerLog renames the file back (nothing lost); a missing live file is reopened', async () => {
  const h = await startHarness();
  try {
    const logDirectory = path.join(h.dir, 'pods', 'p2');
    const { containerId } = await runPod(h, ['sleep', '3600'], { logPath: 'app/0.log', annotations: { 'sim.shardlet.io/log-lines-per-second': '1000' } }, { logDirectory });
    const file = path.join(logDirectory, 'app/0.log');
    h.clock.step(1000);
    let fail = true;
    const runtime = {
      listContainers: h.client.listContainers.bind(h.client),
      containerStatus: h.client.containerStatus.bind(h.client),
      reopenContainerLog: async (id: string) => {
        if (fail) throw new Error('reopen refused');
        await h.client.reopenContainerLog(id);
      },
    };
    const rotation = new ContainerLogRotation({ runtime, clock: h.clock, logger: silentLogger, maxSizeBytes: 1024, maxFiles: 2, intervalMs: 1000 });
    await rotation.rotateOnce();
    assert.deepEqual(fs.readdirSync(logDirectory + '/app'), ['0.log'], 'renamed back');
    fs.rmSync(file);
    fail = false;
    await rotation.rotateOnce();
    h.clock.step(100);
    assert.ok(fs.existsSync(file), 'reopened: the runtime writes to a new live file');
    assert.ok(containerId);
  } finally {
    await h.close();
  }
});

test('a container\'s log path is asked once (ContainerStatus), not on every pass; forgotten once it is not running', async () => {
  const h = await startHarness();
  try {
    const logDirectory = path.join(h.dir, 'pods', 'p3');
    const { containerId } = await runPod(h, ['sleep', '3600'], { logPath: 'app/0.log' }, { logDirectory });
    const statusCalls: string[] = [];
    let running = true;
    const runtime = {
      listContainers: async (f?: Parameters<typeof h.client.listContainers>[0]) => (running ? h.client.listContainers(f) : []),
      containerStatus: async (id: string) => {
        statusCalls.push(id);
        return h.client.containerStatus(id);
      },
      reopenContainerLog: (id: string) => h.client.reopenContainerLog(id),
    };
    const rotation = new ContainerLogRotation({ runtime, clock: h.clock, logger: silentLogger, maxSizeBytes: 1024 * 1024, maxFiles: 2, intervalMs: 1000 });
    await rotation.rotateOnce();
    await rotation.rotateOnce();
    await rotation.rotateOnce();
    assert.deepEqual(statusCalls, [containerId], 'one ContainerStatus for three passes');
    running = false;
    await rotation.rotateOnce();
    running = true;
    await rotation.rotateOnce();
    assert.deepEqual(statusCalls, [containerId, containerId], 'asked again after it was gone from the running list');
  } finally {
    await h.close();
  }
});

test('with podLogsDir, the log path of a container with kubelet labels is derived (no ContainerStatus); unlabelled, hostile-labelled or missing-file ones are asked', async () => {
  const h = await startHarness();
  try {
    const podLogsDir = path.join(h.dir, 'pods');
    const kubelet = (ns: string, name: string, uid: string, container: string) => ({
      labels: { 'io.kubernetes.pod.namespace': ns, 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': container },
      // The sim writes log lines only when asked to (a 1-byte limit then rotates every file).
      annotations: { 'io.kubernetes.container.restartCount': '0', 'sim.shardlet.io/log-lines-per-second': '100' },
    });
    // As shardlet creates them: log directory <podLogsDir>/<ns>_<name>_<uid>, log path <container>/0.log.
    const ours = kubelet('default', 'web', 'uid-1', 'app');
    const { containerId: derivedId } = await runPod(h, ['sleep', '3600'], { logPath: 'app/0.log', ...ours }, { logDirectory: path.join(podLogsDir, 'default_web_uid-1') });
    // Kubelet labels, but the runtime was told another directory: the derived file is not there.
    const { containerId: elsewhereId } = await runPod(h, ['sleep', '3600'], { logPath: 'app/0.log', ...kubelet('default', 'other', 'uid-2', 'app') }, { logDirectory: path.join(h.dir, 'elsewhere') });
    // Labels that would climb out of podLogsDir: never used as a path.
    const { containerId: hostileId } = await runPod(h, ['sleep', '3600'], { logPath: 'app/0.log', ...kubelet('..', '..', '..', 'app') }, { logDirectory: path.join(h.dir, 'h') });
    // No kubelet labels at all (another CRI client's container).
    const { containerId: plainId } = await runPod(h, ['sleep', '3600'], { logPath: 'app/0.log', annotations: { 'sim.shardlet.io/log-lines-per-second': '100' } }, { logDirectory: path.join(h.dir, 'plain') });
    const statusCalls: string[] = [];
    const runtime = {
      listContainers: (f?: Parameters<typeof h.client.listContainers>[0]) => h.client.listContainers(f),
      containerStatus: async (id: string) => {
        statusCalls.push(id);
        return h.client.containerStatus(id);
      },
      reopenContainerLog: (id: string) => h.client.reopenContainerLog(id),
    };
    // A 1-byte limit: every container with a log file is rotated, which shows the path each one got.
    h.clock.step(1000);
    const rotation = new ContainerLogRotation({ runtime, clock: h.clock, logger: silentLogger, maxSizeBytes: 1, maxFiles: 2, intervalMs: 1000, podLogsDir });
    await rotation.rotateOnce();
    assert.deepEqual(statusCalls.sort(), [elsewhereId, hostileId, plainId].sort(), 'no ContainerStatus for the one whose derived file exists');
    assert.ok(!statusCalls.includes(derivedId));
    const rotated = fs.readdirSync(path.join(podLogsDir, 'default_web_uid-1', 'app'));
    assert.ok(rotated.some((n) => n.startsWith('0.log.')), `the derived path was rotated: ${rotated.join(', ')}`);
    assert.ok(fs.readdirSync(path.join(h.dir, 'elsewhere', 'app')).some((n) => n.startsWith('0.log.')), 'the asked path was rotated');
    await rotation.close();
  } finally {
    await h.close();
  }
});
