/**
 * Issue 15: the manifest decoder thread exits after `idleExitMs` without a call (injected clock)
 * and the next call starts a new one; a thread with calls in flight or queued never exits. The
 * thread really ends (its Worker emits 'exit'), so its isolate leaves the RSS.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Worker } from 'node:worker_threads';
import { ThreadManifestDecoder } from '../../../src/main/config/manifest-decode-thread-client.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { podYaml } from './bad-input-corpus.js';

const ctx = { source: 'file' as const, origin: '/m/web.yaml', nodeName: 'n1', allowLists: false };

/** Resolves when `w` has exited; rejects after 30 s (bounded wait). */
function exited(w: Worker): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`thread ${w.threadId} still running after 30 s`)), 30_000);
    w.once('exit', (code) => (clearTimeout(t), resolve(code)));
  });
}

test('the decoder thread exits after idleExitMs without a call; the next call starts a new thread', async () => {
  const clock = new FakeClock();
  const started: Worker[] = [];
  const onWorker = (w: Worker): void => void started.push(w);
  process.on('worker', onWorker);
  const d = new ThreadManifestDecoder({ clock, logger: silentLogger, idleExitMs: 10_000 });
  try {
    assert.equal(d.threadRunning, false, 'no thread before the first call');
    const first = await d.decode(podYaml('web'), ctx);
    assert.ok(first.ok);
    assert.equal(d.startedThreads, 1);
    assert.equal(started.length, 1);
    const firstThread = started[0]!;
    const firstExit = exited(firstThread);

    clock.step(9_999);
    assert.equal(d.threadRunning, true, 'still there just before idleExitMs');
    clock.step(1);
    assert.equal(d.threadRunning, false, 'stopped at idleExitMs');
    assert.equal(d.idleExits, 1);
    await firstExit;

    const second = await d.decode(podYaml('db'), ctx);
    assert.ok(second.ok, 'a new thread decodes the next manifest');
    assert.equal(second.pods[0]?.metadata?.name, 'db-n1');
    assert.equal(d.startedThreads, 2);
    assert.equal(d.replacedThreads, 0, 'an idle exit is not a failure');
  } finally {
    process.off('worker', onWorker);
    await d.close();
  }
});

test('calls reset the idle timer, and a call in flight keeps the thread through idleExitMs', async () => {
  const clock = new FakeClock();
  const d = new ThreadManifestDecoder({ clock, logger: silentLogger, idleExitMs: 10_000, timeoutMs: 60_000 });
  try {
    assert.ok((await d.decode(podYaml('a'), ctx)).ok);
    clock.step(8_000);
    assert.ok((await d.decode(podYaml('b'), ctx)).ok, 'a call 8 s later');
    clock.step(8_000);
    assert.equal(d.threadRunning, true, '16 s after the first call but 8 s after the last: still running');
    // A call sent and not yet answered: idle time passes on the clock before the answer arrives.
    const pending = d.decode(podYaml('c'), ctx);
    clock.step(20_000);
    assert.equal(d.threadRunning, true, 'a thread with a call in flight does not exit');
    assert.ok((await pending).ok);
    assert.equal(d.startedThreads, 1);
    assert.equal(d.idleExits, 0);
    clock.step(10_000);
    assert.equal(d.threadRunning, false);
    assert.equal(d.idleExits, 1);
  } finally {
    await d.close();
  }
});

test('idleExitMs is validated', () => {
  assert.throws(() => new ThreadManifestDecoder({ clock: new FakeClock(), logger: silentLogger, idleExitMs: 0 }), /idleExitMs/);
});
