/**
 * A pod's DNS config for its sandbox (the kubelet's Configurer.GetPodDNS,
 * pkg/kubelet/network/dns/dns.go), from the node's settings (read once on the main thread:
 * src/shared/protocol/node-dns-settings.ts). Pure: no I/O; events come back as data and the
 * caller records them (sync-pod.ts, when it creates the sandbox).
 *
 * Policy → base:
 *   None                       empty, then spec.dnsConfig
 *   ClusterFirst (off host net), ClusterFirstWithHostNet
 *                              cluster DNS servers, `<ns>.svc.<domain> svc.<domain> <domain>`
 *                              before the host's searches, options ndots:5. Without --cluster-dns:
 *                              MissingClusterDNS event and the Default policy.
 *   Default (and ClusterFirst on host network)
 *                              the host's resolv.conf; with --resolv-conf "" localhost servers
 *                              (127.0.0.1 / ::1 per node IP family) and search ".".
 * spec.dnsConfig is appended (duplicates dropped; options merged by name, the pod's value wins),
 * then the kubelet's limits apply: 3 nameservers; 32 search domains, each ≤ 253 characters,
 * 2048 characters in all (ExpandedDNSConfig, GA). Trimming records a DNSConfigForming warning.
 *
 * One divergence: merged options keep their order (the host's first, then the pod's new ones)
 * where the kubelet's map iteration gives a random order.
 */
import net from 'node:net';
import type { V1Pod } from '@kubernetes/client-node';
import type { DnsConfig } from '../../src/shared/cri/cri-types.js';
import type { NodeDnsSettings } from '../../src/shared/protocol/node-dns-settings.js';
import { MAX_DNS_NAMESERVERS, MAX_DNS_SEARCH_LIST_CHARS, MAX_DNS_SEARCH_PATH_CHARS, MAX_DNS_SEARCH_PATHS } from '../../src/shared/dns/dns-limits.js';
import { formatPod, isHostNetwork, podNamespace } from './pod-spec.js';

const DEFAULT_DNS_OPTIONS: readonly string[] = ['ndots:5'];

export interface DnsEvent {
  reason: 'DNSConfigForming' | 'MissingClusterDNS';
  message: string;
}

export type PodDnsResult = { ok: true; config: DnsConfig; events: DnsEvent[] } | { ok: false; message: string };

type PodDnsType = 'cluster' | 'host' | 'none';

function podDnsType(pod: V1Pod): PodDnsType {
  switch (pod.spec?.dnsPolicy) {
    case 'None':
      return 'none';
    case 'ClusterFirstWithHostNet':
      return 'cluster';
    case 'Default':
      return 'host';
    case 'ClusterFirst':
    default:
      // Admission refuses other values; the kubelet falls back to ClusterFirst for them too.
      return isHostNetwork(pod) ? 'host' : 'cluster';
  }
}

function omitDuplicates(list: readonly string[]): string[] {
  return [...new Set(list)];
}

/** The pod's options over the existing ones, by name (`name` or `name:value`). */
export function mergeDnsOptions(existing: readonly string[], pod: readonly { name?: string; value?: string }[]): string[] {
  const byName = new Map<string, string>();
  for (const op of existing) {
    const i = op.indexOf(':');
    if (i === -1) byName.set(op, '');
    else byName.set(op.slice(0, i), op.slice(i + 1));
  }
  for (const op of pod) byName.set(op.name ?? '', op.value ?? '');
  return [...byName].map(([name, value]) => (value !== '' ? `${name}:${value}` : name));
}

function clusterSearches(hostSearch: readonly string[], pod: V1Pod, clusterDomain: string): string[] {
  if (clusterDomain === '') return [...hostSearch];
  return omitDuplicates([`${podNamespace(pod)}.svc.${clusterDomain}`, `svc.${clusterDomain}`, clusterDomain, ...hostSearch]);
}

/** formDNSSearchFitsLimits: the searches within the limits, and the event when any was cut. */
export function searchesFitLimits(searches: readonly string[], events: DnsEvent[]): string[] {
  let exceeded = false;
  let out = searches.slice();
  if (out.length > MAX_DNS_SEARCH_PATHS) {
    out = out.slice(0, MAX_DNS_SEARCH_PATHS);
    exceeded = true;
  }
  const fit = out.filter((s) => s.length <= MAX_DNS_SEARCH_PATH_CHARS);
  if (fit.length !== out.length) exceeded = true;
  out = fit;
  const lineLen = out.join(' ').length;
  if (lineLen > MAX_DNS_SEARCH_LIST_CHARS) {
    let cutLen = 0;
    let cutNum = 0;
    for (let i = out.length - 1; i >= 0; i--) {
      cutLen += out[i]!.length + 1;
      cutNum++;
      if (lineLen - cutLen <= MAX_DNS_SEARCH_LIST_CHARS) break;
    }
    out = out.slice(0, out.length - cutNum);
    exceeded = true;
  }
  if (exceeded) {
    events.push({ reason: 'DNSConfigForming', message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${out.join(' ')}` });
  }
  return out;
}

/** formDNSNameserversFitsLimits. */
export function nameserversFitLimits(servers: readonly string[], events: DnsEvent[]): string[] {
  if (servers.length <= MAX_DNS_NAMESERVERS) return servers.slice();
  const out = servers.slice(0, MAX_DNS_NAMESERVERS);
  events.push({ reason: 'DNSConfigForming', message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${out.join(' ')}` });
  return out;
}

export function getPodDNS(pod: V1Pod, node: NodeDnsSettings): PodDnsResult {
  if (!node.host.ok) return { ok: false, message: node.host.message };
  const events: DnsEvent[] = [];
  let config: DnsConfig = { servers: [...node.host.conf.servers], searches: [...node.host.conf.searches], options: [...node.host.conf.options] };
  let type = podDnsType(pod);
  if (type === 'none') config = { servers: [], searches: [], options: [] };
  if (type === 'cluster') {
    if (node.clusterDNS.length > 0) {
      config.servers = [...node.clusterDNS];
      config.searches = clusterSearches(config.searches, pod, node.clusterDomain);
      config.options = [...DEFAULT_DNS_OPTIONS];
    } else {
      const msg = `kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`;
      events.push({ reason: 'MissingClusterDNS', message: `pod: ${JSON.stringify(formatPod(pod))}. ${msg}` });
      type = 'host';
    }
  }
  if (type === 'host' && node.resolvConf === '') {
    // No host resolver: lookups go to the local machine, as bind does with no nameservers.
    for (const ip of node.nodeIPs) config.servers.push(net.isIPv6(ip) ? '::1' : '127.0.0.1');
    if (config.servers.length === 0) config.servers.push('127.0.0.1');
    config.searches = ['.'];
  }
  const spec = pod.spec?.dnsConfig;
  if (spec) {
    config.servers = omitDuplicates([...config.servers, ...(spec.nameservers ?? [])]);
    config.searches = omitDuplicates([...config.searches, ...(spec.searches ?? [])]);
    config.options = mergeDnsOptions(config.options, spec.options ?? []);
  }
  config.servers = nameserversFitLimits(config.servers, events);
  config.searches = searchesFitLimits(config.searches, events);
  return { ok: true, config, events };
}
