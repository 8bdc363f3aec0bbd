/**
 * Listed CRI objects for the GC tests, shaped as a runtime lists them (kubelet labels and the
 * restart-count annotation the agent writes), with creation times in ms on a fake clock.
 */
import type { Container, ContainerState, PodSandbox, PodSandboxState } from '../../../src/shared/cri/cri-types.js';

export const T0 = 1_700_000_000_000;

export function ctr(id: string, podUID: string, name: string, createdMs: number, state: ContainerState = 'CONTAINER_EXITED', opts: { sandbox?: string; restart?: number; imageRef?: string } = {}): Container {
  return {
    id,
    podSandboxId: opts.sandbox ?? `sb-${podUID}`,
    metadata: { name, attempt: opts.restart ?? 0 },
    image: { image: 'busybox', annotations: {} },
    imageRef: opts.imageRef ?? 'sha256:busybox',
    state,
    createdAt: String(BigInt(createdMs) * 1_000_000n),
    labels: { 'io.kubernetes.pod.uid': podUID, 'io.kubernetes.pod.name': `pod-${podUID}`, 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.container.name': name },
    annotations: { 'io.kubernetes.container.restartCount': String(opts.restart ?? 0) },
    imageId: '',
  } as Container;
}

export function sandbox(id: string, podUID: string, createdMs: number, state: PodSandboxState = 'SANDBOX_NOTREADY'): PodSandbox {
  return {
    id,
    metadata: { name: `pod-${podUID}`, namespace: 'default', uid: podUID, attempt: 0 },
    state,
    createdAt: String(BigInt(createdMs) * 1_000_000n),
    labels: { 'io.kubernetes.pod.uid': podUID },
    annotations: {},
    runtimeHandler: '',
  } as PodSandbox;
}
