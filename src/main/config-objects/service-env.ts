/**
 * Service environment variables ("service links"), the kubelet's getServiceEnvVarMap
 * (kubelet_pods.go) and envvars.FromServices (pkg/kubelet/envvars/envvars.go), over the services
 * the node's one Service watch holds (service-watch.ts). Pure.
 *
 * Which services: those with a cluster IP (not "" nor "None"); the master service `kubernetes`
 * of the `default` namespace always (even with enableServiceLinks false); with
 * enableServiceLinks (default true) every other service of the pod's namespace too. A name is
 * taken once: a service of the pod's namespace over a master service of the same name (the
 * kubelet's map, where only the master service checks for an existing entry).
 *
 * Per service NAME (upper case, '-' → '_'), with its first port P0 and cluster IP IP:
 *   NAME_SERVICE_HOST=IP  NAME_SERVICE_PORT=P0  NAME_SERVICE_PORT_<PORTNAME>=P (named ports)
 *   and the Docker link variables: NAME_PORT=proto://IP:P0, and per port
 *   NAME_PORT_<P>_<PROTO>=proto://IP:P, …_PROTO=proto, …_PORT=P, …_ADDR=IP
 * (proto lower case, TCP when unset; an IPv6 IP in brackets in the URLs, as net.JoinHostPort).
 * The kubelet's map gives each name one value; services are taken in name order here so the
 * result does not depend on the order the watch delivered them.
 */
import type { ServiceEnv } from '../../shared/protocol/api-object-snapshot.js';

export interface ServicePortInfo {
  /** '' for the unnamed (single) port. */
  name: string;
  port: number;
  /** 'TCP', 'UDP' or 'SCTP' as the API spells it ('' = TCP). */
  protocol: string;
}

/** What service links need of a Service. */
export interface ServiceInfo {
  namespace: string;
  name: string;
  /** spec.clusterIP: '' or 'None' have no variables. */
  clusterIP: string;
  ports: readonly ServicePortInfo[];
}

/** Read access to the services of a namespace (service-watch.ts). */
export interface ServiceLister {
  servicesIn(namespace: string): Iterable<ServiceInfo>;
}

/** The master services' namespace and names (the kubelet's masterServices). */
export const MASTER_SERVICE_NAMESPACE = 'default';
export const MASTER_SERVICES: ReadonlySet<string> = new Set(['kubernetes']);

/** v1helper.IsServiceIPSet. */
export function isServiceIPSet(s: ServiceInfo): boolean {
  return s.clusterIP !== '' && s.clusterIP !== 'None';
}

/** makeEnvVariableName. */
function envName(s: string): string {
  return s.replaceAll('-', '_').toUpperCase();
}

/** net.JoinHostPort: an IPv6 address in brackets. */
function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** envvars.FromServices for services already filtered and ordered. */
export function fromServices(services: Iterable<ServiceInfo>): Array<{ key: string; value: string }> {
  const out: Array<{ key: string; value: string }> = [];
  const add = (key: string, value: string): void => void out.push({ key, value });
  for (const s of services) {
    const first = s.ports[0];
    if (!isServiceIPSet(s) || first === undefined) continue;
    const prefix = envName(s.name);
    add(`${prefix}_SERVICE_HOST`, s.clusterIP);
    add(`${prefix}_SERVICE_PORT`, String(first.port));
    for (const p of s.ports) if (p.name !== '') add(`${prefix}_SERVICE_PORT_${envName(p.name)}`, String(p.port));
    s.ports.forEach((p, i) => {
      const proto = p.protocol === '' ? 'TCP' : p.protocol;
      const url = `${proto.toLowerCase()}://${joinHostPort(s.clusterIP, p.port)}`;
      if (i === 0) add(`${prefix}_PORT`, url);
      const portPrefix = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
      add(portPrefix, url);
      add(`${portPrefix}_PROTO`, proto.toLowerCase());
      add(`${portPrefix}_PORT`, String(p.port));
      add(`${portPrefix}_ADDR`, s.clusterIP);
    });
  }
  return out;
}

/** getServiceEnvVarMap: the variables of a pod in `namespace` (one value per name, first-set order). */
export function serviceEnvVars(lister: ServiceLister, namespace: string, enableServiceLinks: boolean): ServiceEnv {
  const byName = new Map<string, ServiceInfo>();
  for (const s of lister.servicesIn(MASTER_SERVICE_NAMESPACE)) {
    if (MASTER_SERVICES.has(s.name) && isServiceIPSet(s)) byName.set(s.name, s);
  }
  if (enableServiceLinks) {
    for (const s of lister.servicesIn(namespace)) {
      if (!isServiceIPSet(s) || (namespace === MASTER_SERVICE_NAMESPACE && MASTER_SERVICES.has(s.name))) continue;
      // The kubelet's map: a service of the pod's own namespace replaces a master service of the same name.
      byName.set(s.name, s);
    }
  }
  const ordered = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const m = new Map<string, string>();
  for (const { key, value } of fromServices(ordered)) m.set(key, value);
  return { vars: [...m].map(([key, value]) => ({ key, value })) };
}
