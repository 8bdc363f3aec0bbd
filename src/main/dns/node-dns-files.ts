/**
 * Reads the node files pods' DNS and hosts depend on, once, at agent startup, on the main thread:
 * --resolv-conf (the kubelet's getHostDNSConfig; at most 10 MiB, its maxResolveConfLength) and
 * /etc/hosts (for host-network pods; at most 1 MiB). The result goes to every pod-worker thread
 * (NodeDnsSettings in its workerData), so no pod sync reads a node file. A file that cannot be
 * read is recorded with the reason, not fatal: pods that need it fail with that message, as the
 * kubelet's GetPodDNS / ensureHostsFile do per pod. The kubelet re-reads per pod; a change to
 * these files takes an agent restart here (README).
 *
 * Also the kubelet's CheckLimitsForResolvConf: warnings when the host search line already
 * exceeds what a pod can take.
 */
import fs from 'node:fs';
import { MAX_RESOLV_CONF_BYTES, parseResolvConf } from '../../shared/dns/resolv-conf.js';
import { MAX_DNS_SEARCH_LIST_CHARS, MAX_DNS_SEARCH_PATH_CHARS, MAX_DNS_SEARCH_PATHS } from '../../shared/dns/dns-limits.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { NodeDnsSettings } from '../../shared/protocol/node-dns-settings.js';

export const NODE_HOSTS_FILE = '/etc/hosts';
export const MAX_NODE_HOSTS_BYTES = 1 << 20;

export interface NodeDnsInputs {
  clusterDNS: readonly string[];
  clusterDomain: string;
  resolvConf: string;
  nodeIPs: readonly string[];
  /** Default NODE_HOSTS_FILE (tests point it elsewhere). */
  hostsFile?: string;
  logger: Logger;
  /** Reads at most `max` bytes; throws when the file is longer (default: node:fs). */
  readBounded?: (file: string, max: number) => string;
}

/** utilio.ReadAtMost: the whole file, or an error when it is longer than `max`. */
export function readFileAtMost(file: string, max: number): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile()) throw new Error(`${file} is not a regular file`);
    const buf = Buffer.alloc(max + 1);
    let n = 0;
    for (;;) {
      const r = fs.readSync(fd, buf, n, buf.length - n, null);
      if (r === 0) break;
      n += r;
      if (n > max) throw new Error(`${file}: the read limit is reached (${max} bytes)`);
    }
    return buf.subarray(0, n).toString();
  } finally {
    fs.closeSync(fd);
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function readNodeDnsSettings(i: NodeDnsInputs): NodeDnsSettings {
  const read = i.readBounded ?? readFileAtMost;
  let host: NodeDnsSettings['host'] = { ok: true, conf: { servers: [], searches: [], options: [] } };
  if (i.resolvConf !== '') {
    try {
      const parsed = parseResolvConf(read(i.resolvConf, MAX_RESOLV_CONF_BYTES));
      host = parsed.ok ? { ok: true, conf: parsed.conf } : { ok: false, message: parsed.message };
    } catch (err) {
      host = { ok: false, message: errText(err) };
    }
    if (!host.ok) i.logger.error('Cannot read the resolv.conf pods take their DNS from; pods will fail to start', { resolvConf: i.resolvConf, error: host.message });
    else checkLimitsForResolvConf(i, host.conf.searches);
  }
  const hostsFile = i.hostsFile ?? NODE_HOSTS_FILE;
  let nodeHosts: NodeDnsSettings['nodeHosts'];
  try {
    nodeHosts = { ok: true, content: read(hostsFile, MAX_NODE_HOSTS_BYTES) };
  } catch (err) {
    nodeHosts = { ok: false, message: errText(err) };
    i.logger.error('Cannot read the node hosts file; host-network pods will fail to start', { file: hostsFile, error: nodeHosts.message });
  }
  return { clusterDNS: [...i.clusterDNS], clusterDomain: i.clusterDomain, resolvConf: i.resolvConf, host, nodeIPs: [...i.nodeIPs], nodeHosts };
}

/** CheckLimitsForResolvConf (logged; the kubelet also records it as a node event). */
function checkLimitsForResolvConf(i: NodeDnsInputs, searches: readonly string[]): void {
  const limit = i.clusterDomain !== '' ? MAX_DNS_SEARCH_PATHS - 3 : MAX_DNS_SEARCH_PATHS;
  let msg: string | undefined;
  if (searches.length > limit) msg = `Resolv.conf file '${i.resolvConf}' contains search line consisting of more than ${limit} domains!`;
  else if (searches.some((s) => s.length > MAX_DNS_SEARCH_PATH_CHARS)) msg = `Resolv.conf file ${JSON.stringify(i.resolvConf)} contains a search path which length is more than allowed ${MAX_DNS_SEARCH_PATH_CHARS} chars!`;
  else if (searches.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) msg = `Resolv.conf file '${i.resolvConf}' contains search line which length is more than allowed ${MAX_DNS_SEARCH_LIST_CHARS} chars!`;
  if (msg !== undefined) i.logger.info('CheckLimitsForResolvConf', { warning: msg });
}
