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
 * DNS config and the hostname (setHostnameAsFQDN included) come from sandbox-dns.ts when the
 * caller passes them (`naming`); without it the hostname is the pod's and the runtime applies its
 * DNS defaults (unit tests only: the pod workers always pass it).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { DnsConfig, NamespaceOption, PodSandboxConfig, PortMapping } from '../../src/shared/cri/cri-types.js';
import { podLogsDirectoryOf } from '../../src/shared/kubetypes/pod-log-paths.js';
import { newPodAnnotations, newPodLabels } from './labels.js';
import { truncateHostname } from './pod-hostname.js';
import { appContainers, isHostNetwork, podName, podNamespace, podUID } from './pod-spec.js';
import { sandboxSecurity } from './security-context.js';

/**
 * `<podLogsDir>/<namespace>_<name>_<uid>` (the kubelet's BuildPodLogsDirectory). Joined as text,
 * not normalized: a component that climbs (`../`) stays visible to resolveWithinRoot, which every
 * mkdir and rm of this path goes through (pod-log-dirs.ts).
 */
export function podLogsDirectory(podLogsDir: string, pod: V1Pod): string {
  return podLogsDirectoryOf(podLogsDir, podNamespace(pod), podName(pod), podUID(pod));
}

export function namespaceOptionsForPod(pod: V1Pod): Required<Omit<NamespaceOption, 'targetId'>> {
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
  return truncateHostname(pod.spec?.hostname || podName(pod));
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
  /** DNS config and hostname (sandbox-dns.ts sandboxNaming). */
  naming?: { dnsConfig: DnsConfig; hostname: string | undefined } | undefined;
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
  const hostname = opts.naming ? opts.naming.hostname : podHostname(pod);
  if (hostname !== undefined) config.hostname = hostname;
  if (opts.naming) config.dnsConfig = opts.naming.dnsConfig;
  const ports = portMappingsForPod(pod);
  if (ports.length > 0) config.portMappings = ports;
  return config;
}
