import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import { chatterLine, clampChatter } from '../../../src/simruntime/sim-log-chatter.js';
import { runPod, startHarness } from './sim-harness.js';

const CHATTY = { annotations: { 'sim.shardlet.io/log-lines-per-second': '500', 'sim.shardlet.io/log-line-bytes': '64' } };

function seqs(file: string): number[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => Number(/ F chatter (\d+) x+$/.exec(l)?.[1] ?? NaN));
}

test('log-lines-per-second writes that many numbered 64-byte stdout lines per second of fake time', async () => {
  const h = await startHarness();
  try {
    const logDirectory = path.join(h.dir, 'pods', 'p1');
    const { containerId } = await runPod(h, ['sleep', '3600'], { logPath: 'app/0.log', ...CHATTY }, { logDirectory });
    const file = path.join(logDirectory, 'app/0.log');
    h.clock.step(1000);
    const got = seqs(file);
    assert.equal(got.length, 500);
    assert.deepEqual(got, Array.from({ length: 500 }, (_, i) => i + 1));
    assert.equal(Buffer.byteLength(chatterLine(7, 64)), 64);
    assert.ok(containerId);
  } finally {
    await h.close();
  }
});

test('after a rename, lines go to the renamed file until ReopenContainerLog opens the path again', async () => {
  const h = await startHarness();
  try {
    const logDirectory = path.join(h.dir, 'pods', 'p2');
    const { containerId } = await runPod(h, ['sleep', '3600'], { logPath: 'app/0.log', ...CHATTY }, { logDirectory });
    const file = path.join(logDirectory, 'app/0.log');
    h.clock.step(200);
    fs.renameSync(file, `${file}.1`);
    h.clock.step(200);
    assert.equal(fs.existsSync(file), false, 'the runtime still writes to the file it holds open');
    await h.client.reopenContainerLog(containerId);
    h.clock.step(200);
    const old = seqs(`${file}.1`);
    const fresh = seqs(file);
    assert.deepEqual(old, Array.from({ length: 200 }, (_, i) => i + 1));
    assert.deepEqual(fresh, Array.from({ length: 100 }, (_, i) => i + 201), 'no line lost or repeated across the reopen');
  } finally {
    await h.close();
  }
});

test('ReopenContainerLog fails for a container that is not running (as containerd)', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['true'], { logPath: 'app/0.log' }, { logDirectory: path.join(h.dir, 'pods', 'p3') });
    h.clock.step(10);
    await assert.rejects(h.client.reopenContainerLog(containerId), (err: unknown) => err instanceof CriError && /container is not running/.test(err.message));
    await assert.rejects(h.client.reopenContainerLog('nope'), (err: unknown) => err instanceof CriError && err.code === 'ERR_CRI_NOT_FOUND');
  } finally {
    await h.close();
  }
});

test('hostile chatter annotations are clamped', () => {
  assert.equal(clampChatter(0, undefined), undefined);
  assert.deepEqual(clampChatter(1e12, 1e12), { linesPerSecond: 20_000, lineBytes: 16 * 1024 });
  assert.deepEqual(clampChatter(5, 1), { linesPerSecond: 5, lineBytes: 24 });
});
