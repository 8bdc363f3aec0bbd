/**
 * The kubelet's on-disk layout of pod volumes under `--root-dir`, and the checks that keep every
 * path built from API input inside it:
 *
 *   <rootDir>/pods/<podUID>/volumes/<plugin dir>/<volume name>/     a volume's directory
 *   <plugin dir> = `kubernetes.io~empty-dir` | `~configmap` | `~secret` | `~downward-api` | `~projected`
 *
 * hostPath volumes have no directory here (the host path itself is mounted). The layout is the
 * kubelet's (getPodVolumeDir), so a restarted agent finds and adopts what it set up before.
 *
 * Invariant: nothing from a pod spec becomes a path without passing {@link checkPathSegment}
 * (one component: no separator, no `.`/`..`, no NUL, bounded) or {@link checkRelativePath}
 * (relative, no `..` component, no component starting with `..`, which the atomic writer
 * reserves for its own entries). Admission validates uid and volume names too; this is the
 * second line, for anything that reaches a worker another way.
 */
import path from 'node:path';
import { checkPathSegment } from '../../src/shared/paths/path-segment.js';

export type VolumePluginDir =
  | 'kubernetes.io~empty-dir'
  | 'kubernetes.io~configmap'
  | 'kubernetes.io~secret'
  | 'kubernetes.io~downward-api'
  | 'kubernetes.io~projected';

/** Longest relative path accepted inside a volume (items[].path, subPath). */
export const MAX_RELATIVE_PATH_BYTES = 4096;

/**
 * Why a relative path from the spec (a configMap item's path, a subPath) was refused, or
 * undefined. The kubelet's validatePath (atomic_writer.go) plus the subPath rules: not
 * absolute, no `..` component, no component that starts with `..`.
 */
export function checkRelativePath(p: string): string | undefined {
  if (p === '') return 'must not be empty';
  if (Buffer.byteLength(p) > MAX_RELATIVE_PATH_BYTES) return `must be no more than ${MAX_RELATIVE_PATH_BYTES} bytes`;
  if (p.includes('\0')) return 'must not contain NUL';
  if (path.isAbsolute(p)) return `${JSON.stringify(p.slice(0, 256))}: must be a relative path`;
  for (const seg of p.split('/')) {
    if (seg === '..') return `${JSON.stringify(p.slice(0, 256))}: must not contain '..'`;
    if (seg.startsWith('..')) return `${JSON.stringify(p.slice(0, 256))}: must not start with '..'`;
  }
  return undefined;
}

/** `<rootDir>/pods/<uid>` (the uid checked as one path component; throws when it is not one). */
export function podDir(rootDir: string, uid: string): string {
  const bad = checkPathSegment(uid);
  if (bad !== undefined) throw new RangeError(`pod uid: ${bad}`);
  return path.join(path.resolve(rootDir), 'pods', uid);
}

/** `<rootDir>/pods/<uid>/volumes`. */
export function podVolumesDir(rootDir: string, uid: string): string {
  return path.join(podDir(rootDir, uid), 'volumes');
}

/** `<rootDir>/pods/<uid>/volumes/<plugin>/<name>` (throws when uid or name is not one component). */
export function volumeDir(rootDir: string, uid: string, plugin: VolumePluginDir, name: string): string {
  const bad = checkPathSegment(name);
  if (bad !== undefined) throw new RangeError(`volume name: ${bad}`);
  return path.join(podVolumesDir(rootDir, uid), plugin, name);
}
