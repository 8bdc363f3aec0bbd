/**
 * The pod config seam (pkg/kubelet/types/pod_update.go): what sources hand to the merger and
 * what the merger hands to the sync loop.
 *
 * Sources deliver SETs: the complete list of pods the source currently wants. The merger
 * (`pod-config.ts`) diffs each SET against what it holds for that source and emits incremental
 * {@link PodUpdate}s, in the kubelet's "incremental" notification mode.
 *
 * Ownership: pods passed to {@link PodSetSink.set} belong to the merger from then on; a source
 * must not mutate them afterwards (it may hand the very same objects again in its next SET,
 * which is how unchanged pods are recognised cheaply). Pods inside an emitted PodUpdate are
 * fresh copies that the consumer owns and may mutate.
 */
import type { V1Pod } from '@kubernetes/client-node';

/**
 * ADD: a pod uid the merger had not seen from this source.
 * UPDATE: spec, labels, annotations (other than the kubelet-local config.seen/source/mirror),
 *   deletionTimestamp or deletionGracePeriodSeconds changed.
 * DELETE: like UPDATE, but the change sets deletionTimestamp (graceful deletion requested).
 * REMOVE: the uid is no longer in the source's SET (static pods are always REMOVEd, never DELETEd).
 * RECONCILE: nothing above changed but status did (the API server's view differs from ours).
 */
export type PodOperation = 'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE' | 'RECONCILE';

/** Source names, as written into the `kubernetes.io/config.source` annotation. */
export const FileSource = 'file';
export const HttpSource = 'http';
export const ApiserverSource = 'api';
export type SourceName = typeof FileSource | typeof HttpSource | typeof ApiserverSource;

export interface PodUpdate {
  op: PodOperation;
  /** Never empty, except for the one empty ADD that marks a source's first (empty) SET. */
  pods: V1Pod[];
  source: SourceName;
}

/** What a source holds: the merger's input end for one source (kubelet `PodConfig.Channel`). */
export interface PodSetSink {
  /** Replace the source's complete pod set. Synchronous and cheap; never throws for bad pods. */
  set(pods: readonly V1Pod[]): void;
}

/** A pod source: something that, once started, calls its sink with SETs until closed. */
export interface PodSource {
  readonly name: SourceName;
  /** Begin delivering SETs to the sink given at construction. Idempotent. */
  start(): void;
  /** Stop: cancel timers and watches, abort in-flight reads; no SET is delivered after it resolves. Idempotent. */
  close(): Promise<void>;
}
