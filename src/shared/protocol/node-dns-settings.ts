/**
 * The node's DNS and hosts-file settings a pod worker needs to form a pod's DNS config and its
 * /etc/hosts (the kubelet's dns.Configurer plus the node's hosts file). Built once on the main
 * thread at startup (src/main/dns/node-dns-files.ts: the only place that reads --resolv-conf and
 * /etc/hosts) and handed to every pod-worker thread in its workerData, so no pod sync reads a
 * node file. Plain data (structured-clone safe).
 */
import type { ResolvConf } from '../dns/resolv-conf.js';

export interface NodeDnsSettings {
  /** --cluster-dns: the cluster DNS server IPs (empty: ClusterFirst falls back to Default). */
  clusterDNS: string[];
  /** --cluster-domain ('' : no cluster search domains). */
  clusterDomain: string;
  /** --resolv-conf path; '' disables it (host-policy pods then resolve through localhost). */
  resolvConf: string;
  /**
   * The parsed --resolv-conf (empty lists when it is ''), or why it could not be read or parsed:
   * then every pod's DNS config fails with that message, as the kubelet's GetPodDNS does.
   */
  host: { ok: true; conf: ResolvConf } | { ok: false; message: string };
  /** The node's IPs (the localhost server family when --resolv-conf is ''). */
  nodeIPs: string[];
  /** The node's /etc/hosts for host-network pods, or why it could not be read. */
  nodeHosts: { ok: true; content: string } | { ok: false; message: string };
}

/** Settings with no cluster DNS and an empty host config (unit tests, embedded defaults). */
export function emptyNodeDnsSettings(): NodeDnsSettings {
  return {
    clusterDNS: [],
    clusterDomain: '',
    resolvConf: '',
    host: { ok: true, conf: { servers: [], searches: [], options: [] } },
    nodeIPs: [],
    nodeHosts: { ok: true, content: '' },
  };
}
