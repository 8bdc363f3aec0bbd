/**
 * The kubelet-managed /etc/hosts of a pod (kubelet_pods.go: managedHostsFileContent,
 * nodeHostsFileContent, ensureHostsFile, makeHostsMount, shouldMountHostsFile).
 *
 * Off the host network the file is generated: the localhost lines, one line per pod IP with
 * `<hostname>.<domain> <hostname>` (or the hostname alone without a subdomain), then the
 * hostAliases. On the host network it is the node's /etc/hosts (read once at startup on the
 * main thread) plus the hostAliases. It lives at `<rootDir>/pods/<uid>/etc-hosts`, is rewritten
 * in place before each container starts (containers already running keep seeing the same
 * inode: the file is bind-mounted) and mounted read-write at /etc/hosts, as the kubelet does.
 *
 * When: only once the pod has IPs (the sandbox's IP is known after RunPodSandbox; a host-network
 * pod has the node's), and not into a container that mounts a volume at /etc/hosts itself.
 */
import fs from 'node:fs/promises';
import { constants as C } from 'node:fs';
import path from 'node:path';
import type { V1Container, V1HostAlias, V1Pod } from '@kubernetes/client-node';
import type { Mount } from '../../src/shared/cri/cri-types.js';

export const ETC_HOSTS_PATH = '/etc/hosts';
export const MANAGED_HOSTS_HEADER = '# Kubernetes-managed hosts file.\n';
export const MANAGED_HOSTS_HEADER_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';
const HOSTS_FILE_MODE = 0o644;

function hostAliasLines(aliases: readonly V1HostAlias[] | undefined): string {
  if (!aliases || aliases.length === 0) return '';
  let out = '\n# Entries added by HostAliases.\n';
  for (const a of aliases) out += `${a.ip ?? ''}\t${(a.hostnames ?? []).join('\t')}\n`;
  return out;
}

export function managedHostsFileContent(podIPs: readonly string[], hostname: string, domain: string, aliases: readonly V1HostAlias[] | undefined): string {
  let out = MANAGED_HOSTS_HEADER;
  out += '127.0.0.1\tlocalhost\n';
  out += '::1\tlocalhost ip6-localhost ip6-loopback\n';
  out += 'fe00::0\tip6-localnet\n';
  out += 'fe00::0\tip6-mcastprefix\n';
  out += 'fe00::1\tip6-allnodes\n';
  out += 'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs) out += domain !== '' ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return out + hostAliasLines(aliases);
}

export function nodeHostsFileContent(nodeHosts: string, aliases: readonly V1HostAlias[] | undefined): string {
  return MANAGED_HOSTS_HEADER_HOST_NETWORK + nodeHosts + hostAliasLines(aliases);
}

/** shouldMountHostsFile plus makeMounts' rule: not over a volume the container mounts at /etc/hosts. */
export function shouldMountHostsFile(podIPs: readonly string[], container: V1Container): boolean {
  if (podIPs.length === 0) return false;
  return !(container.volumeMounts ?? []).some((m) => m.mountPath === ETC_HOSTS_PATH);
}

/** getEtcHostsPath: `<podDir>/etc-hosts`. */
export function etcHostsPathOf(podDir: string): string {
  return path.join(podDir, 'etc-hosts');
}

/**
 * ensureHostsFile: writes `content` to `file` in place (created 0644 if missing). A symlink in its
 * place is refused (O_NOFOLLOW): the path is under the agent's own pod directory, which no
 * container mounts, so one there was not made by the agent.
 */
export async function writeHostsFile(file: string, content: string): Promise<void> {
  const fh = await fs.open(file, C.O_WRONLY | C.O_CREAT | C.O_TRUNC | C.O_NOFOLLOW, HOSTS_FILE_MODE);
  try {
    await fh.writeFile(content);
    await fh.chmod(HOSTS_FILE_MODE);
  } finally {
    await fh.close();
  }
}

/** makeHostsMount's CRI mount (read-write, as the kubelet mounts it). */
export function hostsMount(file: string): Mount {
  return { containerPath: ETC_HOSTS_PATH, hostPath: file, readonly: false, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE' };
}

/** The hosts file's content for the pod (host network: the node's file, else generated). */
export function hostsFileContentFor(pod: V1Pod, podIPs: readonly string[], hostname: string, domain: string, nodeHosts: string): string {
  const aliases = pod.spec?.hostAliases;
  return pod.spec?.hostNetwork === true ? nodeHostsFileContent(nodeHosts, aliases) : managedHostsFileContent(podIPs, hostname, domain, aliases);
}
