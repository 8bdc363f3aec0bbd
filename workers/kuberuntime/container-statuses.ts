/**
 * API container statuses from the runtime status (the kubelet's convertToAPIContainerStatuses and
 * the prober manager's UpdatePodStatus), for init or app containers.
 *
 *  - Every spec container gets a status; default waiting reason ContainerCreating, or
 *    PodInitializing for every container (init and app) of a pod with init containers (the
 *    kubelet passes hasInitContainers to both calls, so kubectl shows Init:1/2, not
 *    Init:ContainerCreating, while the next init container is being created).
 *  - The newest runtime instance gives `state`, the one before it `lastState`.
 *  - A container that should be (re)started and has a recorded start failure shows it:
 *    waiting with the failure's reason (CrashLoopBackOff, ErrImagePull, ...) and message; a
 *    terminated state moves to lastState.
 *  - containerID is `<runtimeName>://<id>`; restartCount comes from the instance's annotation.
 *  - started: running and (no startup probe, or it succeeded); ready: started and (no readiness
 *    probe, or it succeeded). Init containers are ready once they exited 0; sidecars
 *    (restartable init containers) are started and ready as app containers are (the prober
 *    manager's UpdatePodStatus).
 * App statuses are sorted by name (kubetypes.SortedContainerStatuses), init and ephemeral ones in
 * spec order.
 */
import type { V1Container, V1ContainerState, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { ProbeResultsReader } from '../prober/probe-results.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { shouldContainerBeRestarted } from './compute-pod-actions.js';
import type { ReasonEntry } from './reason-cache.js';
import { asContainer, ephemeralContainerSpecs } from './ephemeral-containers.js';
import { findContainerStatusByName, initContainers, isRestartableInitContainer, nsToDate } from './pod-spec.js';

export interface ContainerStatusesInput {
  pod: V1Pod;
  runtimeStatus: RuntimePodStatus;
  isInit: boolean;
  /**
   * Ephemeral containers instead (with isInit false): in spec order, never ready, and a start
   * failure is shown only while no instance exists (they are never restarted).
   */
  ephemeral?: boolean;
  /** Previous API statuses of the same kind (init, app or ephemeral). */
  previous: readonly V1ContainerStatus[];
  reasonOf: (containerName: string) => ReasonEntry | undefined;
  runtimeName: string;
  probes?: ProbeResultsReader | undefined;
}

export function terminatedReason(cs: RuntimeContainerStatus): string {
  if (cs.reason !== '') return cs.reason;
  return cs.exitCode === 0 ? 'Completed' : 'Error';
}

function convertState(cs: RuntimeContainerStatus, containerID: string, old: V1ContainerStatus | undefined): V1ContainerState {
  switch (cs.state) {
    case 'CONTAINER_RUNNING':
      return { running: withDate({}, 'startedAt', nsToDate(cs.startedAtNs)) };
    case 'CONTAINER_CREATED':
      return { waiting: {} };
    case 'CONTAINER_EXITED': {
      const t = { exitCode: cs.exitCode, reason: terminatedReason(cs), containerID };
      if (cs.message !== '') Object.assign(t, { message: cs.message });
      return { terminated: withDate(withDate(t, 'startedAt', nsToDate(cs.startedAtNs)), 'finishedAt', nsToDate(cs.finishedAtNs)) };
    }
    case 'CONTAINER_UNKNOWN':
      if (old?.state?.running) {
        return { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated' } };
      }
      return { waiting: {} };
    default: {
      const never: never = cs.state;
      throw new Error(`unknown container state ${String(never)}`);
    }
  }
}

function withDate<T extends object>(o: T, key: string, d: Date | undefined): T {
  if (d !== undefined) Object.assign(o, { [key]: d });
  return o;
}

export function convertToAPIContainerStatuses(input: ContainerStatusesInput): V1ContainerStatus[] {
  const { pod, runtimeStatus, isInit } = input;
  const ephemeral = input.ephemeral === true;
  const specs: readonly V1Container[] = ephemeral ? ephemeralContainerSpecs(pod).map(asContainer) : isInit ? initContainers(pod) : (pod.spec?.containers ?? []);
  const oldByName = new Map(input.previous.map((s) => [s.name, s]));
  const defaultReason = initContainers(pod).length > 0 ? 'PodInitializing' : 'ContainerCreating';

  const statuses = new Map<string, V1ContainerStatus>();
  for (const c of specs) {
    const old = oldByName.get(c.name);
    let s: V1ContainerStatus = { name: c.name, image: c.image ?? '', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: defaultReason } } };
    if (old?.state?.terminated) s = structuredClone(old);
    else if (old) {
      s.restartCount = old.restartCount;
      if (old.lastState) s.lastState = old.lastState;
    }
    statuses.set(c.name, s);
  }

  // Newest instance → state, the one before → lastState (runtime lists newest first).
  const seen = new Map<string, number>();
  for (const cs of runtimeStatus.containers) {
    const s = statuses.get(cs.name);
    const n = seen.get(cs.name) ?? 0;
    if (!s || n >= 2) continue;
    const containerID = `${input.runtimeName}://${cs.id}`;
    const state = convertState(cs, containerID, oldByName.get(cs.name));
    if (n === 0) {
      const next: V1ContainerStatus = {
        name: cs.name, image: cs.image || s.image, imageID: cs.imageRef, containerID,
        ready: false, restartCount: cs.restartCount, state,
      };
      statuses.set(cs.name, next);
    } else {
      s.lastState = state;
    }
    seen.set(cs.name, n + 1);
  }

  // Containers that should run but do not: show the last start failure, if any.
  for (const c of specs) {
    const latest = findContainerStatusByName(runtimeStatus, c.name);
    if (isInit && latest?.state === 'CONTAINER_EXITED' && latest.exitCode === 0) continue;
    if (ephemeral ? latest !== undefined : !shouldContainerBeRestarted(c, pod, runtimeStatus)) continue;
    const r = input.reasonOf(c.name);
    const s = statuses.get(c.name);
    if (!r || !s) continue;
    if (s.state?.terminated) s.lastState = s.state;
    s.state = { waiting: { reason: r.reason, message: r.message } };
  }

  for (const c of specs) {
    const s = statuses.get(c.name)!;
    const id = findContainerStatusByName(runtimeStatus, c.name)?.id;
    if (ephemeral) {
      // The kubelet's prober manager leaves ephemeral statuses alone: never ready.
      s.ready = false;
      continue;
    }
    if (isInit && !isRestartableInitContainer(c)) {
      s.started = s.state?.running !== undefined;
      s.ready = s.state?.terminated?.exitCode === 0;
      continue;
    }
    if (s.state?.running === undefined || id === undefined) {
      s.started = false;
      s.ready = false;
      continue;
    }
    s.started = !c.startupProbe || input.probes?.get(id, 'startup') === 'success';
    s.ready = s.started && (!c.readinessProbe || input.probes?.get(id, 'readiness') === 'success');
  }

  const out = specs.map((c) => statuses.get(c.name)!);
  if (!isInit && !ephemeral) out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out;
}
