/**
 * The kubelet's kubelettypes.IsCriticalPod: static pods, mirror pods and pods at or above
 * system-critical priority. The eviction manager never evicts them ("cannot evict a critical
 * pod") and admits them under pressure. Used on the main thread (node-pressure eviction,
 * admission) and on worker threads (the emptyDir sizeLimit check). Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { SYSTEM_CRITICAL_PRIORITY, podPriority } from './pod-priority.js';

export { SYSTEM_CRITICAL_PRIORITY };

export function isCriticalPod(pod: V1Pod): boolean {
  const a = pod.metadata?.annotations ?? {};
  const source = a['kubernetes.io/config.source'];
  if (source !== undefined && source !== 'api') return true;
  if (a['kubernetes.io/config.mirror'] !== undefined) return true;
  return podPriority(pod) >= SYSTEM_CRITICAL_PRIORITY;
}
