/**
 * What one relist listed, for kubelet_running_pods / kubelet_running_containers (the kubelet's
 * updateRunningPodAndContainerMetrics, computed by its PLEG from the same listing). Pure.
 */
import type { RuntimeCounts } from '../../src/shared/protocol/pleg-protocol.js';
import type { RelistPod } from '../runtime-status/bulk-pod-status.js';

export function countRuntime(pods: Iterable<RelistPod>): RuntimeCounts {
  const out: RuntimeCounts = { runningPods: 0, containers: { created: 0, running: 0, exited: 0, unknown: 0 } };
  for (const p of pods) {
    if (p.sandboxes.some((s) => s.state === 'SANDBOX_READY')) out.runningPods++;
    for (const c of p.containers) {
      switch (c.state) {
        case 'CONTAINER_CREATED': out.containers.created++; break;
        case 'CONTAINER_RUNNING': out.containers.running++; break;
        case 'CONTAINER_EXITED': out.containers.exited++; break;
        default: out.containers.unknown++;
      }
    }
  }
  return out;
}
