/**
 * Readiness gates on the main thread: whether a status-only change of an API pod (the config's
 * RECONCILE) calls for a sync of its pod worker, the kubelet's HandlePodReconcile with
 * status.NeedToReconcilePodReadiness. A pod with `spec.readinessGates` is Ready only once every
 * gate's condition, which another client sets in the API pod's status, is True; the pod worker
 * reads those conditions from the pod it is sent, so a change of any of them must reach it.
 *
 * The kubelet recomputes Ready from the new status and compares it with the API's Ready; this
 * compares the gates' conditions before and after instead (same outcome without generating the
 * conditions here; the pod worker generates them): the echo of this agent's own status write
 * changes no gate and costs no sync. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';

/** The status of `type` in the pod's conditions ('' when absent). */
function conditionStatus(pod: V1Pod, type: string): string {
  return pod.status?.conditions?.find((c) => c.type === type)?.status ?? '';
}

/** True when `after` differs from `before` in the status of one of its readiness gates' conditions. */
export function readinessGatesChanged(before: V1Pod, after: V1Pod): boolean {
  const gates = after.spec?.readinessGates ?? [];
  return gates.some((g) => conditionStatus(before, g.conditionType) !== conditionStatus(after, g.conditionType));
}
