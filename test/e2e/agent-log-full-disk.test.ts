/**
 * The agent's own log on a full disk: stderr on /dev/full (every write fails with ENOSPC) and on
 * a tiny tmpfs that fills up and is then emptied. The agent keeps running and keeps starting
 * pods; on the tmpfs, the log resumes once there is space, with a notice of the lines lost.
 * Before the fix the first failed write killed the agent (an unhandled 'error' on stderr).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { isRunning, pollUntil, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

let sim: SimRuntimeInstance;
const dirs: string[] = [];
const agents: AgentProcess[] = [];
let mountPoint: string | undefined;

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
});

after(async () => {
  for (const a of agents) await a.kill();
  await sim?.stop();
  if (mountPoint) {
    execFileSync('umount', [mountPoint]);
    fs.rmSync(mountPoint, { recursive: true, force: true });
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function manifests(prefix: string, n: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-fulllog-'));
  dirs.push(dir);
  for (let i = 0; i < n; i++) writePodManifest(dir, `${prefix}-${i}`);
  return dir;
}

async function allRunning(a: AgentProcess, n: number): Promise<void> {
  await pollUntil(async () => {
    if (!a.running()) throw new Error('the agent exited');
    const pods = await a.pods();
    return pods.length === n && pods.every(isRunning) ? true : undefined;
  }, { what: `${n} pods running`, timeoutMs: 60_000, intervalMs: 200 });
}

test('stderr on /dev/full: the agent keeps running and starting pods', async () => {
  const dir = manifests('devfull', 20);
  const a = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, workers: 2, stderrPath: '/dev/full' });
  agents.push(a);
  await allRunning(a, 20);
  // More work (and more log lines) after the start.
  for (let i = 20; i < 30; i++) writePodManifest(dir, `devfull-${i}`);
  await allRunning(a, 30);
  assert.ok(a.running());
  assert.equal(await a.stop(), 0, 'clean exit on SIGTERM');
});

test('stderr on a tmpfs that fills up: the agent keeps running; the log resumes when space returns', async (t) => {
  if (process.getuid?.() !== 0) {
    t.diagnostic('needs root to mount a tmpfs');
    assert.fail('this test needs root (mount)');
  }
  mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-logfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mountPoint]);
  const logFile = path.join(mountPoint, 'agent.log');
  // Fill the filesystem to the last byte before the agent starts: its first lines already fail.
  const filler = path.join(mountPoint, 'filler');
  const fd = fs.openSync(filler, 'w');
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(512));
  } catch (err) {
    assert.equal((err as { code?: string }).code, 'ENOSPC');
  } finally {
    fs.closeSync(fd);
  }
  const dir = manifests('tmpfs', 40);
  const a = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, workers: 2, stderrPath: logFile });
  agents.push(a);
  await allRunning(a, 40);
  for (let i = 40; i < 60; i++) writePodManifest(dir, `tmpfs-${i}`);
  await allRunning(a, 60);
  assert.ok(a.running());
  // Free the space: the next lines are written, starting with the notice of what was lost.
  fs.rmSync(filler);
  for (let i = 60; i < 65; i++) writePodManifest(dir, `tmpfs-${i}`);
  await allRunning(a, 65);
  const text = await pollUntil(() => {
    const s = fs.readFileSync(logFile, 'utf8');
    return s.includes('log lines dropped') ? s : undefined;
  }, { what: 'the dropped-lines notice', timeoutMs: 30_000 });
  const notice = JSON.parse(text.split('\n').find((l) => l.includes('log lines dropped'))!) as { dropped: number; error: string };
  assert.ok(notice.dropped > 0);
  assert.equal(notice.error, 'ENOSPC');
  assert.equal(await a.stop(), 0);
});
