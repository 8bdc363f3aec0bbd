/**
 * activeDeadlineSeconds (the kubelet's activeDeadlineHandler, kubelet/active_deadline.go): a pod
 * that has been active on the node (since its status.startTime) for at least the deadline is
 * failed with reason DeadlineExceeded. Also tells the caller when to sync again so the deadline
 * is noticed on time (the kubelet's ShouldSync).
 */
import type { V1Pod } from '@kubernetes/client-node';

export const DEADLINE_EXCEEDED_REASON = 'DeadlineExceeded';
export const DEADLINE_EXCEEDED_MESSAGE = 'Pod was active on the node longer than the specified deadline';

/** Ms until the deadline passes (0 when past), or undefined when the pod has no deadline. */
export function msUntilActiveDeadline(pod: V1Pod, startTime: Date | undefined, nowMs: number): number | undefined {
  const secs = pod.spec?.activeDeadlineSeconds;
  if (secs === undefined || secs === null || startTime === undefined) return undefined;
  return Math.max(0, startTime.getTime() + secs * 1000 - nowMs);
}

export function pastActiveDeadline(pod: V1Pod, startTime: Date | undefined, nowMs: number): boolean {
  return msUntilActiveDeadline(pod, startTime, nowMs) === 0;
}
