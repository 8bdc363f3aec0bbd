/**
 * Garbage collection of pod log directories (the kubelet's container GC step
 * evictPodLogsDirectories): `<podLogsDir>/<namespace>_<name>_<uid>` directories of pods that are
 * gone are removed. Main thread; started from the sync loop's housekeeping tick, at most one pass
 * in flight, one pass per period (the kubelet's ContainerGCPeriod: 1 min), only once every
 * source has delivered (before that any pod may still be wanted).
 *
 * What it removes: directories left by pods the agent no longer knows of. Normally a pod's worker
 * removes its directory at cleanup; this pass catches what that leaves behind: orphans (killed
 * with their logs kept, as the kubelet does), pods removed while the agent was down, and removals
 * that kept failing.
 *
 * "Gone" (the kubelet's ShouldPodRuntimeBeRemoved, roughly): `isPodKnown(uid)` is false (not
 * desired by a source, no pod worker, no runtime objects in the relist cache), checked again
 * right before each removal, and the directory was not modified for `minAgeMs` (a directory
 * being written to belongs to something alive).
 *
 * Bounds (hostile or huge directories): at most `maxEntries` directory entries are read per
 * pass (streamed, never the whole listing at once), at most `maxRemovals` removed per pass; the
 * rest waits for the next pass. Only direct children that are real directories (not symlinks)
 * with a well-formed name are ever touched, and each path is checked to resolve directly under
 * the root before it is removed.
 */
import type { Dir } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';

export interface PodLogGcDeps {
  clock: Clock;
  logger: Logger;
  /** The --pod-logs-dir root. */
  podLogsDir: string;
  /** Whether the pod may still need its logs: desired, has a worker, or has runtime objects. */
  isPodKnown: (uid: string) => boolean;
  /** Whether every pod source has delivered once. */
  sourcesReady: () => boolean;
  /** Removes one pod log directory (default: rm -rf). */
  remove?: (dir: string) => Promise<void>;
  periodMs?: number;
  minAgeMs?: number;
  maxEntries?: number;
  maxRemovals?: number;
  /** Observer of each completed pass (tests, diagnostics). */
  onPass?: (r: PodLogGcPass) => void;
}

export interface PodLogGcPass {
  scanned: number;
  removed: number;
  failed: number;
}

export const POD_LOG_GC_DEFAULTS = Object.freeze({
  periodMs: 60_000,
  minAgeMs: 60_000,
  maxEntries: 10_000,
  maxRemovals: 100,
});

export class PodLogGc {
  readonly #d: PodLogGcDeps;
  readonly #root: string;
  #nextPassMs: number | undefined;
  #running: Promise<PodLogGcPass> | undefined;
  #closed = false;

  constructor(deps: PodLogGcDeps) {
    if (typeof deps.podLogsDir !== 'string' || deps.podLogsDir === '') throw new TypeError('PodLogGc: deps.podLogsDir must be a non-empty path');
    this.#d = deps;
    this.#root = path.resolve(deps.podLogsDir);
  }

  /**
   * Starts a pass if one is due (housekeeping calls this every tick); returns the pass's
   * promise when one was started, undefined otherwise. Never rejects.
   */
  maybeRun(): Promise<PodLogGcPass> | undefined {
    if (this.#closed || this.#running !== undefined || !this.#d.sourcesReady()) return undefined;
    const now = this.#d.clock.monotonic();
    if (this.#nextPassMs !== undefined && now < this.#nextPassMs) return undefined;
    this.#nextPassMs = now + (this.#d.periodMs ?? POD_LOG_GC_DEFAULTS.periodMs);
    const run = this.#pass().finally(() => {
      this.#running = undefined;
    });
    this.#running = run;
    return run;
  }

  /** No new passes; a pass in flight finishes its current removal. Idempotent. */
  close(): void {
    this.#closed = true;
  }

  async #pass(): Promise<PodLogGcPass> {
    const maxEntries = this.#d.maxEntries ?? POD_LOG_GC_DEFAULTS.maxEntries;
    const maxRemovals = this.#d.maxRemovals ?? POD_LOG_GC_DEFAULTS.maxRemovals;
    const minAgeMs = this.#d.minAgeMs ?? POD_LOG_GC_DEFAULTS.minAgeMs;
    const remove = this.#d.remove ?? ((dir: string) => fsp.rm(dir, { recursive: true, force: true }));
    const r: PodLogGcPass = { scanned: 0, removed: 0, failed: 0 };
    let dir: Dir;
    try {
      dir = await fsp.opendir(this.#root, { bufferSize: 256 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') this.#d.logger.error('pod log GC: cannot list the pod logs directory', { path: this.#root, code: code ?? null, error: (err as Error).message });
      this.#d.onPass?.(r);
      return r;
    }
    try {
      for await (const ent of dir) {
        if (this.#closed || r.scanned >= maxEntries || r.removed + r.failed >= maxRemovals) break;
        r.scanned++;
        if (!ent.isDirectory()) continue; // symlinks and files are never followed or removed
        const uid = podUIDOfLogDir(ent.name);
        if (uid === undefined || this.#d.isPodKnown(uid)) continue;
        const full = path.join(this.#root, ent.name);
        if (path.dirname(full) !== this.#root) continue;
        try {
          const st = await fsp.lstat(full);
          if (!st.isDirectory() || this.#d.clock.now() - st.mtimeMs < minAgeMs) continue;
          if (this.#d.isPodKnown(uid)) continue; // the pod came back while we looked
          await remove(full);
          r.removed++;
          this.#d.logger.v(2).info('pod log GC: removed the log directory of a pod that is gone', { podUID: uid, path: full });
        } catch (err) {
          r.failed++;
          const code = (err as NodeJS.ErrnoException).code;
          this.#d.logger.error('pod log GC: cannot remove a pod log directory; retried next pass', { podUID: uid, path: full, code: code ?? null, error: (err as Error).message });
        }
      }
    } catch (err) {
      this.#d.logger.error('pod log GC: listing the pod logs directory failed', { path: this.#root, error: (err as Error).message });
    } finally {
      try {
        await dir.close();
      } catch {
        // already closed by the for-await loop
      }
    }
    this.#d.onPass?.(r);
    return r;
  }
}

/**
 * The pod UID of a `<namespace>_<name>_<uid>` directory name (the kubelet's
 * BuildPodLogsDirectory; namespaces and names are DNS labels/subdomains, never '_'), or
 * undefined for anything else (such entries are not ours and are left alone).
 */
export function podUIDOfLogDir(name: string): string | undefined {
  const parts = name.split('_');
  if (parts.length !== 3 || parts.some((p) => p === '' || p === '.' || p === '..')) return undefined;
  return parts[2];
}
