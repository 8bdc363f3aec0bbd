/**
 * The latest API status of each pod, as computed by its pod worker (or by admission for a
 * rejected pod). Main thread only. Serves /pods and records pod start latency, once per pod:
 *   - the first time the pod is reported Running, it logs "pod running" with seenToRunningMs
 *     (manifest first seen → running in the agent's status) and calls onPodRunning
 *     (kubelet_pod_start_duration_seconds);
 *   - the first time every app container is reported running (the kubelet's startup latency
 *     tracker: all containers started), it calls onPodStartedSLI with the pod start SLI
 *     (kubelet_pod_start_sli_duration_seconds): from the pod's creationTimestamp to now, minus
 *     the time spent pulling images and running init containers. Pods from files and URLs have
 *     no creationTimestamp (no API server stamped them): the first-seen annotation stands in.
 *     The two excluded windows may overlap (init containers pull their images between runs);
 *     their union is excluded, so no time is subtracted twice.
 * In cluster mode, statuses of pods from the API source (and their termination) are also handed
 * to an {@link ApiStatusSink} (api-status-sync.ts), which writes them to the API server.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { ImagePullWindow } from '../../shared/protocol/pod-worker-protocol.js';
import type { Clock } from '../../shared/clock/clock.js';
import { ConfigFirstSeenAnnotationKey, ConfigSourceAnnotationKey } from '../../shared/kubetypes/kubelet-labels.js';
import { ApiserverSource } from '../../shared/manifest/pod-update.js';
import type { ApiStatusSink } from './api-status-sync.js';
import type { StaticStatusSink } from '../mirror/mirror-pods.js';
import { isStaticPod } from '../pod-manager/pod-manager.js';
import type { Logger } from '../../shared/logging/logger.js';
import { podFields } from '../../shared/logging/logger.js';
import { deepFreeze } from '../../shared/immutable/deep-freeze.js';

export interface StatusManagerDeps {
  clock: Clock;
  logger: Logger;
  onPodRunning?: (pod: V1Pod, seenToRunningSeconds: number) => void;
  onPodStartedSLI?: (pod: V1Pod, sliSeconds: number) => void;
  /** Cluster mode: where statuses of API pods go. */
  apiSink?: ApiStatusSink;
  /** Cluster mode: where statuses of static pods go (their mirror pods, src/main/mirror/). */
  staticSink?: StaticStatusSink;
}

function isApiPod(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[ConfigSourceAnnotationKey] === ApiserverSource;
}

interface StatusRecord {
  status: V1PodStatus;
  /** Set once the pod was first reported Running. */
  runningSeen: boolean;
  /** Set once every app container was first reported running. */
  startedSeen: boolean;
  /** The latest image pull window its pod worker reported. */
  pullWindow: ImagePullWindow | undefined;
}

export class StatusManager {
  readonly #d: StatusManagerDeps;
  readonly #statuses = new Map<string, StatusRecord>();
  /** podsWithStatus's last item per pod object (dropped with the pod object). */
  readonly #items = new WeakMap<V1Pod, V1Pod>();

  constructor(deps: StatusManagerDeps) {
    this.#d = deps;
  }

  setStatus(pod: V1Pod, status: V1PodStatus, pullWindow?: ImagePullWindow): void {
    // Frozen: a status is replaced, never changed, once here (podsWithStatus and /pods reuse
    // what they built from it while the same object stays current). It is the pod worker's
    // structured-clone copy, or admission's own: no other holder's object is frozen.
    deepFreeze(status);
    const uid = pod.metadata?.uid ?? '';
    let rec = this.#statuses.get(uid);
    if (!rec) this.#statuses.set(uid, (rec = { status, runningSeen: false, startedSeen: false, pullWindow: undefined }));
    rec.status = status;
    if (pullWindow) rec.pullWindow = pullWindow;
    if (this.#d.apiSink && isApiPod(pod)) this.#d.apiSink.setStatus(pod, status);
    else if (this.#d.staticSink && isStaticPod(pod)) this.#d.staticSink.setStatus(pod, status);
    if (!rec.startedSeen && allContainersRunning(pod, status)) {
      rec.startedSeen = true;
      const sli = podStartSLISeconds(pod, status, rec.pullWindow, this.#d.clock.now());
      if (sli !== undefined) this.#d.onPodStartedSLI?.(pod, sli);
    }
    if (!rec.runningSeen && status.phase === 'Running') {
      rec.runningSeen = true;
      const seen = Date.parse(pod.metadata?.annotations?.[ConfigFirstSeenAnnotationKey] ?? '');
      const seenToRunningMs = Number.isFinite(seen) ? Math.max(0, this.#d.clock.now() - seen) : -1;
      this.#d.logger.v(2).info('pod running', { ...podFields(pod), seenToRunningMs });
      if (seenToRunningMs >= 0) this.#d.onPodRunning?.(pod, seenToRunningMs / 1000);
    }
  }

  get(uid: string): V1PodStatus | undefined {
    return this.#statuses.get(uid)?.status;
  }

  /** The pod's worker stopped every container for good. */
  podTerminated(pod: V1Pod): void {
    if (this.#d.apiSink && isApiPod(pod)) this.#d.apiSink.podTerminated(pod);
  }

  remove(uid: string): void {
    this.#statuses.delete(uid);
    this.#d.apiSink?.forget(uid);
    this.#d.staticSink?.forget(uid);
  }

  /**
   * The pods with their current status (a v1 PodList's items). An item is frozen and is the same
   * object from call to call while its pod and its status are (both are replaced, never changed,
   * on update), so a reader may cache what it derives from an item by identity (/pods caches each
   * item's JSON: at 5,000 pods serializing them all held the main thread ~200 ms per request).
   */
  podsWithStatus(pods: Iterable<V1Pod>): V1Pod[] {
    const out: V1Pod[] = [];
    for (const pod of pods) {
      const status = this.#statuses.get(pod.metadata?.uid ?? '')?.status ?? pod.status ?? PENDING;
      const last = this.#items.get(pod);
      if (last !== undefined && last.status === status) {
        out.push(last);
        continue;
      }
      const item = Object.freeze({ ...pod, status });
      this.#items.set(pod, item);
      out.push(item);
    }
    return out;
  }
}

const PENDING: V1PodStatus = Object.freeze({ phase: 'Pending' });

function allContainersRunning(pod: V1Pod, status: V1PodStatus): boolean {
  const want = pod.spec?.containers.length ?? 0;
  const statuses = status.containerStatuses ?? [];
  if (want === 0 || statuses.length < want) return false;
  return statuses.every((c) => c.state?.running !== undefined && c.state.running !== null);
}

function timeMs(t: Date | string | undefined | null): number {
  if (t === undefined || t === null) return Number.NaN;
  return t instanceof Date ? t.getTime() : Date.parse(t);
}

/**
 * The pod start SLI in seconds at `nowMs` (see the module comment), or undefined when the pod
 * has no start reference (neither creationTimestamp nor the first-seen annotation).
 */
export function podStartSLISeconds(pod: V1Pod, status: V1PodStatus, pull: ImagePullWindow | undefined, nowMs: number): number | undefined {
  let createdMs = timeMs(pod.metadata?.creationTimestamp);
  if (!Number.isFinite(createdMs)) createdMs = timeMs(pod.metadata?.annotations?.[ConfigFirstSeenAnnotationKey]);
  if (!Number.isFinite(createdMs)) return undefined;
  const windows: Array<[number, number]> = [];
  if (pull?.lastFinishedMs !== undefined && pull.lastFinishedMs >= pull.firstStartedMs) windows.push([pull.firstStartedMs, pull.lastFinishedMs]);
  let initStart = Infinity;
  let initEnd = -Infinity;
  for (const c of status.initContainerStatuses ?? []) {
    const t = c.state?.terminated ?? c.lastState?.terminated;
    const s = timeMs(t?.startedAt);
    const e = timeMs(t?.finishedAt);
    if (Number.isFinite(s) && Number.isFinite(e) && e >= s) {
      initStart = Math.min(initStart, s);
      initEnd = Math.max(initEnd, e);
    }
  }
  if (initEnd >= initStart) windows.push([initStart, initEnd]);
  return Math.max(0, nowMs - createdMs - unionLengthMs(windows)) / 1000;
}

/** Total length of the union of closed intervals. */
function unionLengthMs(windows: Array<[number, number]>): number {
  windows.sort((a, b) => a[0] - b[0]);
  let total = 0;
  let curStart = -Infinity;
  let curEnd = -Infinity;
  for (const [s, e] of windows) {
    if (s > curEnd) {
      if (curEnd > curStart) total += curEnd - curStart;
      curStart = s;
      curEnd = e;
    } else curEnd = Math.max(curEnd, e);
  }
  if (curEnd > curStart) total += curEnd - curStart;
  return total;
}
