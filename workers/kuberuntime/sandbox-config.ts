/**
 * PodSandboxConfig for RunPodSandbox (the kubelet's generatePodSandboxConfig and
 * generatePodSandboxLinuxConfig, kuberuntime_sandbox.go / kuberuntime_sandbox_linux.go).
 *
 * Namespaces follow the kubelet: network NODE for hostNetwork else POD; pid NODE for hostPID,
 * POD for shareProcessNamespace, else CONTAINER; ipc NODE for hostIPC else POD (the kubelet
 * shares IPC across the pod's containers, so shardlet does too).
 *
 * Security context and sysctls: security-context.ts (sandboxSecurity).
 *
 * cgroupParent: the pod cgroup (`<qos parent>/pod<uid>` in the driver's spelling) when
 * --cgroups-per-qos is on (workers/cgroups/pod-cgroups.ts); absent otherwise.
 *
 * Not generated (yet): DNS config (resolv.conf from the node and dnsPolicy). containerd applies
 * its defaults for it.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { NamespaceOption, PodSandboxConfig, PortMapping } from '../../src/shared/cri/cri-types.js';
import { podLogsDirectoryOf } from '../../src/shared/kubetypes/pod-log-paths.js';
import { newPodAnnotations, newPodLabels } from './labels.js';
import { appContainers, isHostNetwork, podName, podNamespace, podUID } from './pod-spec.js';
import { sandboxSecurity } from './security-context.js';

/** Max hostname length (the kernel's HOST_NAME_MAX, the kubelet truncates to it). */
const HOSTNAME_MAX = 63;

/**
 * `<podLogsDir>/<namespace>_<name>_<uid>` (the kubelet's BuildPodLogsDirectory). Joined as text,
 * not normalized: a component that climbs (`../`) stays visible to resolveWithinRoot, which every
 * mkdir and rm of this path goes through (pod-log-dirs.ts).
 */
export function podLogsDirectory(podLogsDir: string, pod: V1Pod): string {
  return podLogsDirectoryOf(podLogsDir, podNamespace(pod), podName(pod), podUID(pod));
}

export function namespaceOptionsForPod(pod: V1Pod): Required<NamespaceOption> {
  const spec = pod.spec;
  return {
    network: isHostNetwork(pod) ? 'NODE' : 'POD',
    pid: spec?.hostPID === true ? 'NODE' : spec?.shareProcessNamespace === true ? 'POD' : 'CONTAINER',
    ipc: spec?.hostIPC === true ? 'NODE' : 'POD',
  };
}

/**
 * The pod's hostname (GeneratePodHostNameAndDomain): spec.hostname or the pod name, truncated to
 * 63 characters without a trailing '-' or '.'. Host-network pods get none (the node's).
 */
export function podHostname(pod: V1Pod): string | undefined {
  if (isHostNetwork(pod)) return undefined;
  let h = pod.spec?.hostname || podName(pod);
  if (h.length > HOSTNAME_MAX) h = h.slice(0, HOSTNAME_MAX).replace(/[-.]+$/, '');
  return h;
}

export function portMappingsForPod(pod: V1Pod): PortMapping[] {
  const out: PortMapping[] = [];
  for (const c of appContainers(pod)) {
    for (const p of c.ports ?? []) {
      const protocol = p.protocol === 'UDP' || p.protocol === 'SCTP' ? p.protocol : 'TCP';
      const m: PortMapping = { protocol, containerPort: p.containerPort };
      if (p.hostPort !== undefined) m.hostPort = p.hostPort;
      if (p.hostIP !== undefined && p.hostIP !== '') m.hostIp = p.hostIP;
      out.push(m);
    }
  }
  return out;
}

export interface SandboxConfigOptions {
  podLogsDir: string;
  /** --cgroups-per-qos: names the pod cgroup (linux.cgroupParent). */
  podCgroups?: { parentOf(pod: V1Pod): string | undefined } | undefined;
}

/** `attempt` is the previous sandbox's attempt + 1 (0 for the first sandbox of the pod). */
export function generatePodSandboxConfig(pod: V1Pod, attempt: number, opts: SandboxConfigOptions): PodSandboxConfig {
  const security = sandboxSecurity(pod, namespaceOptionsForPod(pod));
  const config: PodSandboxConfig = {
    metadata: { name: podName(pod), namespace: podNamespace(pod), uid: podUID(pod), attempt },
    logDirectory: podLogsDirectory(opts.podLogsDir, pod),
    labels: newPodLabels(pod),
    annotations: newPodAnnotations(pod),
    linux: { securityContext: security.securityContext, sysctls: security.sysctls },
  };
  const cgroupParent = opts.podCgroups?.parentOf(pod);
  if (cgroupParent !== undefined) config.linux!.cgroupParent = cgroupParent;
  const hostname = podHostname(pod);
  if (hostname !== undefined) config.hostname = hostname;
  const ports = portMappingsForPod(pod);
  if (ports.length > 0) config.portMappings = ports;
  return config;
}
