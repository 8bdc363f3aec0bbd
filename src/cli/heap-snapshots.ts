/**
 * A diagnostic for memory work (issue 15): with `SHARDLET_HEAP_SNAPSHOT_DIR` set in the agent's
 * environment, each SIGUSR2 writes one V8 heap snapshot per thread of the process into that
 * directory — the main thread's (`v8.writeHeapSnapshot`) and every live worker thread's
 * (`Worker.getHeapSnapshot()`, taken from the main thread: pod workers, the PLEG thread, the
 * manifest decoder) — then `done-<n>.json` naming the files. `bench/heap-summary.ts` reads them.
 *
 * Workers are learnt from `process.on('worker')` (emitted for every Worker the process creates,
 * Piscina's included), so no pool, runner or decoder module knows about this diagnostic.
 * Node's own `--heapsnapshot-signal` covers the main thread only.
 *
 * The directory is the operator's (environment, checked to be an absolute path to an existing
 * directory when installed); file names are built here from counters and thread ids only.
 * A snapshot pauses the thread it describes for a second or more on a large heap: never enable
 * this in production.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import v8 from 'node:v8';
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../shared/logging/logger.js';

export const HEAP_SNAPSHOT_DIR_ENV = 'SHARDLET_HEAP_SNAPSHOT_DIR';

export class HeapSnapshotConfigError extends Error {
  readonly code = 'ERR_HEAP_SNAPSHOT_DIR';
}

/** Worker threads alive now, in creation order, learnt from process 'worker' events. */
function trackWorkers(): Set<Worker> {
  const live = new Set<Worker>();
  process.on('worker', (w: Worker) => {
    live.add(w);
    w.once('exit', () => live.delete(w));
  });
  return live;
}

/**
 * Installs the SIGUSR2 handler when `dir` is set; returns false (nothing installed) when not.
 * Throws HeapSnapshotConfigError when `dir` is not an absolute path to a directory.
 */
export function installHeapSnapshots(dir: string | undefined, logger: Logger): boolean {
  if (dir === undefined || dir === '') return false;
  if (!path.isAbsolute(dir) || !fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new HeapSnapshotConfigError(`${HEAP_SNAPSHOT_DIR_ENV} must be an absolute path to an existing directory, got ${JSON.stringify(dir.slice(0, 200))}`);
  }
  const workers = trackWorkers();
  let n = 0;
  let busy = false;
  process.on('SIGUSR2', () => {
    if (busy) return;
    busy = true;
    const round = ++n;
    void writeAll(dir, round, [...workers])
      .then((files) => logger.info('heap snapshots written', { dir, round, files: files.length }))
      .catch((err: unknown) => logger.error('heap snapshots failed', { error: err instanceof Error ? err.message : String(err) }))
      .finally(() => (busy = false));
  });
  logger.info('heap snapshots on SIGUSR2', { dir });
  return true;
}

async function writeAll(dir: string, round: number, workers: Worker[]): Promise<string[]> {
  const files: string[] = [];
  for (const w of workers) {
    const file = path.join(dir, `r${round}-thread-${w.threadId}.heapsnapshot`);
    try {
      await pipeline(await w.getHeapSnapshot(), fs.createWriteStream(file));
      files.push(file);
    } catch {
      // The thread exited meanwhile: no snapshot for it.
    }
  }
  files.push(v8.writeHeapSnapshot(path.join(dir, `r${round}-thread-0.heapsnapshot`)));
  // Written aside and renamed: whoever waits for the index never reads it half-written.
  const index = path.join(dir, `done-${round}.json`);
  await fs.promises.writeFile(`${index}.tmp`, JSON.stringify({ round, files }) + '\n');
  await fs.promises.rename(`${index}.tmp`, index);
  return files;
}
