/**
 * What the secure port reads beyond the read-only sources (server-sources.ts): pod lookup by
 * name, the runtime's running pods, container logs and stats. Small role interfaces the agent
 * implements; the server never reaches into the sync loop, the pool or the runtime otherwise.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { LocateResult } from './container-logs-locate.js';

/** A desired pod by namespace and name (the kubelet's GetPodByName). */
export interface PodByNameSource {
  byName(namespace: string, name: string): V1Pod | undefined;
}

/** The kubelet's /runningpods/: pods as the runtime has them (name, namespace, uid, containers). */
export interface RunningPodsSource {
  list(): Promise<V1Pod[]>;
}

export interface ContainerLogSource {
  locate(pod: V1Pod, container: string, previous: boolean): Promise<LocateResult>;
  isRunning(containerId: string): Promise<boolean>;
}

/** /stats/summary and /metrics/resource. */
export interface StatsSource {
  /** The Summary API object (stats/v1alpha1 Summary). */
  summary(): Promise<unknown>;
  /** The resource metrics exposition (text format 0.0.4). */
  resourceMetrics(): Promise<string>;
}
