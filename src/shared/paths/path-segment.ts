/**
 * THE single-path-component check, for every name from outside (a pod's namespace/name/uid, a
 * volume or container name, a runtime label) that is about to become one directory entry below a
 * parent shardlet owns: pod log paths (main thread and workers), volume directories and emptyDir
 * accounting (workers). Names that climb (`.`, `..`), contain a separator or NUL, or exceed
 * NAME_MAX are refused; the caller decides what a refusal means (an error naming the field, or
 * skipping a runtime entry shardlet did not create).
 */

/** Longest path component accepted (Linux NAME_MAX). */
export const MAX_SEGMENT_BYTES = 255;

/** Why `s` is not a safe single path component, or undefined when it is one. */
export function checkPathSegment(s: string): string | undefined {
  if (s === '' || s === '.' || s === '..') return `invalid path component ${JSON.stringify(s)}`;
  if (s.includes('/') || s.includes('\\') || s.includes('\0')) return `path component ${JSON.stringify(s.slice(0, 64))} contains a separator or NUL`;
  if (Buffer.byteLength(s) > MAX_SEGMENT_BYTES) return `path component longer than ${MAX_SEGMENT_BYTES} bytes`;
  return undefined;
}

/** Whether `s` is a string and a safe single path component. */
export function isPathSegment(s: string | undefined): s is string {
  return typeof s === 'string' && checkPathSegment(s) === undefined;
}
