/**
 * The pod log directories on disk, confined to `--pod-logs-dir`.
 *
 * Every directory the agent creates or deletes for a pod goes through {@link resolveWithinRoot}:
 * the target is resolved and must lie strictly inside the root (never the root itself, never
 * beside it); a pod's log directory must moreover be a direct child of the root, so a uid like
 * `../../default_other_<uid>` cannot name another pod's directory either. Admission already rejects identifiers that could climb (pod-validation.ts checks
 * uid, namespace and name); this is the second line, so that a pod that reached a worker some
 * other way (a runtime label, a future source) still cannot make the agent `rm -rf` or create a
 * directory anywhere else. The check is lexical: the root is the agent's own directory, and only
 * the agent and the runtime write into it, so a symlink planted inside it is out of scope (and
 * `fs.rm` removes a symlink, never its target).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { isWithin } from '../path-containment.js';
import { removeContainerLogFiles } from '../../src/shared/fs/container-log-files.js';

/**
 * Log directory operations of the kuberuntime (recursive mkdir and rm -rf of one pod's
 * directory), and the removal of one container instance's log files (the live file and its
 * rotated siblings) when a dead instance is pruned.
 */
export interface PodLogDirs {
  mkdir(dir: string): Promise<void>;
  remove(dir: string): Promise<void>;
  /** Removes `logPath` and the rotation's `<logPath>.*` plain files (container-log-files.ts). */
  removeFiles(logPath: string): Promise<void>;
}

/** A path the agent was asked to touch lies outside its directory: refused, nothing done. */
export class PathOutsideRootError extends Error {
  override readonly name = 'PathOutsideRootError';
  readonly code = 'ERR_PATH_OUTSIDE_ROOT';
  constructor(readonly root: string, readonly target: string) {
    super(`refusing to touch ${JSON.stringify(target.slice(0, 512))}: not inside ${JSON.stringify(root)}`);
  }
}

/**
 * `target` resolved, if it lies strictly inside `root` (and, with `directChild`, right below it);
 * else throws {@link PathOutsideRootError}. The one check every pod directory operation uses.
 */
export function resolveWithinRoot(root: string, target: string, opts: { directChild?: boolean } = {}): string {
  const r = path.resolve(root);
  const t = path.resolve(r, target);
  const rel = path.relative(r, t);
  // Checked on the raw text too: `a_../../b` normalizes to an innocent-looking `b`.
  const climbs = target.split(/[\\/]/).some((seg) => seg === '..' || seg === '.');
  const outside = climbs || rel === '' || !isWithin(r, t) || target.includes('\0');
  if (outside || (opts.directChild === true && rel.includes(path.sep))) throw new PathOutsideRootError(r, target);
  return t;
}

/** node:fs pod log directories, direct children of `root`; any other path is refused before any I/O. */
export function nodePodLogDirs(root: string): PodLogDirs {
  return Object.freeze({
    async mkdir(dir: string): Promise<void> {
      const target = resolveWithinRoot(root, dir, { directChild: true });
      try {
        await fs.mkdir(target, { recursive: true, mode: 0o755 });
      } catch (err) {
        throw await realMkdirError(target, err);
      }
    },
    async remove(dir: string): Promise<void> {
      await fs.rm(resolveWithinRoot(root, dir, { directChild: true }), { recursive: true, force: true });
    },
    async removeFiles(logPath: string): Promise<void> {
      await removeContainerLogFiles(resolveWithinRoot(root, logPath));
    },
  });
}

/**
 * Node's recursive mkdir reports ENOENT when a parent cannot be created for another reason (a
 * read-only filesystem: EROFS; permissions: EACCES), which sent operators looking for a missing
 * directory. Retry one level at a time to find the real errno, and name the path.
 */
async function realMkdirError(dir: string, first: unknown): Promise<Error> {
  const parts = path.resolve(dir).split(path.sep).filter((p) => p !== '');
  let cur: string = path.sep;
  for (const p of parts) {
    cur = path.join(cur, p);
    try {
      await fs.mkdir(cur, { mode: 0o755 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      return Object.assign(new Error(`create pod log directory "${dir}": ${code ?? 'error'}: ${(err as Error).message}`), { code });
    }
  }
  const code = (first as NodeJS.ErrnoException).code;
  return Object.assign(new Error(`create pod log directory "${dir}": ${(first as Error).message}`), { code });
}
