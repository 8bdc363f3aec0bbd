/**
 * The one error class of the cgroup code, with a stable code per cause. Callers branch on
 * `code`, never on the message; the message names the path and what to do.
 */
import { errnoCode } from './cgroup-fs.js';

export type CgroupErrorCode =
  /** Not permitted to create or write (not root, or a delegated tree that is not ours). */
  | 'ERR_CGROUP_PERMISSION'
  /** The cgroup filesystem is mounted read-only (typical in an unprivileged container). */
  | 'ERR_CGROUP_READONLY'
  /** A controller shardlet needs (cpu, memory) is not mounted or not enabled. */
  | 'ERR_CGROUP_CONTROLLER'
  /** rmdir refused: processes or child cgroups are still inside. */
  | 'ERR_CGROUP_BUSY'
  /** The settings cannot be used (e.g. the systemd driver without systemd). */
  | 'ERR_CGROUP_CONFIG'
  /** Any other I/O failure. */
  | 'ERR_CGROUP_IO';

export class CgroupError extends Error {
  override readonly name = 'CgroupError';
  readonly code: CgroupErrorCode;
  constructor(code: CgroupErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export function isCgroupError(err: unknown, code?: CgroupErrorCode): err is CgroupError {
  return err instanceof CgroupError && (code === undefined || err.code === code);
}

/** A node fs error on `path` during `what`, as a CgroupError with the cause's code. */
export function cgroupErrorFrom(err: unknown, what: string, path: string): CgroupError {
  if (err instanceof CgroupError) return err;
  const errno = errnoCode(err);
  const detail = err instanceof Error ? err.message : String(err);
  switch (errno) {
    case 'EACCES':
    case 'EPERM':
      return new CgroupError('ERR_CGROUP_PERMISSION', `${what} ${path}: permission denied (${errno}); creating cgroups needs root`);
    case 'EROFS':
      return new CgroupError('ERR_CGROUP_READONLY', `${what} ${path}: the cgroup filesystem is read-only (EROFS)`);
    case 'EBUSY':
      return new CgroupError('ERR_CGROUP_BUSY', `${what} ${path}: busy (processes or child cgroups remain)`);
    default:
      return new CgroupError('ERR_CGROUP_IO', `${what} ${path}: ${detail}`);
  }
}
