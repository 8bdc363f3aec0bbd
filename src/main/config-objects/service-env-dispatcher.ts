/**
 * Cluster mode's service links on the main thread: a {@link PodDispatcher} decorator that
 * attaches each pod's service environment variables (PodApiObjects.serviceEnv, computed by
 * service-env.ts from the node's one Service watch) to every non-kill update it forwards. It sits
 * inside the ApiObjectDispatcher, so every update (those it resyncs included) passes here.
 *
 * As the kubelet (makeEnvironmentVariables): until the services were listed once, a pod from
 * the API gets 'pending' (its pod worker fails the container's start with the kubelet's
 * CreateContainerConfigError message) and is resynced as soon as they are; a static pod does
 * not wait (it gets what is known). A later change of the services resyncs nobody: the kubelet
 * reads them only when it creates a container, and every later update of the pod (a PLEG event
 * when a container exits, the periodic resync) carries the current ones.
 *
 * The variables of a (namespace, enableServiceLinks) pair are computed once per change of the
 * services and shared by every update that needs them (read-only: frozen).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { PodDispatcher } from '../dispatch/pod-dispatcher.js';
import { isStaticPod } from '../pod-manager/pod-manager.js';
import type { PodUpdateMessage, WorkerThreadStats } from '../../shared/protocol/pod-worker-protocol.js';
import { emptyPodApiObjects, type ObjectLookup, type ServiceEnv } from '../../shared/protocol/api-object-snapshot.js';
import { serviceEnvVars, type ServiceLister } from './service-env.js';

export interface ServiceEnvDispatcherOptions {
  inner: PodDispatcher;
  services: ServiceLister & { readonly synced: boolean };
}

const PENDING: ObjectLookup<ServiceEnv> = Object.freeze({ state: 'pending' });

export class ServiceEnvDispatcher implements PodDispatcher {
  readonly #o: ServiceEnvDispatcherOptions;
  /** `${links}/${namespace}` → the lookup every pod of that namespace gets; cleared on change. */
  readonly #cache = new Map<string, ObjectLookup<ServiceEnv>>();
  /** Pods last sent 'pending', by uid, with that update (resent once the services are listed). */
  readonly #waiting = new Map<string, PodUpdateMessage>();

  constructor(opts: ServiceEnvDispatcherOptions) {
    if (!opts?.inner || !opts.services) throw new TypeError('ServiceEnvDispatcher: inner and services are required');
    this.#o = opts;
  }

  get threads(): number {
    return this.#o.inner.threads;
  }

  /** Pods waiting for the first list of the services (leak checks). */
  get waitingPods(): number {
    return this.#waiting.size;
  }

  send(msg: PodUpdateMessage): void {
    if (msg.updateType === 'kill') {
      this.#waiting.delete(msg.uid);
      this.#o.inner.send(msg);
      return;
    }
    const serviceEnv = this.#lookup(msg.pod);
    if (serviceEnv.state === 'pending') this.#waiting.set(msg.uid, msg);
    else this.#waiting.delete(msg.uid);
    this.#o.inner.send({ ...msg, apiObjects: { ...(msg.apiObjects ?? emptyPodApiObjects()), serviceEnv } });
  }

  /** The services changed (or were listed for the first time): new variables; waiting pods resync. */
  servicesChanged(): void {
    this.#cache.clear();
    if (!this.#o.services.synced) return;
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const last of waiting) {
      this.send({ kind: 'update', uid: last.uid, updateType: 'sync', pod: last.pod, ...(last.apiObjects ? { apiObjects: last.apiObjects } : {}) });
    }
  }

  stats(): Promise<WorkerThreadStats[]> {
    return this.#o.inner.stats();
  }

  async close(): Promise<void> {
    this.#waiting.clear();
    await this.#o.inner.close();
  }

  #lookup(pod: V1Pod): ObjectLookup<ServiceEnv> {
    const services = this.#o.services;
    if (!services.synced && !isStaticPod(pod)) return PENDING;
    const namespace = pod.metadata?.namespace ?? '';
    const links = pod.spec?.enableServiceLinks !== false;
    const key = `${links ? 1 : 0}/${namespace}`;
    let l = this.#cache.get(key);
    if (l === undefined) {
      const env = serviceEnvVars(services, namespace, links);
      l = Object.freeze({ state: 'found', object: Object.freeze({ vars: Object.freeze(env.vars.map((v) => Object.freeze(v))) }) }) as ObjectLookup<ServiceEnv>;
      // Not cached before the first list: a static pod's empty set must not outlive it.
      if (services.synced) this.#cache.set(key, l);
    }
    return l;
  }
}
