import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { HeapSnapshotConfigError, installHeapSnapshots } from '../../../src/cli/heap-snapshots.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';

const MODULE = new URL('../../../src/cli/heap-snapshots.js', import.meta.url).href;
const LOGGER = new URL('../../../src/shared/logging/logger.js', import.meta.url).href;

// A process with one worker thread installs the diagnostic, signals itself and waits (bounded)
// for the round's index file, then prints it.
const CHILD = `
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { installHeapSnapshots } from ${JSON.stringify(MODULE)};
import { silentLogger } from ${JSON.stringify(LOGGER)};
const dir = process.argv[1];
installHeapSnapshots(dir, silentLogger);
const w = new Worker('globalThis.kept = Array.from({ length: 1000 }, (_, i) => ({ i })); setInterval(() => {}, 1000);', { eval: true });
await new Promise((r) => w.once('online', r));
const done = path.join(dir, 'done-1.json');
// The index is renamed into place when the round is complete: wait for that rename (bounded).
const written = new Promise((resolve, reject) => {
  const bound = setTimeout(() => reject(new Error('no heap snapshot index within 60 s')), 60_000);
  const watcher = fs.watch(dir, (_event, name) => {
    if (name !== 'done-1.json' || !fs.existsSync(done)) return;
    clearTimeout(bound);
    watcher.close();
    resolve(undefined);
  });
});
process.kill(process.pid, 'SIGUSR2');
await written;
process.stdout.write(fs.readFileSync(done, 'utf8'));
await w.terminate();
`;

test('SIGUSR2 writes one heap snapshot per thread (the worker from the main thread, then main) and an index', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-heapsnap-'));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CHILD, dir], { timeout: 90_000 });
    const index = JSON.parse(stdout) as { round: number; files: string[] };
    assert.equal(index.round, 1);
    assert.deepEqual(index.files.map((f) => path.basename(f)), ['r1-thread-1.heapsnapshot', 'r1-thread-0.heapsnapshot']);
    for (const f of index.files) {
      assert.equal(path.dirname(f), dir);
      const head = fs.readFileSync(f, 'utf8').slice(0, 20);
      assert.match(head, /^\{"snapshot":/, `${f} is a V8 heap snapshot`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('not installed without a directory; a relative or missing directory is refused naming the variable', () => {
  assert.equal(installHeapSnapshots(undefined, silentLogger), false);
  assert.equal(installHeapSnapshots('', silentLogger), false);
  assert.throws(() => installHeapSnapshots('relative/dir', silentLogger), (e: unknown) => e instanceof HeapSnapshotConfigError && /SHARDLET_HEAP_SNAPSHOT_DIR/.test(e.message));
  assert.throws(() => installHeapSnapshots(path.join(os.tmpdir(), 'shardlet-no-such-dir-x9'), silentLogger), HeapSnapshotConfigError);
});
