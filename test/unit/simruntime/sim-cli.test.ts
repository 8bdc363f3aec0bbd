import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CriClient } from '../../../src/shared/cri/cri-client.js';

const mainJs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src/cli/main.js');

function waitForLine(child: ChildProcess, re: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stderr?.on('data', (d: Buffer) => {
      buf += d.toString();
      if (re.test(buf)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${re}: ${buf}`)));
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Runs the CLI to completion; returns its exit code and stderr. */
async function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [mainJs, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await exitOf(child);
  return { code, stderr };
}

/** Leaves a socket file behind: a listener killed with SIGKILL cannot unlink it. */
async function staleSocket(p: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(p)}, () => console.log('up'))`]);
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const exited = exitOf(child);
  child.kill('SIGKILL');
  await exited;
}

test('shardlet sim-runtime: removes a stale socket, serves CRI, and on SIGTERM saves state, removes the socket, exits 0', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simrt-cli-'));
  const sock = path.join(dir, 'cri.sock');
  const state = path.join(dir, 'state.json');
  try {
    await staleSocket(sock);
    assert.ok(fs.lstatSync(sock).isSocket());
    const child = spawn(process.execPath, [mainJs, 'sim-runtime', '--socket', sock, '--state', state, '--profile', 'containerd', '--image', 'busybox'], { stdio: ['ignore', 'ignore', 'pipe'] });
    await waitForLine(child, /serving unix:\/\//);
    const client = new CriClient({ endpoint: sock });
    try {
      assert.equal((await client.version()).runtimeName, 'shardlet-sim');
      await client.runPodSandbox({ config: { metadata: { name: 'p', namespace: 'n', uid: 'u', attempt: 0 } } });
    } finally {
      client.close();
    }
    const exited = exitOf(child);
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.equal(fs.existsSync(sock), false);
    const saved = JSON.parse(fs.readFileSync(state, 'utf8')) as { sandboxes: unknown[]; images: unknown[] };
    assert.equal(saved.sandboxes.length, 1);
    assert.equal(saved.images.length, 1);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('shardlet sim-runtime: bad flags exit 2 with usage; a bad profile exits 1', async () => {
  const bad = await runCli(['sim-runtime', '--nope']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /usage: shardlet sim-runtime/);
  const noSock = await runCli(['sim-runtime']);
  assert.equal(noSock.code, 2, noSock.stderr);
  const badProfile = await runCli(['sim-runtime', '--socket', path.join(os.tmpdir(), `x-${process.pid}.sock`), '--profile', '/nonexistent.json']);
  assert.equal(badProfile.code, 1, badProfile.stderr);
  assert.match(badProfile.stderr, /--profile/);
});
