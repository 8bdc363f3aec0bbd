/**
 * The node's one Service watch (the kubelet's service informer, which feeds its service lister):
 * a list+watch of every Service in every namespace, started once in cluster mode, whatever the
 * number of pods. It runs the pod source's reflector (pod-reflector.ts: 410 → relist, backoff
 * 800 ms → 30 s) over the main client, so its requests take the main client's QPS budget.
 *
 * What it keeps of each Service is what service links need (service-env.ts): namespace, name,
 * cluster IP and ports. Objects are read defensively: a Service whose fields are not what the
 * API server validates (name, cluster IP, port numbers, protocol) is left out, with a log line,
 * instead of making variables from it.
 *
 * `synced` turns true with the first list (the kubelet's serviceHasSynced) and stays true while
 * the API server is unreachable (the last state is kept). `onChange` is called once per batch of
 * events that changed any service, and once at the first list.
 */
import net from 'node:net';
import type { Clock, Random } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { ServiceListWatchers, WatchEvent } from '../apiserver/api-roles.js';
import { PodReflector } from '../apiserver/pod-reflector.js';
import type { ServiceInfo, ServiceLister, ServicePortInfo } from './service-env.js';

export interface ServiceWatchOptions {
  lw: ServiceListWatchers;
  clock: Clock;
  random: Random;
  logger: Logger;
  onChange(): void;
}

/** DNS-1035 label (Service names) / DNS-1123 label (namespaces, port names): at most 63 characters. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const PROTOCOLS = new Set(['', 'TCP', 'UDP', 'SCTP']);
/** Bound on the ports read of one Service (each makes five variables). */
export const MAX_SERVICE_PORTS = 256;

export type ServiceDecode = { ok: true; service: ServiceInfo } | { ok: false; why: string };

function decodePort(raw: unknown, i: number): ServicePortInfo | string {
  if (typeof raw !== 'object' || raw === null) return `spec.ports[${i}]: not an object`;
  const p = raw as { name?: unknown; port?: unknown; protocol?: unknown };
  const name = p.name ?? '';
  if (typeof name !== 'string' || (name !== '' && !DNS_LABEL.test(name))) return `spec.ports[${i}].name: not a DNS label`;
  if (typeof p.port !== 'number' || !Number.isInteger(p.port) || p.port < 1 || p.port > 65535) return `spec.ports[${i}].port: not in [1, 65535]`;
  const protocol = p.protocol ?? '';
  if (typeof protocol !== 'string' || !PROTOCOLS.has(protocol)) return `spec.ports[${i}].protocol: not TCP, UDP or SCTP`;
  return { name, port: p.port, protocol };
}

/** The fields service links read, validated as the API server would have (see the module comment). */
export function decodeService(raw: unknown): ServiceDecode {
  if (typeof raw !== 'object' || raw === null) return { ok: false, why: 'not an object' };
  const o = raw as { metadata?: { name?: unknown; namespace?: unknown }; spec?: { clusterIP?: unknown; ports?: unknown } };
  const name = o.metadata?.name;
  const namespace = o.metadata?.namespace;
  if (typeof name !== 'string' || !DNS_LABEL.test(name)) return { ok: false, why: 'metadata.name: not a DNS label' };
  if (typeof namespace !== 'string' || !DNS_LABEL.test(namespace)) return { ok: false, why: 'metadata.namespace: not a DNS label' };
  const clusterIP = o.spec?.clusterIP ?? '';
  if (typeof clusterIP !== 'string' || (clusterIP !== '' && clusterIP !== 'None' && net.isIP(clusterIP) === 0)) return { ok: false, why: 'spec.clusterIP: not an IP address' };
  const rawPorts = o.spec?.ports ?? [];
  if (!Array.isArray(rawPorts)) return { ok: false, why: 'spec.ports: not a list' };
  if (rawPorts.length > MAX_SERVICE_PORTS) return { ok: false, why: `spec.ports: more than ${MAX_SERVICE_PORTS}` };
  const ports: ServicePortInfo[] = [];
  for (let i = 0; i < rawPorts.length; i++) {
    const p = decodePort(rawPorts[i], i);
    if (typeof p === 'string') return { ok: false, why: p };
    ports.push(p);
  }
  return { ok: true, service: { namespace, name, clusterIP, ports } };
}

export class ServiceWatch implements ServiceLister {
  readonly #o: ServiceWatchOptions;
  readonly #reflector: PodReflector;
  /** namespace → name → service. */
  #byNs = new Map<string, Map<string, ServiceInfo>>();
  #synced = false;
  #changed = false;

  constructor(opts: ServiceWatchOptions) {
    if (!opts?.lw || !opts.clock || !opts.logger || typeof opts.onChange !== 'function') throw new TypeError('ServiceWatch: lw, clock, logger and onChange are required');
    this.#o = opts;
    this.#reflector = new PodReflector({
      lw: opts.lw.serviceListWatcher(),
      clock: opts.clock,
      random: opts.random,
      logger: opts.logger,
      name: 'service watch',
      onList: (items) => {
        this.#byNs = new Map();
        for (const item of items) this.#put(item);
        this.#synced = true;
        this.#changed = true;
      },
      onEvent: (ev: WatchEvent) => {
        if (ev.type === 'DELETED') this.#remove(ev.object);
        else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.#put(ev.object);
      },
      onBatchEnd: () => {
        if (!this.#changed) return;
        this.#changed = false;
        this.#o.onChange();
      },
    });
  }

  /** True once the services were listed (the kubelet's serviceHasSynced). */
  get synced(): boolean {
    return this.#synced;
  }

  /** Services held now. */
  get size(): number {
    let n = 0;
    for (const m of this.#byNs.values()) n += m.size;
    return n;
  }

  servicesIn(namespace: string): Iterable<ServiceInfo> {
    return this.#byNs.get(namespace)?.values() ?? [];
  }

  start(): void {
    this.#reflector.start();
  }

  /** Stops the watch. Idempotent. */
  async close(): Promise<void> {
    await this.#reflector.close();
  }

  #put(raw: unknown): void {
    const d = decodeService(raw);
    if (!d.ok) {
      // A Service the API server would not have stored: no variables from it (and any older
      // version of it is dropped, so no stale ones either).
      this.#remove(raw);
      this.#o.logger.v(2).info('service links: service ignored', { why: d.why });
      return;
    }
    const s = d.service;
    let m = this.#byNs.get(s.namespace);
    if (!m) this.#byNs.set(s.namespace, (m = new Map()));
    m.set(s.name, s);
    this.#changed = true;
  }

  #remove(raw: unknown): void {
    const meta = (raw as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
    if (typeof meta?.name !== 'string' || typeof meta.namespace !== 'string') return;
    const m = this.#byNs.get(meta.namespace);
    if (!m?.delete(meta.name)) return;
    if (m.size === 0) this.#byNs.delete(meta.namespace);
    this.#changed = true;
  }
}
