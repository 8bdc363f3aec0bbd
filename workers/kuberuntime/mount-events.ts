/**
 * FailedMount events of pods waiting for their volumes, at the kubelet's cadence rather than
 * one per sync.
 *
 * The kubelet records two kinds of FailedMount (Warning) events for a pod whose volume cannot
 * be set up (e.g. a configMap volume naming a configMap that does not exist):
 *   - per failed volume, from the volume reconciler's MountVolume.SetUp operation:
 *     `MountVolume.SetUp failed for volume "NAME" : DETAIL`. The operation is retried with
 *     exponential backoff (nestedpendingoperations: 500 ms doubling to 2 m 2 s), one event per
 *     failed attempt;
 *   - per pod, from syncPod when WaitForAttachAndMount gives up after 2 m 3 s:
 *     `Unable to attach or mount volumes: unmounted volumes=[a b], unattached volumes=[]: timed
 *     out waiting for the condition` (shardlet has no attach step: "unattached" is always empty).
 *
 * shardlet's syncPod does not block: a waiting pod is synced again every volumeRetryMs (2 s) and
 * on every change of its configMaps/secrets. Recording on every sync would write an event per
 * sync; this gate rebuilds the kubelet's cadence from the failures each sync reports:
 *   - a volume's event is recorded at its first failure, when its message changes, and then
 *     whenever its backoff (500 ms, doubling, capped at 2 m 2 s) has elapsed;
 *   - the pod's "Unable to attach or mount volumes" event when it has waited 2 m 3 s since its
 *     first failure, then again every 2 m 3 s while it still waits.
 * What passes the gate still goes through the main thread's recorder (dedupe into one Event
 * with a count, spam filter per pod).
 *
 * Objects still on their way are not failures: while any configMap, secret or token the pod
 * refers to is `pending` in its snapshot (the main thread has not delivered it yet: a watch not
 * yet listed, a TokenRequest waiting for its turn in the QPS budget), no per-volume event is
 * recorded. The kubelet is silent there too: its SetUp waits inside the object fetch or the
 * client's rate limiter (a 1,000-pod burst with service-account volumes would otherwise write a
 * FailedMount per pod). The wait still counts toward the 2 m 3 s "Unable to attach" event.
 *
 * State per pod (this thread's pods only), dropped when the pod's volumes are all set up
 * (`mounted`) or the pod is forgotten. Time is the injected clock's monotonic time.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../src/shared/clock/clock.js';
import type { PodApiObjects } from '../../src/shared/protocol/api-object-snapshot.js';
import { PodEventReason, type PodEventRecorder } from './pod-events.js';
import { nextBackoffMs } from '../../src/shared/backoff/exponential-backoff.js';

export const MOUNT_EVENT_DEFAULTS = Object.freeze({
  /** nestedpendingoperations' initialDurationBeforeRetry. */
  initialBackoffMs: 500,
  /** nestedpendingoperations' maxDurationBeforeRetry (2 m 2 s). */
  maxBackoffMs: 122_000,
  /** The volume manager's podAttachAndMountTimeout (2 m 3 s). */
  waitTimeoutMs: 123_000,
});

/** One volume that failed to set up, with its event message. */
export interface VolumeFailure {
  volume: string;
  message: string;
}

interface VolumeGate {
  message: string;
  backoffMs: number;
  /** Monotonic ms before which the same message is not recorded again. */
  quietUntil: number;
}

interface PodGate {
  /** Monotonic ms of the first failure of the current wait. */
  since: number;
  /** Monotonic ms of the last "Unable to attach or mount volumes" event (undefined: none yet). */
  lastTimeoutEvent: number | undefined;
  volumes: Map<string, VolumeGate>;
}

export interface MountEventsDeps {
  clock: Clock;
  recorder: PodEventRecorder;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  waitTimeoutMs?: number;
}

export class MountEvents {
  readonly #clock: Clock;
  readonly #record: PodEventRecorder;
  readonly #o: { initialBackoffMs: number; maxBackoffMs: number; waitTimeoutMs: number };
  readonly #pods = new Map<string, PodGate>();

  constructor(deps: MountEventsDeps) {
    if (typeof deps?.clock?.monotonic !== 'function' || typeof deps.recorder !== 'function') throw new TypeError('MountEvents: clock and recorder are required');
    this.#clock = deps.clock;
    this.#record = deps.recorder;
    this.#o = {
      initialBackoffMs: deps.initialBackoffMs ?? MOUNT_EVENT_DEFAULTS.initialBackoffMs,
      maxBackoffMs: deps.maxBackoffMs ?? MOUNT_EVENT_DEFAULTS.maxBackoffMs,
      waitTimeoutMs: deps.waitTimeoutMs ?? MOUNT_EVENT_DEFAULTS.waitTimeoutMs,
    };
    for (const [k, v] of Object.entries(this.#o)) if (!(Number.isFinite(v) && v > 0)) throw new RangeError(`MountEvents: ${k} must be > 0, got ${v}`);
  }

  /** Pods with a wait in progress (leak checks). */
  get trackedPods(): number {
    return this.#pods.size;
  }

  /**
   * A sync of `pod` found these volumes failing (`unmounted`: every volume not set up), with
   * `objects` the API objects snapshot it synced with (see the module comment on pending ones).
   */
  failed(pod: V1Pod, failures: readonly VolumeFailure[], unmounted: readonly string[], objects: PodApiObjects | undefined): void {
    const uid = pod.metadata?.uid ?? '';
    const now = this.#clock.monotonic();
    let p = this.#pods.get(uid);
    if (p === undefined) this.#pods.set(uid, (p = { since: now, lastTimeoutEvent: undefined, volumes: new Map() }));
    const failing = new Set<string>();
    for (const f of hasPendingObjects(objects) ? [] : failures) {
      failing.add(f.volume);
      const v = p.volumes.get(f.volume);
      if (v === undefined) {
        p.volumes.set(f.volume, { message: f.message, backoffMs: this.#o.initialBackoffMs, quietUntil: now + this.#o.initialBackoffMs });
      } else if (v.message !== f.message) {
        // New information is recorded at once; the retry backoff itself goes on (as the kubelet's).
        v.message = f.message;
      } else if (now >= v.quietUntil) {
        v.backoffMs = nextBackoffMs(v.backoffMs, { maxMs: this.#o.maxBackoffMs });
        v.quietUntil = now + v.backoffMs;
      } else continue;
      this.#record(pod, 'Warning', PodEventReason.FailedMount, f.message);
    }
    // A volume that set up meanwhile (or waits for its objects) starts from scratch if it fails again.
    for (const name of p.volumes.keys()) if (!failing.has(name)) p.volumes.delete(name);
    const due = p.lastTimeoutEvent === undefined ? p.since + this.#o.waitTimeoutMs : p.lastTimeoutEvent + this.#o.waitTimeoutMs;
    if (now >= due) {
      p.lastTimeoutEvent = now;
      this.#record(pod, 'Warning', PodEventReason.FailedMount, `Unable to attach or mount volumes: unmounted volumes=[${unmounted.join(' ')}], unattached volumes=[]: timed out waiting for the condition`);
    }
  }

  /** Every volume of the pod is set up: its wait is over. */
  mounted(uid: string): void {
    this.#pods.delete(uid);
  }

  forgetPod(uid: string): void {
    this.#pods.delete(uid);
  }
}

/** Some object the pod refers to has not been delivered by the main thread yet. */
export function hasPendingObjects(objects: PodApiObjects | undefined): boolean {
  if (objects === undefined) return false;
  for (const m of [objects.configMaps, objects.secrets, objects.tokens] as const) {
    for (const l of m.values()) if (l.state === 'pending') return true;
  }
  return false;
}
