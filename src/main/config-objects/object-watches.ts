/**
 * The shared, watch-based sources of configMaps and secrets (the kubelet's watch-based
 * configmap/secret managers): ONE list+watch per referenced object (namespace, name), reference
 * counted by the pods that use it, closed when the last one lets go. Each runs the same
 * reflector as the pod source (pod-reflector.ts: 410 → relist, backoff 800 ms → 30 s) over the
 * API client's single-object list-watcher, so every request goes through the main client's QPS
 * budget and the Node authorizer sees only objects this node's pods refer to.
 *
 * State per object: pending (nothing listed yet) → found / missing (the list or a watch event
 * said so); a change calls `onChange(resource, namespace, name)` once per batch of events.
 * While the API server is unreachable the last state is kept.
 */
import type { Clock, Random } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { NamespacedObjectResource, ObjectListWatchers, WatchEvent } from '../apiserver/api-roles.js';
import { PodReflector } from '../apiserver/pod-reflector.js';
import type { ConfigMapContents, ObjectLookup, SecretContents } from '../../shared/protocol/api-object-snapshot.js';

export type ObjectContents = ConfigMapContents | SecretContents;

export interface ObjectWatchesOptions {
  lw: ObjectListWatchers;
  clock: Clock;
  random: Random;
  logger: Logger;
  onChange(resource: NamespacedObjectResource, namespace: string, name: string): void;
}

interface Watched {
  refs: number;
  reflector: PodReflector;
  lookup: ObjectLookup<ObjectContents>;
  resourceVersion: string;
  changed: boolean;
}

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof v !== 'object' || v === null) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/** The contents of a raw configMap/secret object. */
function decode(resource: NamespacedObjectResource, raw: Record<string, unknown>): ObjectContents {
  return resource === 'configmaps' ? { data: stringMap(raw['data']), binaryData: stringMap(raw['binaryData']) } : { data: stringMap(raw['data']) };
}

function rvOf(raw: unknown): string {
  const rv = (raw as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
  return typeof rv === 'string' ? rv : '';
}

export class ObjectWatches {
  readonly #o: ObjectWatchesOptions;
  readonly #watched = new Map<string, Watched>();

  constructor(opts: ObjectWatchesOptions) {
    if (!opts?.lw || !opts.clock || !opts.logger || typeof opts.onChange !== 'function') throw new TypeError('ObjectWatches: lw, clock, logger and onChange are required');
    this.#o = opts;
  }

  static key(resource: NamespacedObjectResource, namespace: string, name: string): string {
    return `${resource}/${namespace}/${name}`;
  }

  /** Objects watched now (one watch each). */
  get size(): number {
    return this.#watched.size;
  }

  /** One more pod refers to the object: starts its watch if it is the first. */
  acquire(resource: NamespacedObjectResource, namespace: string, name: string): void {
    const key = ObjectWatches.key(resource, namespace, name);
    const w = this.#watched.get(key);
    if (w) {
      w.refs++;
      return;
    }
    const entry: Watched = { refs: 1, lookup: { state: 'pending' }, resourceVersion: '', changed: false, reflector: undefined as unknown as PodReflector };
    entry.reflector = new PodReflector({
      lw: this.#o.lw.objectListWatcher(resource, namespace, name),
      clock: this.#o.clock,
      random: this.#o.random,
      logger: this.#o.logger.with({ watch: key }),
      // One object per watch: a batch end costs one resync of its pods, so there is nothing to
      // coalesce (the pod source's 50 ms window exists for its O(pods) merge).
      batchWindowMs: 0,
      onList: (items) => {
        const raw = items.find((i) => typeof i === 'object' && i !== null) as Record<string, unknown> | undefined;
        this.#set(entry, raw === undefined ? { state: 'missing' } : { state: 'found', object: decode(resource, raw) }, raw === undefined ? '' : rvOf(raw));
      },
      onEvent: (ev: WatchEvent) => {
        if (ev.type === 'DELETED') this.#set(entry, { state: 'missing' }, '');
        else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.#set(entry, { state: 'found', object: decode(resource, ev.object) }, rvOf(ev.object));
      },
      onBatchEnd: () => {
        if (!entry.changed || this.#watched.get(key) !== entry) return;
        entry.changed = false;
        this.#o.onChange(resource, namespace, name);
      },
    });
    this.#watched.set(key, entry);
    entry.reflector.start();
  }

  /** One pod fewer refers to the object: its watch is closed with the last one. */
  release(resource: NamespacedObjectResource, namespace: string, name: string): void {
    const key = ObjectWatches.key(resource, namespace, name);
    const w = this.#watched.get(key);
    if (!w) return;
    if (--w.refs > 0) return;
    this.#watched.delete(key);
    void w.reflector.close();
  }

  lookup(resource: NamespacedObjectResource, namespace: string, name: string): ObjectLookup<ObjectContents> {
    return this.#watched.get(ObjectWatches.key(resource, namespace, name))?.lookup ?? { state: 'pending' };
  }

  /** Closes every watch. Idempotent. */
  async close(): Promise<void> {
    const all = [...this.#watched.values()];
    this.#watched.clear();
    await Promise.allSettled(all.map((w) => w.reflector.close()));
  }

  #set(entry: Watched, lookup: ObjectLookup<ObjectContents>, rv: string): void {
    const same = entry.lookup.state === lookup.state && (lookup.state !== 'found' || (rv !== '' && rv === entry.resourceVersion));
    entry.lookup = lookup;
    entry.resourceVersion = rv;
    if (!same) entry.changed = true;
  }
}
