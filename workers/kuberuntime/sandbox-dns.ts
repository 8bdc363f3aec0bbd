/**
 * The naming part of a pod's sandbox config (the kubelet's generatePodSandboxConfig: GetPodDNS,
 * then GeneratePodHostNameAndDomain and GetNodenameForKernel for pods off the host network):
 * the DNS config the runtime writes into the sandbox's resolv.conf and the sandbox's hostname
 * (the FQDN with setHostnameAsFQDN). A failure is the kubelet's "Failed to generate sandbox
 * config" and no sandbox is created; DNSConfigForming / MissingClusterDNS come back as events
 * for the caller to record when it creates the sandbox.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { DnsConfig } from '../../src/shared/cri/cri-types.js';
import type { NodeDnsSettings } from '../../src/shared/protocol/node-dns-settings.js';
import { getPodDNS, type DnsEvent } from './pod-dns.js';
import { nodenameForKernel, podHostnameAndDomain } from './pod-hostname.js';
import { formatPod, isHostNetwork } from './pod-spec.js';

export type SandboxNaming =
  | { ok: true; dnsConfig: DnsConfig; hostname: string | undefined; events: DnsEvent[] }
  | { ok: false; message: string };

export function sandboxNaming(pod: V1Pod, dns: NodeDnsSettings): SandboxNaming {
  const fail = (err: string): SandboxNaming => ({ ok: false, message: `Failed to generate sandbox config for pod ${JSON.stringify(formatPod(pod))}: ${err}` });
  const d = getPodDNS(pod, dns);
  if (!d.ok) return fail(d.message);
  let hostname: string | undefined;
  if (!isHostNetwork(pod)) {
    const names = podHostnameAndDomain(pod, dns.clusterDomain);
    if (!names.ok) return fail(names.message);
    const kernel = nodenameForKernel(names.hostname, names.domain, pod.spec?.setHostnameAsFQDN);
    if (!kernel.ok) return fail(kernel.message);
    hostname = kernel.name;
  }
  return { ok: true, dnsConfig: d.config, hostname, events: d.events };
}
