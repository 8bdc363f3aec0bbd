/**
 * A --pod-logs-dir that cannot take the pod's log directory (read-only filesystem): the real
 * errno and path reach the pod status (a waiting reason on each container) and the log, instead
 * of Node's misleading ENOENT and a bare "ContainerCreating".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodePodLogDirs } from '../../../workers/kuberuntime/pod-log-dirs.js';
import { container, makeHarness, makePod, summary } from './kuberuntime-harness.js';

test('a read-only pod logs dir: the status says EROFS with the path, no sandbox is created', async (t) => {
  assert.equal(process.getuid?.(), 0, 'this test needs root (mount)');
  const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-rologs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,ro', 'tmpfs', mnt]);
  t.after(() => {
    execFileSync('umount', [mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });
  await assert.rejects(nodePodLogDirs(path.join(mnt, 'pods')).mkdir(path.join(mnt, 'pods', 'default_web_uid')), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'EROFS');
    assert.match(err.message, new RegExp(`create pod log directory ".*${path.basename(mnt)}/pods/default_web_uid": EROFS`));
    return true;
  });

  const h = makeHarness({ podLogsDir: path.join(mnt, 'pods') });
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app'), container('side')] });
  const out = await h.sync(pod);
  assert.equal(summary(out.apiStatus), 'Pending app=waiting:CreateContainerError side=waiting:CreateContainerError');
  assert.match(out.apiStatus.containerStatuses![0]!.state!.waiting!.message!, /EROFS.*read-only file system/);
  assert.equal(out.error?.code, 'ERR_CREATE_CONTAINER');
  assert.deepEqual(h.take().filter((c) => c.startsWith('RunPodSandbox')), [], 'no sandbox without a log directory');
  assert.ok(h.logLines.some((l) => l.includes('cannot create the pod log directory') && l.includes('EROFS')));
});
