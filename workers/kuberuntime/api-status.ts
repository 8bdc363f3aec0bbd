/**
 * The API status of a pod (the kubelet's generateAPIPodStatus, kubelet_pods.go), from the runtime
 * status, the start failures of the last syncs (reason cache) and the previous status.
 *
 * Phase rules on top of getPhase, as the kubelet: a phase never leaves Succeeded/Failed once the
 * previous status (or the API server's) had it; reason/message are kept while the phase does
 * not change; activeDeadlineSeconds exceeded overrides everything with Failed/DeadlineExceeded.
 * podIP(s): pod-ips.ts (the current sandbox's, kept once the pod finished; host-network pods
 * report the node's IP). hostIP(s): the Node's InternalIP (--node-ip, else detected).
 */
import type { V1ContainerStatus, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { ProbeResultsReader } from '../prober/probe-results.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { DEADLINE_EXCEEDED_MESSAGE, DEADLINE_EXCEEDED_REASON, pastActiveDeadline } from './active-deadline.js';
import { podSandboxChanged } from './compute-pod-actions.js';
import { generateConditions } from './conditions.js';
import { convertToAPIContainerStatuses } from './container-statuses.js';
import { getPhase, hasAnyActiveRegularContainerStarted, isTerminalPhase } from './pod-phase.js';
import { statusPodIPs } from './pod-ips.js';
import { podQOSClass } from '../../src/shared/resources/pod-qos.js';
import type { ReasonEntry } from './reason-cache.js';
import { boundTerminationMessages } from './termination-message-bounds.js';

export interface APIStatusInput {
  pod: V1Pod;
  runtimeStatus: RuntimePodStatus;
  /** The last status this agent produced for the pod, else the API server's (pod.status). */
  previous: V1PodStatus | undefined;
  /** True once every container has been stopped for good (after terminatePod). */
  podIsTerminal: boolean;
  /** When the agent first saw the pod (status.startTime). */
  startTime: Date;
  now: Date;
  reasonOf: (containerName: string) => ReasonEntry | undefined;
  runtimeName: string;
  hostIP: string;
  probes?: ProbeResultsReader | undefined;
}

export function generateAPIPodStatus(input: APIStatusInput): V1PodStatus {
  const { pod, runtimeStatus } = input;
  const previous = input.previous ?? {};
  const apiStatus = pod.status ?? {};
  const common = { pod, runtimeStatus, reasonOf: input.reasonOf, runtimeName: input.runtimeName, probes: input.probes };
  const initStatuses = convertToAPIContainerStatuses({ ...common, isInit: true, previous: previous.initContainerStatuses ?? [] });
  const appStatuses = convertToAPIContainerStatuses({ ...common, isInit: false, previous: previous.containerStatuses ?? [] });
  const all: V1ContainerStatus[] = [...initStatuses, ...appStatuses];
  boundTerminationMessages(pod, all);

  const s: V1PodStatus = {};
  let phase: string = getPhase(pod, all, input.podIsTerminal, hasAnyActiveRegularContainerStarted(pod, runtimeStatus));
  if (!isTerminalPhase(phase)) {
    if (isTerminalPhase(previous.phase)) phase = previous.phase;
    else if (isTerminalPhase(apiStatus.phase)) phase = apiStatus.phase;
  }
  if (phase === previous.phase) {
    const reason = previous.reason || apiStatus.reason;
    const message = previous.message || apiStatus.message;
    if (reason) s.reason = reason;
    if (message) s.message = message;
  }
  if (pastActiveDeadline(pod, input.startTime, input.now.getTime())) {
    phase = 'Failed';
    s.reason = DEADLINE_EXCEEDED_REASON;
    s.message = DEADLINE_EXCEEDED_MESSAGE;
  }
  // Pods may not leave a terminal phase the API server already shows.
  if (isTerminalPhase(apiStatus.phase) && phase !== apiStatus.phase) phase = apiStatus.phase;
  s.phase = phase;

  s.conditions = generateConditions({
    pod,
    statuses: all,
    phase: phase as 'Pending' | 'Running' | 'Succeeded' | 'Failed',
    sandboxReady: !podSandboxChanged(pod, runtimeStatus).changed,
    previous: previous.conditions ?? apiStatus.conditions ?? [],
    now: input.now,
  });

  if (input.hostIP !== '') {
    s.hostIP = input.hostIP;
    s.hostIPs = [{ ip: input.hostIP }];
  }
  const previousIPs = (previous.podIPs ?? []).map((p) => p.ip).filter((ip): ip is string => typeof ip === 'string' && ip !== '');
  const ips = statusPodIPs(pod, runtimeStatus, previousIPs, input.hostIP);
  if (ips.length > 0) {
    s.podIP = ips[0]!;
    s.podIPs = ips.map((ip) => ({ ip }));
  }
  s.startTime = input.startTime;
  s.qosClass = podQOSClass(pod);
  if (initStatuses.length > 0) s.initContainerStatuses = initStatuses;
  s.containerStatuses = appStatuses;
  // Ephemeral containers (ephemeral-containers.ts): the kubelet's third convertToAPIContainerStatuses.
  if ((pod.spec?.ephemeralContainers ?? []).length > 0) {
    s.ephemeralContainerStatuses = convertToAPIContainerStatuses({ ...common, isInit: false, ephemeral: true, previous: previous.ephemeralContainerStatuses ?? [] });
  }
  return s;
}
