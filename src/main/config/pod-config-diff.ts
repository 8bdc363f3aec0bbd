/**
 * How the merger classifies a pod it already holds against the version a source just sent
 * (pkg/kubelet/config/config.go `checkAndUpdatePod` and friends), kept apart from the merger's
 * bookkeeping so the rules can be read and tested on their own.
 */
import type { V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import {
  ConfigFirstSeenAnnotationKey,
  ConfigMirrorAnnotationKey,
  ConfigSourceAnnotationKey,
} from '../../shared/kubetypes/kubelet-labels.js';
import { deepEqual } from '../../shared/immutable/deep-equal.js';

/** Annotations the kubelet itself writes; a difference in these is never an UPDATE. */
export const LOCAL_ANNOTATIONS: readonly string[] = Object.freeze([
  ConfigSourceAnnotationKey,
  ConfigMirrorAnnotationKey,
  ConfigFirstSeenAnnotationKey,
]);

/** True when the maps are equal ignoring the kubelet-local annotations. */
export function isAnnotationMapEqual(existing: Readonly<Record<string, string>> | undefined, candidate: Readonly<Record<string, string>> | undefined): boolean {
  const strip = (m: Readonly<Record<string, string>> | undefined): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(m ?? {})) if (!LOCAL_ANNOTATIONS.includes(k)) out[k] = v;
    return out;
  };
  return deepEqual(strip(existing), strip(candidate));
}

/** Whether `ref` differs from `existing` in anything that makes an UPDATE (or DELETE). */
export function podsDifferSemantically(existing: V1Pod, ref: V1Pod): boolean {
  return !(
    deepEqual(existing.spec, ref.spec) &&
    deepEqual(existing.metadata?.labels, ref.metadata?.labels) &&
    deepEqual(existing.metadata?.deletionTimestamp, ref.metadata?.deletionTimestamp) &&
    deepEqual(existing.metadata?.deletionGracePeriodSeconds, ref.metadata?.deletionGracePeriodSeconds) &&
    isAnnotationMapEqual(existing.metadata?.annotations, ref.metadata?.annotations)
  );
}

export type PodChange = 'none' | 'update' | 'delete' | 'reconcile';

/**
 * What `ref` (a source's new version) makes of `existing` (the merger's stored version):
 * - semantic change with deletionTimestamp set → 'delete' (graceful deletion);
 * - other semantic change → 'update';
 * - only status changed → 'reconcile' (only status is taken over);
 * - nothing → 'none' (`pod` is `existing`).
 * The new version is a new object: `existing`'s fields with ref's spec, labels, deletion fields,
 * status and annotations, plus `existing`'s kubelet-local annotations (config.seen in
 * particular). It shares ref's subtrees (no copies); neither input is modified, so both may be
 * frozen and shared.
 */
export function checkAndUpdatePod(existing: V1Pod, ref: V1Pod): { change: PodChange; pod: V1Pod } {
  if (!podsDifferSemantically(existing, ref)) {
    if (deepEqual(existing.status, ref.status)) return { change: 'none', pod: existing };
    const pod: V1Pod = { ...existing };
    setOptional(pod, 'status', ref.status);
    return { change: 'reconcile', pod };
  }
  const refMeta = ref.metadata ?? {};
  const annotations: Record<string, string> = { ...(refMeta.annotations ?? {}) };
  for (const k of LOCAL_ANNOTATIONS) {
    const v = existing.metadata?.annotations?.[k];
    if (v !== undefined) annotations[k] = v;
  }
  const meta: V1ObjectMeta = { ...(existing.metadata ?? {}), annotations };
  setOptional(meta, 'labels', refMeta.labels);
  setOptional(meta, 'deletionTimestamp', refMeta.deletionTimestamp);
  setOptional(meta, 'deletionGracePeriodSeconds', refMeta.deletionGracePeriodSeconds);
  const pod: V1Pod = { ...existing, metadata: meta };
  setOptional(pod, 'spec', ref.spec);
  setOptional(pod, 'status', ref.status);
  return { change: refMeta.deletionTimestamp !== undefined ? 'delete' : 'update', pod };
}

function setOptional<T extends object, K extends keyof T>(o: T, k: K, v: T[K] | undefined): void {
  if (v === undefined) delete o[k];
  else o[k] = v;
}

/** Go's time.RFC3339Nano in UTC: fraction without trailing zeros, e.g. 2024-05-01T10:00:00.12Z. */
export function rfc3339Nano(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2024-05-01T10:00:00.120Z
  return iso.replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac === '' ? 'Z' : `.${frac}Z`));
}
