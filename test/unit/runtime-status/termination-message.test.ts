import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { ContainerStatus } from '../../../src/shared/cri/cri-types.js';
import { terminationMessageReader } from '../../../workers/runtime-status/termination-message.js';
import { boundTerminationMessages } from '../../../workers/kuberuntime/termination-message-bounds.js';
import { truncateUtf8 } from '../../../src/shared/text/utf8-bytes.js';

function status(o: { file?: string; policy?: string; exitCode?: number; message?: string; logPath?: string; mounts?: ContainerStatus['mounts']; state?: ContainerStatus['state'] }): ContainerStatus {
  return {
    id: 'c1', metadata: { name: 'c', attempt: 0 }, state: o.state ?? 'CONTAINER_EXITED', createdAt: '1', startedAt: '2', finishedAt: '3', exitCode: o.exitCode ?? 1,
    image: null, imageRef: '', reason: 'Error', message: o.message ?? '', labels: {},
    annotations: { 'io.kubernetes.container.terminationMessagePath': '/dev/termination-log', 'io.kubernetes.container.terminationMessagePolicy': o.policy ?? 'File' },
    mounts: o.mounts ?? (o.file !== undefined ? [{ containerPath: '/dev/termination-log', hostPath: o.file }] : []), logPath: o.logPath ?? '', imageId: '',
  };
}

function withRoot(fn: (root: string, dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-tmsg-'));
    const dir = path.join(root, 'pods', 'u1', 'containers', 'c');
    fs.mkdirSync(dir, { recursive: true });
    try {
      await fn(root, dir);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  };
}

test('the message is the file, bounded to its last 4096 bytes, after the runtime\'s own message', withRoot(async (root, dir) => {
  const r = terminationMessageReader({ rootDir: root });
  const f = path.join(dir, 'aaaa0000');
  fs.writeFileSync(f, 'done');
  assert.equal(await r.messageOf(status({ file: f })), 'done');
  assert.equal(await r.messageOf(status({ file: f, message: 'runtime says' })), 'runtime says: done');
  fs.writeFileSync(f, `${'x'.repeat(10 * 1024 * 1024)}TAIL`);
  const big = await r.messageOf(status({ file: f }));
  assert.equal(big.length, 4096);
  assert.ok(big.endsWith('TAIL'));
  assert.equal(await r.messageOf(status({ file: f, state: 'CONTAINER_RUNNING', message: 'm' })), 'm', 'only exited containers are read');
}));

test('hostile files: a symlink or a FIFO is not read; a mount outside <root>/pods is ignored', withRoot(async (root, dir) => {
  const r = terminationMessageReader({ rootDir: root });
  const link = path.join(dir, 'link');
  fs.symlinkSync('/etc/passwd', link);
  assert.match(await r.messageOf(status({ file: link })), /^Error on reading termination log .*link: /);
  const fifo = path.join(dir, 'fifo');
  const { execFileSync } = await import('node:child_process');
  execFileSync('mkfifo', [fifo]);
  assert.match(await r.messageOf(status({ file: fifo })), /not a regular file/);
  assert.equal(await r.messageOf(status({ file: '/etc/hostname' })), '', 'a volume at the path (e.g. a hostPath) is not read');
  assert.equal(await r.messageOf(status({ file: path.join(dir, 'missing') })), '', 'a missing file is an empty message');
}));

test('FallbackToLogsOnError: the last 80 lines of the log, last 2048 bytes, only after a failure with an empty file', withRoot(async (root, dir) => {
  const r = terminationMessageReader({ rootDir: root });
  const f = path.join(dir, 'empty');
  fs.writeFileSync(f, '');
  const log = path.join(root, 'c.log');
  const lines = Array.from({ length: 100 }, (_, i) => `2026-01-01T00:00:00.000000000Z stdout F line-${i}`);
  fs.writeFileSync(log, `${lines.join('\n')}\n2026-01-01T00:00:00.000000000Z stderr P part\n2026-01-01T00:00:00.000000000Z stderr F ial\n`);
  const msg = await r.messageOf(status({ file: f, policy: 'FallbackToLogsOnError', exitCode: 2, logPath: log }));
  assert.ok(msg.startsWith('line-22\n'), msg.slice(0, 40));
  assert.ok(msg.endsWith('line-99\npartial\n'));
  assert.equal(await r.messageOf(status({ file: f, policy: 'FallbackToLogsOnError', exitCode: 0, logPath: log })), '', 'success: no fallback');
  fs.writeFileSync(log, `2026-01-01T00:00:00.000000000Z stdout F ${'y'.repeat(5000)}\n`);
  const long = await r.messageOf(status({ file: f, policy: 'FallbackToLogsOnError', exitCode: 1, logPath: log }));
  assert.equal(Buffer.byteLength(long), 2048);
  fs.writeFileSync(f, 'from file');
  assert.equal(await r.messageOf(status({ file: f, policy: 'FallbackToLogsOnError', exitCode: 1, logPath: log })), 'from file', 'a written file wins');
}));

test('per pod: 12 KiB shared evenly by the containers, cut on a character boundary', () => {
  const pod: V1Pod = { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } };
  const statuses: V1ContainerStatus[] = ['a', 'b', 'c'].map((name) => ({
    name, image: '', imageID: '', ready: false, restartCount: 0,
    state: { terminated: { exitCode: 1, message: 'é'.repeat(4000) } },
    lastState: { terminated: { exitCode: 1, message: 'short' } },
  }));
  const shared = statuses[0]!.state;
  boundTerminationMessages(pod, statuses);
  for (const s of statuses) {
    assert.ok(Buffer.byteLength(s.state!.terminated!.message!) <= 4096);
    assert.equal(s.state!.terminated!.message!, 'é'.repeat(2048));
    assert.equal(s.lastState!.terminated!.message, 'short');
  }
  assert.equal(shared!.terminated!.message!.length, 4000, 'the previous state object is not mutated');
  assert.equal(truncateUtf8('aé', 2), 'a');
});
