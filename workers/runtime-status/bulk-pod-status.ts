/**
 * The relist's status builder: statuses for many pods from ONE ListPodSandbox + ONE
 * ListContainers, calling PodSandboxStatus / ContainerStatus only for objects that are new or
 * whose listed state changed since their last inspection. What only an inspection tells
 * (container startedAt/finishedAt/exitCode/reason/message/imageRef, sandbox IPs and network
 * mode) is fixed for a given state, so a remembered inspection stays exact while the state
 * holds. This is what keeps a relist at thousands of pods at two list calls plus a handful of
 * inspections.
 *
 * Differs from the kubelet on purpose: the kubelet's relist calls GetPodStatus (a full
 * inspection of every object) for each changed pod, one pod at a time. Here inspections are
 * reused and run up to `inspectConcurrency` at a time.
 *
 * Owned by the PLEG (one instance, one thread); not safe for concurrent build() calls.
 */
import { setMaxListeners } from 'node:events';
import { CriError, isNotFound, type WireError } from '../../src/shared/cri/cri-errors.js';
import type { Container, PodSandbox } from '../../src/shared/cri/cri-types.js';
import type { CallOptions, RuntimeService } from '../../src/shared/cri/runtime-service.js';
import type { RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { inspectedDetails, type TerminationMessageReader } from './termination-message.js';
import {
  assemblePodStatus, containerIdentity, listOnlyDetails, sandboxDetails, sandboxIdentity,
  toContainerStatus, toSandboxStatus, type ContainerDetails, type PodIdentity, type SandboxDetails,
} from './cri-status-convert.js';

/** One pod's objects as listed by a relist. */
export interface RelistPod {
  id: PodIdentity;
  sandboxes: PodSandbox[];
  containers: Container[];
}

export interface PodStatusResult {
  status: RuntimePodStatus;
  /** First inspection error (not NotFound) of the pod; the status then holds list data for that object. */
  error: WireError | null;
}

/** Group listed objects by the io.kubernetes.pod.uid label; objects without it are not kubelet pods and are left out. */
export function groupByPod(sandboxes: readonly PodSandbox[], containers: readonly Container[]): Map<string, RelistPod> {
  const pods = new Map<string, RelistPod>();
  const podOf = (id: PodIdentity): RelistPod | undefined => {
    if (id.uid === '') return undefined;
    let p = pods.get(id.uid);
    if (!p) {
      p = { id, sandboxes: [], containers: [] };
      pods.set(id.uid, p);
    } else if (p.id.name === '' && id.name !== '') {
      p.id = id;
    }
    return p;
  };
  for (const s of sandboxes) podOf(sandboxIdentity(s))?.sandboxes.push(s);
  for (const c of containers) podOf(containerIdentity(c))?.containers.push(c);
  return pods;
}

interface Inspected<D> {
  state: string;
  details: D;
}

export interface BuildOptions {
  signal?: AbortSignal;
  /** A pod worker's published status of the pod, to take uninspected objects from (see build). */
  published?: (uid: string) => RuntimePodStatus | undefined;
  /** Whether the pod's worker-made objects may wait a build for their worker's publish (see build). */
  mayDefer?: (uid: string) => boolean;
}

export interface BuildResult {
  /** Per built pod: its status (pods deferred or not asked for are absent). */
  statuses: Map<string, PodStatusResult>;
  /**
   * Pods left unbuilt this time: an object of theirs is in a state only a pod worker makes and
   * its worker has not published it yet. The caller keeps the pod as it was (no write, no
   * events) and builds it again next relist, when it is taken from the worker's entry or
   * inspected.
   */
  deferred: ReadonlySet<string>;
}

export const BULK_STATUS_DEFAULTS = Object.freeze({ inspectConcurrency: 16 });

export interface BulkPodStatusOptions {
  runtime: RuntimeService;
  /** Inspection calls in flight at once (containerd: ~3× faster at 16 than 1). */
  inspectConcurrency?: number;
  /** Reads the termination message of an exited container when it is inspected (absent: the runtime's message). */
  messages?: TerminationMessageReader;
}

export class BulkPodStatusBuilder {
  readonly #runtime: RuntimeService;
  readonly #concurrency: number;
  readonly #messages: TerminationMessageReader | undefined;
  readonly #sandboxes = new Map<string, Inspected<SandboxDetails>>();
  readonly #containers = new Map<string, Inspected<ContainerDetails>>();
  /** Inspection calls made (for metrics and tests). */
  inspectCalls = 0;
  /** Objects whose details came from a worker-published entry instead of an inspection. */
  fromPublished = 0;
  /** Objects whose inspection was deferred to the next build (see build's `mayDefer`). */
  deferrals = 0;
  /** Object ids the previous build deferred: not deferred again, inspected if still needed. */
  #deferredLast: ReadonlySet<string> = new Set();

  constructor(opts: BulkPodStatusOptions) {
    if (!opts.runtime) throw new TypeError('BulkPodStatusBuilder: runtime is required');
    const c = opts.inspectConcurrency ?? BULK_STATUS_DEFAULTS.inspectConcurrency;
    if (!Number.isInteger(c) || c < 1) throw new RangeError(`BulkPodStatusBuilder: inspectConcurrency must be a positive integer, got ${c}`);
    this.#runtime = opts.runtime;
    this.#concurrency = c;
    this.#messages = opts.messages;
  }

  /**
   * Statuses for `pods`, inspecting only new or changed objects. Throws only on abort.
   *
   * `published(uid)`: the pod's status a pod worker published (its cache entry; undefined when
   * there is none, it carries an error, or the pod must be reinspected). An object not yet
   * inspected here whose id appears there in the listed state takes its details from that
   * entry instead of an inspection call: the worker made that object and knew its state from
   * its own calls' answers (or re-read it), and nothing changed since (same state). This is what
   * spares a relist the PodSandboxStatus + ContainerStatus of every pod a worker just started.
   *
   * `mayDefer(uid)`: whether the pod may be deferred (see {@link BuildResult.deferred}). An
   * object that would be inspected is deferred instead when its listed state is one only a pod
   * worker's own call produces — SANDBOX_READY (RunPodSandbox) or CONTAINER_RUNNING
   * (StartContainer) — and it was not deferred by the previous build: the worker that made it
   * has the answer and publishes it (mid-sync progress, then the post-sync status), typically
   * within milliseconds of the runtime listing it; during a burst the relist catches hundreds of
   * objects in that gap. Each object is deferred at most once in a row, so an object no worker
   * publishes (its worker died, its publish lost, a foreign client made it) is inspected by the
   * next build that sees it: its status comes at most one relist later.
   */
  async build(pods: readonly RelistPod[], opts: BuildOptions = {}): Promise<BuildResult> {
    const { signal, published, mayDefer } = opts;
    // Up to inspectConcurrency CRI calls listen on the one signal at once (16 by default, more
    // than Node's default of 10 listeners, which printed a non-JSON MaxListenersExceededWarning).
    if (signal !== undefined) setMaxListeners(0, signal);
    const callOpts: CallOptions = signal ? { signal } : {};
    const errors = new Map<string, WireError>();
    const gone = new Set<string>();
    const jobs: (() => Promise<void>)[] = [];
    const deferredPods = new Set<string>();
    const deferredNow = new Set<string>();
    const fail = (uid: string, err: unknown): void => {
      if (signal?.aborted) throw err;
      if (isNotFound(err)) return;
      if (!errors.has(uid)) errors.set(uid, err instanceof CriError ? err.toWire() : { code: 'ERR_CRI_UNKNOWN', message: String(err) });
    };
    for (const pod of pods) {
      let entry: RuntimePodStatus | undefined | null = null; // null: not read yet
      const entryOf = (): RuntimePodStatus | undefined => (entry === null ? (entry = published?.(pod.id.uid)) : entry);
      const podJobs: (() => Promise<void>)[] = [];
      let deferrable: boolean | undefined; // mayDefer(uid), asked once, only when needed
      const defer = (id: string): boolean => {
        if (this.#deferredLast.has(id)) return false;
        deferrable ??= mayDefer?.(pod.id.uid) ?? false;
        if (!deferrable) return false;
        deferredNow.add(id);
        return true;
      };
      for (const s of pod.sandboxes) {
        if (this.#sandboxes.get(s.id)?.state === s.state) continue;
        const known = published ? entryOf()?.sandboxes.find((x) => x.id === s.id && x.state === s.state) : undefined;
        if (known) {
          this.#sandboxes.set(s.id, { state: s.state, details: { ip: known.ip, ips: known.ips, hostNetwork: known.hostNetwork } });
          this.fromPublished++;
          continue;
        }
        if (s.state === 'SANDBOX_READY' && defer(s.id)) {
          deferredPods.add(pod.id.uid);
          continue;
        }
        podJobs.push(async () => {
          try {
            this.inspectCalls++;
            const st = (await this.#runtime.podSandboxStatus(s.id, callOpts)).status;
            if (st) this.#sandboxes.set(s.id, { state: s.state, details: sandboxDetails(st) });
            else gone.add(s.id);
          } catch (err) {
            if (isNotFound(err)) gone.add(s.id);
            fail(pod.id.uid, err);
          }
        });
      }
      for (const c of pod.containers) {
        if (this.#containers.get(c.id)?.state === c.state) continue;
        if (c.state === 'CONTAINER_CREATED') {
          // Created, never started: ContainerStatus would add nothing the listing lacks (no
          // start or finish time, no exit code; image and creation time are listed). A burst
          // lists many containers between CreateContainer and StartContainer.
          this.#containers.set(c.id, { state: c.state, details: listOnlyDetails(c) });
          continue;
        }
        const known = published ? entryOf()?.containers.find((x) => x.id === c.id && x.state === c.state) : undefined;
        if (known) {
          this.#containers.set(c.id, { state: c.state, details: publishedDetails(known) });
          this.fromPublished++;
          continue;
        }
        if (c.state === 'CONTAINER_RUNNING' && defer(c.id)) {
          deferredPods.add(pod.id.uid);
          continue;
        }
        podJobs.push(async () => {
          try {
            this.inspectCalls++;
            const st = (await this.#runtime.containerStatus(c.id, callOpts)).status;
            if (st) this.#containers.set(c.id, { state: c.state, details: await inspectedDetails(st, this.#messages) });
            else gone.add(c.id);
          } catch (err) {
            if (isNotFound(err)) gone.add(c.id);
            fail(pod.id.uid, err);
          }
        });
      }
      // A deferred pod is built next time as a whole: its other inspections wait too.
      if (!deferredPods.has(pod.id.uid)) jobs.push(...podJobs);
    }
    this.#deferredLast = deferredNow;
    this.deferrals += deferredNow.size;
    await runLimited(jobs, this.#concurrency);

    const out = new Map<string, PodStatusResult>();
    for (const pod of pods) {
      if (deferredPods.has(pod.id.uid)) continue;
      const sandboxes: RuntimeSandboxStatus[] = [];
      for (const s of pod.sandboxes) {
        if (gone.has(s.id)) continue;
        sandboxes.push(toSandboxStatus(s, this.#sandboxes.get(s.id)?.details ?? { ip: '', ips: [], hostNetwork: false }));
      }
      const containers: RuntimeContainerStatus[] = [];
      for (const c of pod.containers) {
        if (gone.has(c.id)) continue;
        containers.push(toContainerStatus(c, c.podSandboxId, this.#containers.get(c.id)?.details ?? listOnlyDetails(c)));
      }
      out.set(pod.id.uid, { status: assemblePodStatus(pod.id, sandboxes, containers), error: errors.get(pod.id.uid) ?? null });
    }
    return { statuses: out, deferred: deferredPods };
  }

  /**
   * Forget inspections of objects that are no longer listed (call once per relist).
   *
   * Bound, not exactness: the maps are pruned only once they hold more entries than the listing
   * has objects. Until then a forgotten object's entry may linger, but never more of them than
   * listed objects the maps lack (CRI ids are never reused, so a lingering entry is never read),
   * and each map stays within the size of the listing. This keeps a relist at thousands of pods
   * from hashing every listed id each second (the exact check was a tenth of a full relist).
   */
  retainOnly(pods: ReadonlyMap<string, RelistPod>): void {
    let sandboxesListed = 0;
    let containersListed = 0;
    for (const p of pods.values()) {
      sandboxesListed += p.sandboxes.length;
      containersListed += p.containers.length;
    }
    if (this.#sandboxes.size <= sandboxesListed && this.#containers.size <= containersListed) return;
    const sandboxIds = new Set<string>();
    const containerIds = new Set<string>();
    for (const p of pods.values()) {
      for (const s of p.sandboxes) sandboxIds.add(s.id);
      for (const c of p.containers) containerIds.add(c.id);
    }
    for (const id of this.#sandboxes.keys()) if (!sandboxIds.has(id)) this.#sandboxes.delete(id);
    for (const id of this.#containers.keys()) if (!containerIds.has(id)) this.#containers.delete(id);
  }

  /**
   * Take every listed object's details from `status` (a pod worker's entry that names exactly
   * the listed objects in their listed states, see GenericPleg's agreeing entries), as build()
   * does object by object: the pod's next build inspects only what changes after.
   */
  rememberFrom(pod: RelistPod, status: RuntimePodStatus): void {
    for (const s of pod.sandboxes) {
      if (this.#sandboxes.get(s.id)?.state === s.state) continue;
      const known = status.sandboxes.find((x) => x.id === s.id && x.state === s.state);
      if (!known) continue;
      this.#sandboxes.set(s.id, { state: s.state, details: { ip: known.ip, ips: known.ips, hostNetwork: known.hostNetwork } });
      this.fromPublished++;
    }
    for (const c of pod.containers) {
      if (this.#containers.get(c.id)?.state === c.state) continue;
      const known = status.containers.find((x) => x.id === c.id && x.state === c.state);
      if (!known) continue;
      this.#containers.set(c.id, { state: c.state, details: publishedDetails(known) });
      if (c.state !== 'CONTAINER_CREATED') this.fromPublished++; // build() never inspects a created one
    }
  }

  /** Drop remembered inspections of one pod's objects, so the next build inspects them again (reinspect). */
  forget(pod: RelistPod): void {
    for (const s of pod.sandboxes) this.#sandboxes.delete(s.id);
    for (const c of pod.containers) this.#containers.delete(c.id);
  }
}

function publishedDetails(c: RuntimeContainerStatus): ContainerDetails {
  return { startedAtNs: c.startedAtNs, finishedAtNs: c.finishedAtNs, exitCode: c.exitCode, reason: c.reason, message: c.message, image: c.image, imageRef: c.imageRef };
}

/** Run `jobs` with at most `limit` in flight; rejects with the first rejection (after all settle). */
async function runLimited(jobs: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  let firstError: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++];
      if (!job) break;
      try {
        await job();
      } catch (err) {
        firstError ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, lane));
  if (firstError) throw firstError.err;
}
