/**
 * Freezes a plain data tree (decoded JSON or protobuf objects) in place, so one object can be
 * shared by every holder without defensive copies: a holder that tries to change it throws
 * (ES modules run in strict mode) instead of silently changing everyone's view.
 *
 * A subtree that is already frozen is not walked again: the sharers of a pod's unchanged spec
 * (the merger's previous version, the pod manager) freeze it once. Typed arrays and Buffers
 * (protobuf bytes fields) cannot be frozen and are left as they are.
 */
export function deepFreeze<T>(v: T): T {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return v;
  if (ArrayBuffer.isView(v)) return v;
  Object.freeze(v);
  for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  return v;
}
