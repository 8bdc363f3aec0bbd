/**
 * The disk usage of one directory tree, measured in slices (the kubelet's fs.DiskUsage, a
 * `du -s -B1 -x`, made resumable so a pod-worker thread never spends long on it at once).
 *
 * What is counted, as the kubelet counts it: `st_blocks * 512` of every entry, the root
 * included, read with lstat — a symlink is one small entry and is never followed, so a link to
 * a big file outside the volume costs nothing; an entry on another device than the root is
 * neither counted nor descended into (a mount inside the volume is not the volume's usage);
 * a file with several hard links inside the tree is counted once.
 *
 * Cost and bounds (one walk):
 *   - at most one fs call in flight (one libuv threadpool slot per walk, so a big volume never
 *     starves the thread's other fs work: log writes, atomic writers);
 *   - one open directory handle at a time: directories are walked breadth-first from a queue of
 *     paths, never a stack of open handles, so a deep tree costs no file descriptors;
 *   - memory: the queue of directories not yet read (at most {@link DIR_USAGE_LIMITS.maxPendingDirs})
 *     and the hard-link set (at most {@link DIR_USAGE_LIMITS.maxLinkedInodes}); past either cap
 *     the walk goes on undercounting (directories dropped) or overcounting (links counted again)
 *     and says so in `truncated`;
 *   - time: `step(budget)` lstat's at most `budget` entries and returns; the caller decides how
 *     many per tick.
 * Entries that vanish while being walked are skipped (ENOENT); other errors end the walk of that
 * directory only and are counted in `errors`.
 *
 * Races (as in the kubelet's filepath.Walk): a directory a container swaps for a symlink between
 * its lstat and its opendir is opened through the link. Only the pod's own containers can run
 * that race, the walk stays on the volume's device and within its budget, and the only effect is
 * a larger count for that pod — its own eviction, which it could cause by writing anyway.
 */
import fs from 'node:fs/promises';
import type { Dir } from 'node:fs';
import path from 'node:path';

export const DIR_USAGE_LIMITS = Object.freeze({
  /** Directories queued but not yet read. */
  maxPendingDirs: 65_536,
  /** Inodes with st_nlink > 1 remembered for de-duplication. */
  maxLinkedInodes: 65_536,
  /** 512-byte blocks, as st_blocks counts them. */
  blockSize: 512,
});

export interface DirUsageProgress {
  /** Bytes counted so far (the final usage once `done`). */
  bytes: number;
  /** Entries lstat'ed so far, the root included. */
  entries: number;
  done: boolean;
}

export class DirUsageWalk {
  readonly root: string;
  #bytes = 0;
  #entries = 0;
  #errors = 0;
  #truncated = false;
  #started = false;
  #done = false;
  #rootDev = 0;
  /** Directories still to read, breadth-first. */
  readonly #queue: string[] = [];
  /** The directory being read and its path. */
  #dir: Dir | undefined;
  #dirPath = '';
  readonly #linked = new Set<string>();

  constructor(root: string) {
    this.root = root;
  }

  get progress(): DirUsageProgress {
    return { bytes: this.#bytes, entries: this.#entries, done: this.#done };
  }

  /** Errors other than ENOENT met so far (a directory that could not be read, ...). */
  get errors(): number {
    return this.#errors;
  }

  /** A cap of DIR_USAGE_LIMITS was reached: the count is approximate. */
  get truncated(): boolean {
    return this.#truncated;
  }

  /**
   * Walks on until `budget` more entries were lstat'ed or the tree is done. Returns the number
   * of entries used (0 when already done).
   */
  async step(budget: number): Promise<number> {
    let used = 0;
    if (this.#done || !(budget > 0)) return 0;
    if (!this.#started) {
      this.#started = true;
      used++;
      const st = await lstatOrUndefined(this.root, () => this.#errors++);
      if (st === undefined) {
        this.#finish();
        return used;
      }
      this.#rootDev = st.dev;
      this.#count(st);
      if (!st.isDirectory()) {
        this.#finish();
        return used;
      }
      this.#queue.push(this.root);
    }
    while (used < budget) {
      if (this.#dir === undefined) {
        const next = this.#queue.shift();
        if (next === undefined) {
          this.#finish();
          break;
        }
        try {
          this.#dir = await fs.opendir(next, { bufferSize: 32 });
          this.#dirPath = next;
        } catch (err) {
          if (code(err) !== 'ENOENT') this.#errors++;
          continue;
        }
      }
      let entry;
      try {
        entry = await this.#dir.read();
      } catch (err) {
        if (code(err) !== 'ENOENT') this.#errors++;
        entry = null;
      }
      if (entry === null) {
        await this.#closeDir();
        continue;
      }
      const child = path.join(this.#dirPath, entry.name);
      used++;
      const st = await lstatOrUndefined(child, () => this.#errors++);
      if (st === undefined || st.dev !== this.#rootDev) continue;
      this.#count(st);
      if (st.isDirectory()) {
        if (this.#queue.length < DIR_USAGE_LIMITS.maxPendingDirs) this.#queue.push(child);
        else this.#truncated = true;
      }
    }
    return used;
  }

  /** Releases the open directory handle, if any (idempotent; the walk is done afterwards). */
  async close(): Promise<void> {
    this.#queue.length = 0;
    this.#done = true;
    await this.#closeDir();
  }

  #count(st: { nlink: number; ino: number; dev: number; blocks: number; isDirectory(): boolean }): void {
    this.#entries++;
    if (st.nlink > 1 && !st.isDirectory()) {
      const key = `${st.dev}:${st.ino}`;
      if (this.#linked.has(key)) return;
      if (this.#linked.size < DIR_USAGE_LIMITS.maxLinkedInodes) this.#linked.add(key);
      else this.#truncated = true;
    }
    this.#bytes += st.blocks * DIR_USAGE_LIMITS.blockSize;
  }

  #finish(): void {
    this.#done = true;
    this.#linked.clear();
  }

  async #closeDir(): Promise<void> {
    const d = this.#dir;
    this.#dir = undefined;
    if (d === undefined) return;
    try {
      await d.close();
    } catch {
      // Already closed (a read error closes nothing, but close() twice throws): nothing to free.
    }
  }
}

async function lstatOrUndefined(p: string, onError: () => void): Promise<import('node:fs').Stats | undefined> {
  try {
    return await fs.lstat(p);
  } catch (err) {
    if (code(err) !== 'ENOENT') onError();
    return undefined;
  }
}

function code(err: unknown): string | undefined {
  const c = (err as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}
