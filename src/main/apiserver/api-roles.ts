/**
 * The small role interfaces the cluster-mode components hold, each satisfied by {@link ApiClient}
 * (api-client.ts) and by in-memory fakes in tests. Errors are ApiError (api-errors.ts).
 */
import type { RequestPriority } from './token-bucket.js';

/** A pod as the API names it, with the UID every write is made conditional on. */
export interface PodRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface PodList {
  /** Raw pod objects, not yet decoded or validated. */
  items: unknown[];
  resourceVersion: string;
}

/** One watch event as the server sent it (`object` raw, not yet decoded). */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Record<string, unknown>;
}

/** How a watch ended: normally (timeout or server close), or with the server's answer instead of a stream. */
export type WatchEnd = { kind: 'closed' } | { kind: 'status'; status: number };

/** List + watch of the pods bound to one node (the reflector's ListerWatcher). */
export interface PodListWatcher {
  /** Every pod with spec.nodeName = node, all namespaces; `resourceVersion` '0' may be served from the server's cache, '' is a quorum read. */
  listPods(resourceVersion: string, signal?: AbortSignal): Promise<PodList>;
  /** Watches from `resourceVersion` with bookmarks; `timeoutSeconds` is the server-side bound. */
  watchPods(resourceVersion: string, timeoutSeconds: number, onEvent: (ev: WatchEvent) => void, signal?: AbortSignal): Promise<WatchEnd>;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Priority at the rate limiter (ignored when `tokenHeld`). */
  priority?: RequestPriority;
  /** The caller already took this request's token from the client's throttle. */
  tokenHeld?: boolean;
}

/** Status writes: strategic-merge PATCH of pods/NAME/status with the UID as precondition. */
export interface PodStatusWriter {
  patchPodStatus(ref: PodRef, status: Record<string, unknown>, opts?: RequestOptions): Promise<void>;
}

/** The final DELETE of a terminated pod (grace 0, UID precondition). */
export interface PodDeleter {
  deletePod(ref: PodRef, opts?: RequestOptions): Promise<void>;
}

/** The namespaced objects pods refer to that a node reads (configMaps and secrets). */
export type NamespacedObjectResource = 'configmaps' | 'secrets';

/** List + watch of single objects (one watcher per referenced object; see ApiClient.objectListWatcher). */
export interface ObjectListWatchers {
  objectListWatcher(resource: NamespacedObjectResource, namespace: string, name: string): PodListWatcher;
}

/** List + watch of every Service in every namespace (the kubelet's service informer, for service links). */
export interface ServiceListWatchers {
  serviceListWatcher(): PodListWatcher;
}

export interface TokenRequestSpec {
  namespace: string;
  serviceAccountName: string;
  /** '' = the API server's own audience. */
  audience: string;
  expirationSeconds: number;
  /** The pod the token is bound to (invalidated when it is deleted). */
  pod: { name: string; uid: string };
}

export interface IssuedToken {
  token: string;
  /** RFC 3339. */
  expirationTimestamp: string;
}

/** TokenRequest (serviceaccounts/NAME/token). */
export interface TokenIssuer {
  createServiceAccountToken(req: TokenRequestSpec, opts?: RequestOptions): Promise<IssuedToken>;
}
