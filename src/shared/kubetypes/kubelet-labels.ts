/**
 * Labels and annotations the kubelet puts on CRI objects (pkg/kubelet/types/labels.go and
 * pkg/kubelet/kuberuntime/labels.go). shardlet writes the same keys so crictl and other kubelet
 * tooling show its pods by name, and so a restarted agent can adopt what it finds in the runtime.
 */
export const KubernetesPodNameLabel = 'io.kubernetes.pod.name';
export const KubernetesPodNamespaceLabel = 'io.kubernetes.pod.namespace';
export const KubernetesPodUIDLabel = 'io.kubernetes.pod.uid';
export const KubernetesContainerNameLabel = 'io.kubernetes.container.name';
/** Not set by the kubelet on sandboxes; containers carry the pod labels above plus the container name. */

export const ContainerHashLabel = 'io.kubernetes.container.hash';
export const ContainerRestartCountLabel = 'io.kubernetes.container.restartCount';
export const ContainerTerminationMessagePathLabel = 'io.kubernetes.container.terminationMessagePath';
export const ContainerTerminationMessagePolicyLabel = 'io.kubernetes.container.terminationMessagePolicy';
export const ContainerPreStopHandlerLabel = 'io.kubernetes.container.preStopHandler';
export const ContainerPortsLabel = 'io.kubernetes.container.ports';
export const PodDeletionGracePeriodLabel = 'io.kubernetes.pod.deletionGracePeriod';
export const PodTerminationGracePeriodLabel = 'io.kubernetes.pod.terminationGracePeriod';

/** The kubelet marks sandboxes with this label; value "podsandbox". Containers get "container". */
export const KubernetesContainerTypeLabel = 'io.kubernetes.container.type';

/** Pod annotations written by the config sources (pkg/kubelet/types/pod_update.go). */
export const ConfigSourceAnnotationKey = 'kubernetes.io/config.source';
export const ConfigMirrorAnnotationKey = 'kubernetes.io/config.mirror';
export const ConfigFirstSeenAnnotationKey = 'kubernetes.io/config.seen';
export const ConfigHashAnnotationKey = 'kubernetes.io/config.hash';
