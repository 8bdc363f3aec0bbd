/**
 * The pod events the kubelet records while it syncs a pod (pkg/kubelet/events/event.go reasons),
 * as a recorder role the runtime logic calls at the moment the action happens. In cluster mode
 * the pod-worker thread forwards each to the main thread's event recorder (src/main/events/); in
 * standalone mode there is no recorder and nothing is built.
 */
import type { V1Pod } from '@kubernetes/client-node';

export type PodEventType = 'Normal' | 'Warning';

/** `fieldPath` names the container ("spec.containers{name}"), as the kubelet's container refs do. */
export type PodEventRecorder = (pod: V1Pod, type: PodEventType, reason: string, message: string, fieldPath?: string) => void;

export const PodEventReason = Object.freeze({
  Pulling: 'Pulling',
  Pulled: 'Pulled',
  Failed: 'Failed',
  BackOff: 'BackOff',
  Created: 'Created',
  Started: 'Started',
  Killing: 'Killing',
  FailedCreatePodSandBox: 'FailedCreatePodSandBox',
  Unhealthy: 'Unhealthy',
  ProbeWarning: 'ProbeWarning',
  FailedMount: 'FailedMount',
  FailedPostStartHook: 'FailedPostStartHook',
  FailedPreStopHook: 'FailedPreStopHook',
  /** The kubelet's events.FailedToCreatePodContainer (the pod cgroup could not be made). */
  FailedCreatePodContainer: 'FailedCreatePodContainer',
});

/** The kubelet's container reference field path. */
export function containerFieldPath(pod: V1Pod, containerName: string): string {
  const init = (pod.spec?.initContainers ?? []).some((c) => c.name === containerName);
  const ephemeral = !init && (pod.spec?.ephemeralContainers ?? []).some((c) => c.name === containerName);
  return `spec.${init ? 'initContainers' : ephemeral ? 'ephemeralContainers' : 'containers'}{${containerName}}`;
}
