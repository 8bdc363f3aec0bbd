/**
 * The file operations the cgroup code does, behind a small seam: the real one is node's async
 * fs (never the sync calls: cgroupfs writes can block, and the main thread and the pod workers
 * must not stall on them); tests use the same one over a temp dir, or a fake.
 *
 * Contract: paths are absolute and already checked by the caller (cgroup-name.ts); errors are
 * node's ErrnoExceptions with their `code` (EEXIST, ENOENT, EBUSY, EACCES, EROFS, ...).
 */
import fsp from 'node:fs/promises';

export interface CgroupFs {
  /** Creates one directory; EEXIST when it is there. */
  mkdir(path: string): Promise<void>;
  /** Writes a whole control file (one write(2), as the kernel wants). */
  writeFile(path: string, data: string): Promise<void>;
  readFile(path: string): Promise<string>;
  /** Removes one empty cgroup directory (EBUSY while it holds processes or children). */
  rmdir(path: string): Promise<void>;
  /** Names of the sub-directories (child cgroups) of `path`. */
  childDirs(path: string): Promise<string[]>;
  /** Whether `path` exists. */
  exists(path: string): Promise<boolean>;
}

export const nodeCgroupFs: CgroupFs = Object.freeze({
  mkdir: async (p: string) => void (await fsp.mkdir(p)),
  writeFile: (p: string, data: string) => fsp.writeFile(p, data, { flag: 'w' }),
  readFile: (p: string) => fsp.readFile(p, 'utf8'),
  rmdir: (p: string) => fsp.rmdir(p),
  childDirs: async (p: string) => (await fsp.readdir(p, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name),
  exists: (p: string) => fsp.access(p).then(() => true, () => false),
});

export function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
