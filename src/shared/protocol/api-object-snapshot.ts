/**
 * The API objects a pod's volumes and env refer to, as the main thread resolved them, sent to
 * the pod's worker with each pod update (PodUpdateMessage.apiObjects). Part of the thread
 * protocol: plain data, structured-clone safe (Maps of plain objects), imported by both sides.
 *
 * Why the main thread resolves and pushes (instead of the worker asking over a request/response
 * channel): the API client, its QPS budget and the shared watches live on the main thread; a
 * worker's sync must never wait on the network inside its pod's serialized loop; and a change of
 * a watched object has to trigger a resync of the pods referring to it anyway, which is exactly
 * an update message carrying the new contents. The newest update wins on both sides, so the
 * worker always syncs with the newest contents the main thread had when it sent it.
 *
 * Secrets travel only in memory (postMessage between threads of one process); the worker writes
 * them to tmpfs only.
 *
 * Keys: configMaps/secrets by object name (the pod's namespace is implied); tokens by
 * {@link tokenKey}. A name absent from the map was not referenced when the snapshot was made.
 */

/** One object's state: known, known not to exist, not known yet, or unreadable. */
export type ObjectLookup<T> =
  | { state: 'found'; object: T }
  | { state: 'missing' }
  | { state: 'pending' }
  | { state: 'error'; message: string };

export interface ConfigMapContents {
  /** UTF-8 values. */
  data: Record<string, string>;
  /** base64 values (the API's encoding). */
  binaryData: Record<string, string>;
}

export interface SecretContents {
  /** base64 values (the API's encoding). */
  data: Record<string, string>;
}

export interface ServiceAccountToken {
  token: string;
  /** RFC 3339. */
  expirationTimestamp: string;
}

/**
 * The service environment variables of a pod (the kubelet's getServiceEnvVarMap, computed on the
 * main thread from its one Service watch: src/main/config-objects/service-env.ts), in the order
 * they are appended after the container's own variables.
 */
export interface ServiceEnv {
  vars: ReadonlyArray<{ readonly key: string; readonly value: string }>;
}

export interface PodApiObjects {
  configMaps: Map<string, ObjectLookup<ConfigMapContents>>;
  secrets: Map<string, ObjectLookup<SecretContents>>;
  tokens: Map<string, ObjectLookup<ServiceAccountToken>>;
  /**
   * Cluster mode only: 'found' with the variables, or 'pending' while the services were not
   * listed yet (the kubelet then refuses to build the environment of a non-static pod).
   * Absent: no service variables (standalone, as a kubelet without an API server).
   */
  serviceEnv?: ObjectLookup<ServiceEnv>;
}

/** The key of a projected serviceAccountToken source: its audience and lifetime. */
export function tokenKey(audience: string, expirationSeconds: number): string {
  return `${audience}|${expirationSeconds}`;
}

/** The kubelet's defaults for a projected token source (expirationSeconds 3600; audience = the API's). */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

export function emptyPodApiObjects(): PodApiObjects {
  return { configMaps: new Map(), secrets: new Map(), tokens: new Map() };
}
