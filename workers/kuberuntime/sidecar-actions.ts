/**
 * The init-container part of computePodActions for a pod with sidecars (restartable init
 * containers, KEP-753): the kubelet's computeInitContainerActions (kuberuntime_container.go,
 * 1.33). Pure: reads the spec, the runtime status and probe results; issues no calls. Pods
 * without a sidecar keep the classic path (findNextInitContainerToRun), which the kubelet's
 * function reduces to for them.
 *
 * Walk, from the last init container to the first (completed init containers may have been
 * removed from the runtime, so the last one seen is the one to trust):
 *  - the pod counts as initialized once a regular container exists in state created or running;
 *    after that only sidecars are looked at (a missing or exited sidecar is started again);
 *  - a regular init container runs to completion before the next one starts; failed, it is
 *    restarted, or under restartPolicy Never the pod is killed;
 *  - a sidecar counts as started once it runs and its startupProbe (if any) succeeded; then the
 *    next init container starts (the postStart hook already finished: startContainer runs it
 *    before the sync that started it ends, so a later sync sees it done). The last init
 *    container started → initialized;
 *  - a sidecar restarts whatever the pod's restartPolicy: when exited, created-but-not-running,
 *    in unknown state (killed first), failing its startup or liveness probe, or with a changed
 *    spec (killed first).
 * The indexes to start come out in spec order.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { ProbeResultsReader } from '../prober/probe-results.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { hashContainer } from './container-hash.js';
import type { ContainerToKill } from './compute-pod-actions.js';
import {
  appContainers,
  findContainerStatusByName,
  initContainers,
  isRestartableInitContainer,
  shouldRestartOnFailure,
} from './pod-spec.js';

export interface InitContainerActions {
  /** Every init container is done (regular ones succeeded, sidecars started): regular containers may run. */
  initialized: boolean;
  /** A regular init container failed under restartPolicy Never: kill the pod, start nothing. */
  killPod: boolean;
  /** Indexes into spec.initContainers to start, in spec order. */
  toStart: number[];
}

/**
 * The kubelet's computeInitContainerActions. Containers to kill first (probe failures, spec
 * changes, unknown state) are added to `containersToKill` (by CRI container id).
 */
export function computeInitContainerActions(
  pod: V1Pod,
  status: RuntimePodStatus,
  probes: ProbeResultsReader | undefined,
  containersToKill: Map<string, ContainerToKill>,
): InitContainerActions {
  const inits = initContainers(pod);
  if (inits.length === 0) return { initialized: true, killPod: false, toStart: [] };

  // A regular container created or running: initialization happened before (exited ones do
  // not count: after a node reboot every container is exited and a new sandbox starts over).
  let podHasInitialized = appContainers(pod).some((c) => {
    const cs = findContainerStatusByName(status, c.name);
    return cs !== undefined && (cs.state === 'CONTAINER_CREATED' || cs.state === 'CONTAINER_RUNNING');
  });
  // Whether the init containers before the current one (in spec order) are done.
  let isPreviouslyInitialized = podHasInitialized;
  const restartOnFailure = shouldRestartOnFailure(pod);
  const toStart: number[] = [];
  const last = inits.length - 1;

  for (let i = last; i >= 0; i--) {
    const c = inits[i]!;
    const restartable = isRestartableInitContainer(c);
    const cs = findContainerStatusByName(status, c.name);
    if (!cs) {
      // Previously initialized but its instance is gone: only a sidecar is started again.
      if (isPreviouslyInitialized && restartable) toStart.push(i);
      continue;
    }
    // After initialization only sidecars need to be kept running.
    if (isPreviouslyInitialized && !restartable) continue;

    switch (cs.state) {
      case 'CONTAINER_CREATED':
        // Created and started in one step by the sync loop: stuck in created, start it again.
        toStart.push(i);
        break;
      case 'CONTAINER_RUNNING': {
        if (!restartable) break; // a regular init container: wait for it to finish
        if (c.startupProbe) {
          const startup = probes?.get(cs.id, 'startup') ?? 'unknown';
          if (startup !== 'success') {
            if (startup === 'failure') {
              containersToKill.set(cs.id, { name: c.name, container: c, reason: 'StartupProbe', message: `Init container ${c.name} failed startup probe` });
              toStart.push(i);
            }
            break; // not started yet: wait for the probe
          }
        }
        if (i === last) podHasInitialized = true;
        else if (!isPreviouslyInitialized) toStart.push(i + 1); // started for the first time: the next one
        if (cs.hash !== hashContainer(c)) {
          containersToKill.set(cs.id, { name: c.name, container: c, reason: 'SpecChanged', message: `Init container ${c.name} definition changed` });
          toStart.push(i);
          break;
        }
        // A sidecar's liveness does not gate the next init container, but a failure restarts it.
        if (c.livenessProbe && probes?.get(cs.id, 'liveness') === 'failure') {
          containersToKill.set(cs.id, { name: c.name, container: c, reason: 'LivenessProbe', message: `Init container ${c.name} failed liveness probe` });
          toStart.push(i);
        }
        break;
      }
      case 'CONTAINER_EXITED':
        if (restartable) {
          toStart.push(i);
        } else if (cs.exitCode !== 0) {
          if (!restartOnFailure) return { initialized: false, killPod: true, toStart: [] };
          toStart.push(i);
        } else if (i === last) {
          podHasInitialized = true;
        } else {
          toStart.push(i + 1);
        }
        break;
      case 'CONTAINER_UNKNOWN':
        if (!restartable && !restartOnFailure) return { initialized: false, killPod: true, toStart: [] };
        // It may still run: stop it before another instance starts.
        containersToKill.set(cs.id, { name: c.name, container: c, reason: 'Unknown', message: 'Init container is in "unknown" state, try killing it before restart' });
        toStart.push(i);
        break;
      default: {
        const never: never = cs.state;
        throw new Error(`unknown container state ${String(never)}`);
      }
    }
    isPreviouslyInitialized = true;
  }

  // No init container has run yet: start the first.
  if (!isPreviouslyInitialized) toStart.push(0);
  toStart.reverse();
  return { initialized: podHasInitialized, killPod: false, toStart };
}
