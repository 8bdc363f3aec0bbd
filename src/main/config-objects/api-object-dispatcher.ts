/**
 * Cluster mode's link between pods and the API objects they refer to, on the main thread: a
 * {@link PodDispatcher} decorator that, for every non-kill update of an API pod,
 *   1. computes the objects it refers to (pod-object-refs.ts) and moves its references in the
 *      shared watches (object-watches.ts: one watch per object, dropped with its last pod) and
 *      the token manager (token-manager.ts);
 *   2. attaches the current snapshot of those objects (PodUpdateMessage.apiObjects) before
 *      handing the update to the real dispatcher.
 * When a watched object or a token changes, each pod referring to it is sent a 'sync' update
 * with the new snapshot (the kubelet resyncs pods on its sync period; this is sooner). A kill
 * releases the pod's references (a terminating pod starts nothing that would need them).
 *
 * Why push rather than have workers ask: see src/shared/protocol/api-object-snapshot.ts.
 * Static pods never get here with references: admission rejects them (static-pod-refs.ts).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { NamespacedObjectResource } from '../apiserver/api-roles.js';
import type { PodDispatcher } from '../dispatch/pod-dispatcher.js';
import type { PodUpdateMessage, WorkerThreadStats } from '../../shared/protocol/pod-worker-protocol.js';
import type { ConfigMapContents, ObjectLookup, PodApiObjects, SecretContents } from '../../shared/protocol/api-object-snapshot.js';
import { ObjectWatches } from './object-watches.js';
import { podObjectRefs, type PodObjectRefs } from './pod-object-refs.js';
import type { TokenManager } from './token-manager.js';

export interface ApiObjectDispatcherOptions {
  inner: PodDispatcher;
  watches: ObjectWatches;
  tokens: TokenManager;
}

interface Tracked {
  namespace: string;
  refs: PodObjectRefs;
  /** The last non-kill update (what a resync re-sends). */
  last: PodUpdateMessage;
}

export class ApiObjectDispatcher implements PodDispatcher {
  readonly #o: ApiObjectDispatcherOptions;
  readonly #pods = new Map<string, Tracked>();
  /** Object key (ObjectWatches.key) → pods referring to it. */
  readonly #byObject = new Map<string, Set<string>>();

  constructor(opts: ApiObjectDispatcherOptions) {
    if (!opts?.inner || !opts.watches || !opts.tokens) throw new TypeError('ApiObjectDispatcher: inner, watches and tokens are required');
    this.#o = opts;
  }

  get threads(): number {
    return this.#o.inner.threads;
  }

  /** Pods with references held (leak checks). */
  get trackedPods(): number {
    return this.#pods.size;
  }

  send(msg: PodUpdateMessage): void {
    if (msg.updateType === 'kill') {
      this.#release(msg.uid);
      this.#o.inner.send(msg);
      return;
    }
    const refs = podObjectRefs(msg.pod);
    const empty = refs.configMaps.size + refs.secrets.size + refs.tokens.size === 0;
    if (empty && !this.#pods.has(msg.uid)) {
      this.#o.inner.send(msg);
      return;
    }
    this.#track(msg, refs);
    this.#o.inner.send(empty ? msg : { ...msg, apiObjects: this.#snapshot(msg.uid) });
  }

  stats(): Promise<WorkerThreadStats[]> {
    return this.#o.inner.stats();
  }

  async close(): Promise<void> {
    for (const uid of [...this.#pods.keys()]) this.#release(uid);
    await this.#o.inner.close();
  }

  /** A watched object changed: resync every pod referring to it. */
  objectChanged(resource: NamespacedObjectResource, namespace: string, name: string): void {
    for (const uid of this.#byObject.get(ObjectWatches.key(resource, namespace, name)) ?? []) this.#resync(uid);
  }

  /** A pod's token changed: resync it. */
  tokenChanged(uid: string): void {
    this.#resync(uid);
  }

  #resync(uid: string): void {
    const t = this.#pods.get(uid);
    if (!t) return;
    this.#o.inner.send({ kind: 'update', uid, updateType: 'sync', pod: t.last.pod, apiObjects: this.#snapshot(uid) });
  }

  #track(msg: PodUpdateMessage, refs: PodObjectRefs): void {
    const pod = msg.pod;
    const namespace = pod.metadata?.namespace ?? '';
    const prev = this.#pods.get(msg.uid);
    const keysOf = (r: PodObjectRefs | undefined, ns: string): Set<string> =>
      new Set([...(r?.configMaps ?? [])].map((n) => ObjectWatches.key('configmaps', ns, n)).concat([...(r?.secrets ?? [])].map((n) => ObjectWatches.key('secrets', ns, n))));
    const before = keysOf(prev?.refs, prev?.namespace ?? namespace);
    const after = keysOf(refs, namespace);
    for (const k of after) if (!before.has(k)) this.#acquire(k, msg.uid);
    for (const k of before) if (!after.has(k)) this.#releaseKey(k, msg.uid);
    this.#pods.set(msg.uid, { namespace, refs, last: msg });
    this.#o.tokens.setPodTokens(tokenPod(pod), refs.tokens);
  }

  #acquire(key: string, uid: string): void {
    const [resource, ns, name] = splitKey(key);
    let pods = this.#byObject.get(key);
    if (!pods) this.#byObject.set(key, (pods = new Set()));
    pods.add(uid);
    this.#o.watches.acquire(resource, ns, name);
  }

  #releaseKey(key: string, uid: string): void {
    const [resource, ns, name] = splitKey(key);
    const pods = this.#byObject.get(key);
    pods?.delete(uid);
    if (pods?.size === 0) this.#byObject.delete(key);
    this.#o.watches.release(resource, ns, name);
  }

  #release(uid: string): void {
    const t = this.#pods.get(uid);
    if (!t) return;
    for (const n of t.refs.configMaps) this.#releaseKey(ObjectWatches.key('configmaps', t.namespace, n), uid);
    for (const n of t.refs.secrets) this.#releaseKey(ObjectWatches.key('secrets', t.namespace, n), uid);
    this.#o.tokens.releasePod(uid);
    this.#pods.delete(uid);
  }

  #snapshot(uid: string): PodApiObjects {
    const t = this.#pods.get(uid)!;
    const w = this.#o.watches;
    return {
      configMaps: new Map([...t.refs.configMaps].map((n) => [n, w.lookup('configmaps', t.namespace, n) as ObjectLookup<ConfigMapContents>])),
      secrets: new Map([...t.refs.secrets].map((n) => [n, w.lookup('secrets', t.namespace, n) as ObjectLookup<SecretContents>])),
      tokens: new Map([...t.refs.tokens.keys()].map((k) => [k, this.#o.tokens.lookup(uid, k)])),
    };
  }
}

function tokenPod(pod: V1Pod): { uid: string; name: string; namespace: string; serviceAccountName: string } {
  return { uid: pod.metadata?.uid ?? '', name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', serviceAccountName: pod.spec?.serviceAccountName || 'default' };
}

function splitKey(key: string): [NamespacedObjectResource, string, string] {
  const [resource, ns, ...rest] = key.split('/');
  return [resource as NamespacedObjectResource, ns ?? '', rest.join('/')];
}
