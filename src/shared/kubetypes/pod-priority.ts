/**
 * A pod's scheduling priority as the kubelet reads it (pod.Spec.Priority), with the two
 * built-in priority classes resolved where nothing else resolved them: the API server's
 * Priority admission writes spec.priority from spec.priorityClassName, but a static pod (or a
 * pod from an API server without that plugin) carries only the class name. Values are
 * scheduling.SystemCriticalPriority (2e9) and the built-in classes' (pkg/apis/scheduling).
 */
import type { V1Pod } from '@kubernetes/client-node';

/** scheduling.SystemCriticalPriority: at or above it a pod is critical. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** The built-in priority classes and their values. */
export const BUILT_IN_PRIORITY_CLASSES: Readonly<Record<string, number>> = Object.freeze({
  'system-cluster-critical': SYSTEM_CRITICAL_PRIORITY,
  'system-node-critical': SYSTEM_CRITICAL_PRIORITY + 1000,
});

/** spec.priority when it is an integer; else a built-in class's value; else 0 (the default). */
export function podPriority(pod: V1Pod): number {
  const p = pod.spec?.priority;
  if (typeof p === 'number' && Number.isSafeInteger(p)) return p;
  const cls = pod.spec?.priorityClassName;
  return (typeof cls === 'string' ? BUILT_IN_PRIORITY_CLASSES[cls] : undefined) ?? 0;
}
