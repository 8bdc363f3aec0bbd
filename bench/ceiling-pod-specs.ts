/**
 * The pods the raw-CRI ceiling creates: one sandbox + one busybox `sleep 100000` container,
 * shaped like the kubelet's requests (labels io.kubernetes.*, a log directory, pod or host
 * network) so the runtime does the same work as for an agent-created pod.
 */
import type { ContainerConfig, PodSandboxConfig } from '../src/shared/cri/cri-types.js';

export const CEILING_NAMESPACE = 'shardlet-ceiling';

export interface CeilingPodSpec {
  readonly sandbox: PodSandboxConfig;
  /** The first container (`sleep`). */
  readonly container: ContainerConfig;
  /** Further containers (`side-1`…), when the input asks for more than one per pod. */
  readonly sidecars: readonly ContainerConfig[];
}

export interface CeilingPodSpecInput {
  /** Unique across this run and any leftovers: the runtime reserves sandbox names. */
  readonly name: string;
  readonly image: string;
  readonly hostNetwork: boolean;
  readonly logDirectory: string;
  /** Containers per pod (default 1): the first is `sleep`, the others `side-1`, `side-2`, …. */
  readonly containers?: number;
}

export function ceilingPodSpec(input: CeilingPodSpecInput): CeilingPodSpec {
  const uid = `ceiling-uid-${input.name}`;
  const sandbox: PodSandboxConfig = {
    metadata: { name: input.name, uid, namespace: CEILING_NAMESPACE, attempt: 0 },
    hostname: input.hostNetwork ? '' : input.name,
    logDirectory: `${input.logDirectory}/${CEILING_NAMESPACE}_${input.name}_${uid}`,
    labels: {
      'io.kubernetes.pod.name': input.name,
      'io.kubernetes.pod.namespace': CEILING_NAMESPACE,
      'io.kubernetes.pod.uid': uid,
      'shardlet.io/ceiling': 'true',
    },
    annotations: {},
    linux: {
      cgroupParent: '',
      securityContext: { namespaceOptions: { network: input.hostNetwork ? 'NODE' : 'POD', pid: 'CONTAINER', ipc: 'POD' } },
    },
  };
  const containerNamed = (name: string): ContainerConfig => ({
    metadata: { name, attempt: 0 },
    image: { image: input.image },
    command: ['sleep', '100000'],
    args: [],
    labels: {
      'io.kubernetes.container.name': name,
      'io.kubernetes.pod.name': input.name,
      'io.kubernetes.pod.namespace': CEILING_NAMESPACE,
      'io.kubernetes.pod.uid': uid,
    },
    annotations: {},
    logPath: `${name}/0.log`,
  });
  const sidecars = Array.from({ length: Math.max(0, (input.containers ?? 1) - 1) }, (_, i) => containerNamed(`side-${i + 1}`));
  return { sandbox, container: containerNamed('sleep'), sidecars };
}
