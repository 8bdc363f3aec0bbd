/**
 * The API-server pod source (pkg/kubelet/config/apiserver.go): a reflector (list + watch of the
 * pods with `spec.nodeName=<nodeName>`, all namespaces; src/main/apiserver/pod-reflector.ts) feeding
 * a store, which delivers the complete set of those pods as a SET on every change, under source
 * name "api" (the kubelet's UndeltaStore). The first SET follows the first list, even when
 * empty, so PodConfig.sourcesReady() can become true. While the API server is unreachable no
 * SET is delivered: the merger keeps the last one, so running pods keep running and nothing
 * is cleaned up.
 *
 * API pods keep their own uid, name and annotations (no static-pod conventions); they go through
 * the manifests' defaults and validation (api-pod-decode.ts), and an invalid one is reported
 * with its field and left out (or, if an earlier version was valid, that version is kept).
 *
 * Invariant: a pod whose resourceVersion did not change is handed to the merger as the very
 * same object as last time (the merger's cheap "unchanged" check), so a relist after 410 costs
 * a decode only for pods that changed and restarts nothing.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock, Random } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { PodListWatcher, WatchEvent } from '../apiserver/api-roles.js';
import { PodReflector, type ReflectorState } from '../apiserver/pod-reflector.js';
import { decodeApiPod } from './api-pod-decode.js';
import type { ConfigErrorHandler } from '../../shared/manifest/config-errors.js';
import { ApiserverSource, type PodSetSink, type PodSource } from '../../shared/manifest/pod-update.js';

export interface ApiserverSourceOptions {
  lw: PodListWatcher;
  nodeName: string;
  sink: PodSetSink;
  clock: Clock;
  random: Random;
  logger: Logger;
  onError?: ConfigErrorHandler;
  onState?: (s: ReflectorState) => void;
  /** See ReflectorDeps.batchWindowMs. */
  batchWindowMs?: number;
}

interface StoredPod {
  resourceVersion: string;
  pod: V1Pod;
}

function metaOf(raw: unknown): { uid: string; resourceVersion: string } {
  const m = (raw as { metadata?: { uid?: unknown; resourceVersion?: unknown } } | null)?.metadata;
  return { uid: typeof m?.uid === 'string' ? m.uid : '', resourceVersion: typeof m?.resourceVersion === 'string' ? m.resourceVersion : '' };
}

export class ApiserverPodSource implements PodSource {
  readonly name = ApiserverSource;
  readonly #o: ApiserverSourceOptions;
  readonly #reflector: PodReflector;
  #store = new Map<string, StoredPod>();
  /** uid|resourceVersion of the last invalid version reported, so each bad version is logged once. */
  readonly #reported = new Set<string>();

  constructor(opts: ApiserverSourceOptions) {
    if (!opts?.lw || !opts.sink || !opts.clock || !opts.logger) throw new TypeError('ApiserverPodSource: lw, sink, clock and logger are required');
    this.#o = opts;
    this.#reflector = new PodReflector({
      lw: opts.lw,
      clock: opts.clock,
      random: opts.random,
      logger: opts.logger,
      onList: (items) => this.#replace(items),
      onEvent: (ev) => this.#apply(ev),
      onBatchEnd: () => this.#publish(),
      ...(opts.onState ? { onState: opts.onState } : {}),
      ...(opts.batchWindowMs !== undefined ? { batchWindowMs: opts.batchWindowMs } : {}),
    });
  }

  get reflectorState(): ReflectorState {
    return this.#reflector.state;
  }

  start(): void {
    this.#reflector.start();
  }

  close(): Promise<void> {
    return this.#reflector.close();
  }

  #decode(raw: unknown, previous: StoredPod | undefined): StoredPod | undefined {
    const { uid, resourceVersion } = metaOf(raw);
    if (previous !== undefined && resourceVersion !== '' && previous.resourceVersion === resourceVersion) return previous;
    const r = decodeApiPod(raw, this.#o.nodeName);
    if (r.ok) return { resourceVersion, pod: r.pod };
    const key = `${uid}|${resourceVersion}`;
    if (!this.#reported.has(key)) {
      if (this.#reported.size > 10_000) this.#reported.clear();
      this.#reported.add(key);
      this.#o.logger.error('API pod failed validation, ignoring this version', { source: ApiserverSource, error: r.error.message, code: r.error.code });
      this.#o.onError?.(r.error);
    }
    return previous;
  }

  #replace(items: readonly unknown[]): void {
    const next = new Map<string, StoredPod>();
    for (const raw of items) {
      const { uid } = metaOf(raw);
      const stored = this.#decode(raw, this.#store.get(uid));
      if (stored !== undefined && uid !== '') next.set(uid, stored);
    }
    this.#store = next;
  }

  #apply(ev: WatchEvent): void {
    const { uid } = metaOf(ev.object);
    if (uid === '') return;
    if (ev.type === 'DELETED') {
      this.#store.delete(uid);
      return;
    }
    const stored = this.#decode(ev.object, this.#store.get(uid));
    if (stored !== undefined) this.#store.set(uid, stored);
  }

  #publish(): void {
    const pods: V1Pod[] = [];
    for (const s of this.#store.values()) pods.push(s.pod);
    this.#o.sink.set(pods);
  }
}
