/**
 * The pods the raw-CRI ceiling creates: one sandbox + one busybox `sleep 100000` container,
 * shaped like the kubelet's requests (labels io.kubernetes.*, a log directory, pod or host
 * network) so the runtime does the same work as for an agent-created pod.
 */
import type { ContainerConfig, PodSandboxConfig } from '../src/shared/cri/cri-types.js';

export const CEILING_NAMESPACE = 'shardlet-ceiling';

export interface CeilingPodSpec {
  readonly sandbox: PodSandboxConfig;
  readonly container: ContainerConfig;
}

export interface CeilingPodSpecInput {
  /** Unique across this run and any leftovers: the runtime reserves sandbox names. */
  readonly name: string;
  readonly image: string;
  readonly hostNetwork: boolean;
  readonly logDirectory: string;
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
  const container: ContainerConfig = {
    metadata: { name: 'sleep', attempt: 0 },
    image: { image: input.image },
    command: ['sleep', '100000'],
    args: [],
    labels: {
      'io.kubernetes.container.name': 'sleep',
      'io.kubernetes.pod.name': input.name,
      'io.kubernetes.pod.namespace': CEILING_NAMESPACE,
      'io.kubernetes.pod.uid': uid,
    },
    annotations: {},
    logPath: 'sleep/0.log',
  };
  return { sandbox, container };
}
