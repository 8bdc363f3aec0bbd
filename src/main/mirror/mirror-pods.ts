/**
 * Mirror pods (the kubelet's pkg/kubelet/pod/mirror_client.go and the static-pod branch of
 * syncPod / HandlePodCleanups): each static pod (file or URL source) gets a pod object in the API
 * so `kubectl get pods` lists it, carrying its status.
 *
 * Reconciliation, by full name (namespace/name), between the desired static pods and the mirror
 * pods the API source observed (split off the API pod set: a mirror pod is never run as a pod):
 *   - static pod, no mirror                        → create (once the Node's UID is known)
 *   - mirror being deleted (deletionTimestamp, a user's `kubectl delete`), or whose
 *     kubernetes.io/config.mirror ≠ the static pod's config hash (the manifest changed)
 *                                                  → delete it (grace 0, UID precondition),
 *                                                    then create once it is gone
 *   - mirror without a static pod (manifest removed, or left from an earlier run) → delete
 * A mirror is created with the static pod's metadata and spec, the annotation
 * kubernetes.io/config.mirror = config hash, and exactly one controller ownerReference to the
 * Node with its UID (NodeRestriction refuses anything else).
 *
 * Invariants: at most one request per full name in flight; after a create or delete succeeded,
 * the name is left alone until the watch shows its result (or `settleMs` passed: a lost event
 * must not wedge it), so a slow watch never causes a duplicate create or a second delete.
 * Failures are retried at the next reconcile (every `periodMs` and on every mirror set change).
 *
 * Status: statuses of static pods come here (StaticStatusSink) and go to the API status writer
 * under the current mirror's identity; a newly observed mirror gets the newest status at once.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { podFields } from '../../shared/logging/logger.js';
import { apiErrorMessage, isConflict, isNotFound } from '../apiserver/api-errors.js';
import type { PodDeleter } from '../apiserver/api-roles.js';
import type { MirrorPodCreator } from '../apiserver/object-roles.js';
import type { PodSetSink } from '../../shared/manifest/pod-update.js';
import { ConfigHashAnnotationKey, ConfigMirrorAnnotationKey } from '../../shared/kubetypes/kubelet-labels.js';
import type { ApiStatusSink } from '../status/api-status-sync.js';
import { nextBackoffMs } from '../../shared/backoff/exponential-backoff.js';

/** What the status manager forwards for static pods. */
export interface StaticStatusSink {
  setStatus(pod: V1Pod, status: V1PodStatus): void;
  forget(uid: string): void;
}

export interface MirrorPodManagerDeps {
  creator: MirrorPodCreator;
  deleter: PodDeleter;
  /** Where mirror statuses are written (the API status writer). */
  statusSink: ApiStatusSink;
  /** The static pods that should have a mirror now. */
  desired: () => Iterable<V1Pod>;
  nodeName: string;
  /** The Node's UID once registered. */
  nodeUid: () => string | undefined;
  clock: Clock;
  logger: Logger;
  periodMs?: number;
  settleMs?: number;
  onOperation?: (op: 'create' | 'delete', result: 'ok' | 'failed') => void;
}

export const MIRROR_DEFAULTS = Object.freeze({ periodMs: 2_000, settleMs: 30_000 });

export function isMirrorPod(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[ConfigMirrorAnnotationKey] !== undefined;
}

function fullName(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

function configHash(pod: V1Pod): string {
  return pod.metadata?.annotations?.[ConfigHashAnnotationKey] ?? pod.metadata?.uid ?? '';
}

/** The mirror pod to POST for `pod` (kubelet CreateMirrorPod). */
export function mirrorPodOf(pod: V1Pod, nodeName: string, nodeUid: string): Record<string, unknown> {
  const { uid: _uid, resourceVersion: _rv, ownerReferences: _or, creationTimestamp: _ct, ...meta } = pod.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...meta,
      annotations: { ...(pod.metadata?.annotations ?? {}), [ConfigMirrorAnnotationKey]: configHash(pod) },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid, controller: true }],
    },
    spec: pod.spec,
  };
}

/**
 * A name left alone until the watch shows the result of a request (or until `untilMs`); after a
 * failure ('failed'), until its backoff expires (2 s doubling to 1 min per name, so a refusal such
 * as NodeRestriction's is retried slowly and logged once per distinct error).
 */
type Settling = { kind: 'created' | 'deleted'; uid: string; untilMs: number } | { kind: 'failed'; untilMs: number };

export class MirrorPodManager implements StaticStatusSink {
  readonly #d: MirrorPodManagerDeps;
  /** Mirrors as last observed through the API source, by full name. */
  #observed = new Map<string, V1Pod>();
  readonly #inFlight = new Set<string>();
  readonly #settling = new Map<string, Settling>();
  /** Newest status of each static pod (by static pod UID), and which mirror UID it was last given to. */
  readonly #statuses = new Map<string, { pod: V1Pod; status: V1PodStatus; mirrorUid: string | undefined }>();
  /** Per full name: the current failure backoff and the last error logged. */
  readonly #failures = new Map<string, { backoffMs: number; error: string }>();
  #timer: TimerHandle | undefined;
  #stopped = false;
  #pending: Promise<void>[] = [];

  constructor(deps: MirrorPodManagerDeps) {
    this.#d = deps;
  }

  /**
   * Wraps the API source's sink: mirror pods go to this manager, every other pod to `sink`.
   * (The same pod objects pass through, so the merger's "unchanged" check still holds.)
   */
  splitSink(sink: PodSetSink): PodSetSink {
    return {
      set: (pods) => {
        const regular: V1Pod[] = [];
        const mirrors: V1Pod[] = [];
        for (const p of pods) (isMirrorPod(p) ? mirrors : regular).push(p);
        sink.set(regular);
        this.setObserved(mirrors);
      },
    };
  }

  /** The mirror pods the API holds for this node now (a complete set). */
  setObserved(mirrors: readonly V1Pod[]): void {
    const next = new Map<string, V1Pod>();
    for (const m of mirrors) next.set(fullName(m), m);
    for (const [name, old] of this.#observed) {
      const now = next.get(name);
      if (now?.metadata?.uid !== old.metadata?.uid && old.metadata?.uid) this.#d.statusSink.forget(old.metadata.uid);
    }
    this.#observed = next;
    this.reconcile();
  }

  start(): void {
    const tick = (): void => {
      if (this.#stopped) return;
      this.reconcile();
      this.#timer = this.#d.clock.setTimer(this.#d.periodMs ?? MIRROR_DEFAULTS.periodMs, tick, { unref: true });
    };
    tick();
  }

  async close(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    await Promise.allSettled(this.#pending);
  }

  /** Requests started by reconciliations, settled (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#pending.length > 0) await Promise.allSettled(this.#pending);
  }

  setStatus(pod: V1Pod, status: V1PodStatus): void {
    const uid = pod.metadata?.uid ?? '';
    if (uid === '') return;
    const rec = { pod, status, mirrorUid: undefined as string | undefined };
    this.#statuses.set(uid, rec);
    this.#forwardStatus(rec);
  }

  forget(uid: string): void {
    this.#statuses.delete(uid);
  }

  /** The status goes to the mirror of the same config hash, if the API has it. */
  #forwardStatus(rec: { pod: V1Pod; status: V1PodStatus; mirrorUid: string | undefined }): void {
    const mirror = this.#observed.get(fullName(rec.pod));
    if (mirror === undefined || !this.#current(mirror, rec.pod)) return;
    rec.mirrorUid = mirror.metadata?.uid;
    this.#d.statusSink.setStatus(mirror, rec.status);
  }

  #current(mirror: V1Pod, pod: V1Pod): boolean {
    const dt = mirror.metadata?.deletionTimestamp;
    return (dt === undefined || dt === null) && mirror.metadata?.annotations?.[ConfigMirrorAnnotationKey] === configHash(pod);
  }

  /** One pass over desired static pods and observed mirrors; starts the requests needed. */
  reconcile(): void {
    if (this.#stopped) return;
    const now = this.#d.clock.monotonic();
    for (const [name, s] of this.#settling) {
      const seen = this.#observed.get(name)?.metadata?.uid;
      const settled = s.kind === 'failed' ? false : s.kind === 'created' ? seen === s.uid : seen !== s.uid;
      if (settled || now >= s.untilMs) this.#settling.delete(name);
    }
    const desired = new Map<string, V1Pod>();
    for (const p of this.#d.desired()) desired.set(fullName(p), p);
    for (const [name, pod] of desired) {
      if (this.#inFlight.has(name) || this.#settling.has(name)) continue;
      const mirror = this.#observed.get(name);
      if (mirror !== undefined && !this.#current(mirror, pod)) this.#delete(name, mirror, 'outdated or being deleted');
      else if (mirror === undefined) this.#create(name, pod);
      else {
        // A mirror seen for the first time (or re-created): give it the newest status.
        const rec = this.#statuses.get(pod.metadata?.uid ?? '');
        if (rec !== undefined && rec.mirrorUid !== mirror.metadata?.uid) this.#forwardStatus(rec);
      }
    }
    for (const [name, mirror] of this.#observed) {
      if (desired.has(name) || this.#inFlight.has(name) || this.#settling.has(name)) continue;
      this.#delete(name, mirror, 'its static pod is gone');
    }
  }

  #succeeded(name: string): void {
    this.#failures.delete(name);
  }

  /** Backs the name off; logs at error only when the error differs from the last one. */
  #failed(name: string, what: string, pod: V1Pod, err: unknown): void {
    const error = apiErrorMessage(err);
    const prev = this.#failures.get(name);
    const backoffMs = prev === undefined ? (this.#d.periodMs ?? MIRROR_DEFAULTS.periodMs) : nextBackoffMs(prev.backoffMs, { maxMs: 60_000 });
    this.#failures.set(name, { backoffMs, error });
    this.#settling.set(name, { kind: 'failed', untilMs: this.#d.clock.monotonic() + backoffMs });
    if (prev?.error !== error) this.#d.logger.error(`${what}; retrying with backoff`, { ...podFields(pod), error, backoffMs });
    else this.#d.logger.v(2).info(`${what} again`, { ...podFields(pod), backoffMs });
  }

  #run(name: string, work: () => Promise<void>): void {
    this.#inFlight.add(name);
    const p = work().finally(() => {
      this.#inFlight.delete(name);
      this.#pending = this.#pending.filter((x) => x !== p);
    });
    this.#pending.push(p);
  }

  #create(name: string, pod: V1Pod): void {
    const nodeUid = this.#d.nodeUid();
    if (nodeUid === undefined) return;
    this.#run(name, async () => {
      try {
        const { uid } = await this.#d.creator.createPod(mirrorPodOf(pod, this.#d.nodeName, nodeUid));
        this.#settling.set(name, { kind: 'created', uid, untilMs: this.#d.clock.monotonic() + (this.#d.settleMs ?? MIRROR_DEFAULTS.settleMs) });
        this.#succeeded(name);
        this.#d.onOperation?.('create', 'ok');
        this.#d.logger.v(2).info('mirror pod created', { ...podFields(pod), mirrorUID: uid });
      } catch (err) {
        this.#d.onOperation?.('create', 'failed');
        // 409: a pod of that name exists but is not seen yet (or is not a mirror): back off too.
        this.#failed(name, isConflict(err) ? 'mirror pod name taken' : 'mirror pod create failed', pod, err);
      }
    });
  }

  #delete(name: string, mirror: V1Pod, why: string): void {
    const uid = mirror.metadata?.uid ?? '';
    const ns = mirror.metadata?.namespace ?? '';
    const podName = mirror.metadata?.name ?? '';
    if (uid === '' || ns === '' || podName === '') return;
    this.#run(name, async () => {
      try {
        await this.#d.deleter.deletePod({ namespace: ns, name: podName, uid });
        this.#succeeded(name);
        this.#d.onOperation?.('delete', 'ok');
        this.#d.logger.v(2).info('mirror pod deleted', { ...podFields(mirror), reason: why });
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) {
          this.#d.onOperation?.('delete', 'failed');
          this.#failed(name, 'mirror pod delete failed', mirror, err);
          return;
        }
      }
      this.#settling.set(name, { kind: 'deleted', uid, untilMs: this.#d.clock.monotonic() + (this.#d.settleMs ?? MIRROR_DEFAULTS.settleMs) });
    });
  }
}
