/**
 * Defaults applied to the status of a pod whose containers were all stopped for good (the
 * kubelet's statusManager.TerminatePod):
 *  - once the pod has initialized (the kubelet's hasPodInitialized), an app container status that
 *    is not terminated becomes terminated with exit code 137, reason ContainerStatusUnknown (the
 *    container can no longer be found running or waiting); app containers of a pod whose init
 *    containers never completed stay waiting (PodInitializing), as in the kubelet;
 *  - a non-static pod still Pending/Running becomes Failed.
 * Static pods keep their phase (the kubelet does not assign them a terminal phase).
 */
import type { V1ContainerStatus, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { isTerminalPhase } from './pod-phase.js';
import { isRestartableInitContainer, isStaticPod } from './pod-spec.js';

const UNKNOWN_REASON = 'ContainerStatusUnknown';
const UNKNOWN_MESSAGE = 'The container could not be located when the pod was terminated';

function terminate(s: V1ContainerStatus): V1ContainerStatus {
  if (s.state?.terminated) return s;
  return { ...s, ready: false, started: false, state: { terminated: { exitCode: 137, reason: UNKNOWN_REASON, message: UNKNOWN_MESSAGE } } };
}

/** The kubelet's hasPodInitialized, from the statuses about to be reported. */
function hasPodInitialized(pod: V1Pod, status: V1PodStatus): boolean {
  if ((pod.spec?.initContainers ?? []).length === 0) return true;
  if ((status.containerStatuses ?? []).some((c) => c.lastState?.terminated || !c.state?.waiting)) return true;
  const inits = status.initContainerStatuses ?? [];
  const last = inits[inits.length - 1];
  // The last init container a sidecar: initialized once it ran and started.
  const spec = (pod.spec?.initContainers ?? [])[inits.length - 1];
  if (spec && last && spec.name === last.name && isRestartableInitContainer(spec)) return last.state?.running !== undefined && last.started === true;
  return last?.state?.terminated?.exitCode === 0 || last?.lastState?.terminated?.exitCode === 0;
}

export function applyTerminalDefaults(pod: V1Pod, status: V1PodStatus): V1PodStatus {
  const out: V1PodStatus = { ...status };
  if (status.containerStatuses && hasPodInitialized(pod, status)) out.containerStatuses = status.containerStatuses.map(terminate);
  if (status.initContainerStatuses) {
    // Init containers that never ran stay waiting in the kubelet only when the pod initialized;
    // shardlet marks every non-terminated one, like app containers.
    out.initContainerStatuses = status.initContainerStatuses.map(terminate);
  }
  if (!isStaticPod(pod) && !isTerminalPhase(out.phase)) out.phase = 'Failed';
  return out;
}
