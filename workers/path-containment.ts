/**
 * The one "is this path inside that directory" predicate of the worker side, used wherever a
 * path built from a pod spec is about to be created, removed or mounted: pod log directories
 * (kuberuntime/pod-log-dirs.ts) and volume subPaths (volumes/container-mounts.ts). Lexical on
 * resolved paths; callers that follow symlinks resolve them first (realpath).
 */
import path from 'node:path';

/** Whether `target` (resolved) lies inside `dir` (resolved) or is `dir` itself. */
export function isWithin(dir: string, target: string): boolean {
  const rel = path.relative(dir, target);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}
