/**
 * The desired pods (the kubelet's pod manager): what the sources want on this node, keyed by
 * UID, with a full-name index ("namespace/name") for lookups and duplicate detection.
 * Main thread only. Pods stored here are owned by the pod manager; callers must not mutate them.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { ConfigSourceAnnotationKey } from '../../shared/kubetypes/kubelet-labels.js';

export function podFullName(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

export function podUID(pod: V1Pod): string {
  const uid = pod.metadata?.uid;
  if (!uid) throw new TypeError(`pod ${podFullName(pod)} has no metadata.uid`);
  return uid;
}

/** Static pods come from the file or HTTP source (not the API server). */
export function isStaticPod(pod: V1Pod): boolean {
  const src = pod.metadata?.annotations?.[ConfigSourceAnnotationKey];
  return src === 'file' || src === 'http';
}

export class PodManager {
  readonly #byUID = new Map<string, V1Pod>();
  readonly #byFullName = new Map<string, string>();

  /** Adds or replaces a pod. */
  addOrUpdate(pod: V1Pod): void {
    const uid = podUID(pod);
    const old = this.#byUID.get(uid);
    if (old) this.#byFullName.delete(podFullName(old));
    this.#byUID.set(uid, pod);
    this.#byFullName.set(podFullName(pod), uid);
  }

  remove(uid: string): V1Pod | undefined {
    const pod = this.#byUID.get(uid);
    if (!pod) return undefined;
    this.#byUID.delete(uid);
    if (this.#byFullName.get(podFullName(pod)) === uid) this.#byFullName.delete(podFullName(pod));
    return pod;
  }

  get(uid: string): V1Pod | undefined {
    return this.#byUID.get(uid);
  }

  getByFullName(fullName: string): V1Pod | undefined {
    const uid = this.#byFullName.get(fullName);
    return uid === undefined ? undefined : this.#byUID.get(uid);
  }

  has(uid: string): boolean {
    return this.#byUID.has(uid);
  }

  pods(): IterableIterator<V1Pod> {
    return this.#byUID.values();
  }

  get size(): number {
    return this.#byUID.size;
  }
}
