/**
 * The per-container state transition table of the kubelet's generic PLEG (generic.go
 * generateEvents): which pod lifecycle events (src/shared/pleg/pod-lifecycle-event.ts, the one
 * definition) an old → new state yields. Sandboxes are
 * tracked like containers (READY = running, NOTREADY = exited), as the kubelet does.
 */
import type { ContainerState, PodSandboxState } from '../../src/shared/cri/cri-types.js';
import type { PodLifecycleEvent } from '../../src/shared/pleg/pod-lifecycle-event.js';

/** Re-exported (not redefined) for generic-pleg.ts, which imports it from here. */
export type { PodLifecycleEvent, PodLifecycleEventType } from '../../src/shared/pleg/pod-lifecycle-event.js';

/** plegContainerState: kubecontainer.State plus "non-existent". */
export type PlegContainerState = 'running' | 'exited' | 'unknown' | 'non-existent';

export function containerPlegState(state: ContainerState): PlegContainerState {
  switch (state) {
    case 'CONTAINER_RUNNING':
      return 'running';
    case 'CONTAINER_EXITED':
      return 'exited';
    // The kubelet does not use "created" yet, hence unknown.
    case 'CONTAINER_CREATED':
    case 'CONTAINER_UNKNOWN':
      return 'unknown';
    default: {
      const never: never = state;
      throw new TypeError(`unrecognized container state ${String(never)}`);
    }
  }
}

export function sandboxPlegState(state: PodSandboxState): PlegContainerState {
  switch (state) {
    case 'SANDBOX_READY':
      return 'running';
    case 'SANDBOX_NOTREADY':
      return 'exited';
    default: {
      const never: never = state;
      throw new TypeError(`unrecognized sandbox state ${String(never)}`);
    }
  }
}

/** generic.go generateEvents: the events for one container's old → new state. */
export function generateEvents(podId: string, cid: string, oldState: PlegContainerState, newState: PlegContainerState): PodLifecycleEvent[] {
  if (newState === oldState) return [];
  switch (newState) {
    case 'running':
      return [{ id: podId, type: 'ContainerStarted', data: cid }];
    case 'exited':
      return [{ id: podId, type: 'ContainerDied', data: cid }];
    case 'unknown':
      return [{ id: podId, type: 'ContainerChanged', data: cid }];
    case 'non-existent':
      // Died was already reported if it was seen exited.
      return oldState === 'exited'
        ? [{ id: podId, type: 'ContainerRemoved', data: cid }]
        : [{ id: podId, type: 'ContainerDied', data: cid }, { id: podId, type: 'ContainerRemoved', data: cid }];
    default: {
      const never: never = newState;
      throw new TypeError(`unrecognized pleg state ${String(never)}`);
    }
  }
}
