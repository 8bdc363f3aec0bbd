/**
 * Structural equality over decoded JSON-like data (objects, arrays, Dates, primitives): pod
 * specs and statuses, on any thread. A key whose value is undefined counts as absent. (Go's
 * reflect.DeepEqual also tells a nil map from an empty one; decoded manifests never produce that
 * distinction meaningfully, so we do not.)
 *
 * Allocation-free on purpose: it runs once per pod sync on the pod-worker threads (is the status
 * the same as the one last sent?), where `util.isDeepStrictEqual`'s general machinery (key
 * arrays, prototype and symbol checks) cost 2–3% of a thread's burst CPU.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && (a.getTime() === b.getTime() || (Number.isNaN(a.getTime()) && Number.isNaN(b.getTime())));
  }
  const arr = Array.isArray(a);
  if (arr !== Array.isArray(b)) return false;
  if (arr) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!deepEqual(x[i], y[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const k in x) {
    if (!Object.hasOwn(x, k)) continue;
    const v = x[k];
    if (v === undefined) continue;
    defined++;
    if (!Object.hasOwn(y, k) || !deepEqual(v, y[k])) return false;
  }
  for (const k in y) if (Object.hasOwn(y, k) && y[k] !== undefined) defined--;
  return defined === 0;
}
