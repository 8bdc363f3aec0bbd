/**
 * The runtime logic of one pod behind the {@link PodSyncer} seam: the kubelet's syncPod (status
 * first, then kuberuntime SyncPod), SyncTerminatingPod's killPod and the pod's cleanup.
 *
 * State owned here (one syncer per worker thread; a pod always hashes to the same thread):
 *   crash-loop and image-pull backoffs, the reason cache, the first time each pod was seen
 *   (status.startTime) and the last API status generated (the kubelet's status-manager cache,
 *   used for lastTransitionTime and terminal phases when the caller passes no previousStatus).
 *   cleanupPod forgets a pod's entries.
 *
 * Where shardlet differs from the kubelet, on purpose:
 *   - syncPod returns the status generated AFTER its CRI calls, including this sync's start
 *     failures (the kubelet generates it before and shows the failure one sync later);
 *   - container start time/IPs in the status come from the runtime status passed in (the caller
 *     refreshes it after the sync; this module does not re-list).
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import type { CleanupPodInput, PodSyncer, SyncPodInput, SyncPodOutcome, TerminatePodInput, TerminatePodOutcome } from '../pod-sync.js';
import type { WireError } from '../../src/shared/cri/cri-errors.js';
import { podFields as logPodFields } from '../../src/shared/logging/logger.js';
import { msUntilActiveDeadline } from './active-deadline.js';
import { generateAPIPodStatus } from './api-status.js';
import { Backoff } from './backoff.js';
import { cleanupPod } from './cleanup-pod.js';
import { ImagePuller } from './image-puller.js';
import { ImageView } from './image-view.js';
import { listPodObjects } from '../runtime-status/list-pod-objects.js';
import { killPod } from './kill-pod.js';
import { resolveDeps, type KubeRuntimeSyncerDeps, type KuberuntimeOperationEvent, type ResolvedDeps } from './kuberuntime-deps.js';
import { failureToWire, rethrowIfAborted, syncErrorCode, type SyncFailure } from './kuberuntime-errors.js';
import type { ContainerMountsFn } from './container-start.js';
import { makeMounts } from '../volumes/container-mounts.js';
import { MountEvents } from './mount-events.js';
import { isTerminalPhase } from './pod-phase.js';
import { isHostNetwork, podUID, toDate } from './pod-spec.js';
import { ReasonCache } from './reason-cache.js';
import { refreshPodStatus } from './runtime-status-refresh.js';
import { runSyncPod, type SyncRunDeps } from './sync-pod.js';
import { kubeletManagedMounts } from './kubelet-managed-mounts.js';
import { terminationMessageReader, type TerminationMessageReader } from '../runtime-status/termination-message.js';
import { emptyNodeDnsSettings } from '../../src/shared/protocol/node-dns-settings.js';
import { applyTerminalDefaults } from './terminal-status.js';
import { containerOOMScoreAdjust } from './oom-score-adj.js';
import type { V1Container } from '@kubernetes/client-node';

function oomScoreAdjFor(memoryCapacityBytes: number): (pod: V1Pod, container: V1Container) => number {
  return (pod, container) => containerOOMScoreAdjust(pod, container, memoryCapacityBytes);
}

export class KubeRuntimeSyncer implements PodSyncer {
  readonly #d: ResolvedDeps;
  readonly #crashBackoff: Backoff;
  readonly #imageBackoff: Backoff;
  readonly #reasons = new ReasonCache();
  readonly #startTimes = new Map<string, Date>();
  readonly #lastStatus = new Map<string, V1PodStatus>();
  readonly #run: SyncRunDeps;
  /** Reads termination messages of containers the kill stopped (absent without a root dir). */
  readonly #messages: TerminationMessageReader | undefined;
  readonly #puller: ImagePuller;
  /** Cluster mode: FailedMount events at the kubelet's cadence (mount-events.ts). */
  readonly #mountEvents: MountEvents | undefined;

  constructor(deps: KubeRuntimeSyncerDeps) {
    const d = resolveDeps(deps);
    this.#d = d;
    const backoffOpts = { initialMs: d.backoffInitialMs, maxMs: d.backoffMaxMs, jitterFactor: d.backoffJitter, clock: d.clock, random: d.random };
    this.#crashBackoff = new Backoff(backoffOpts);
    this.#imageBackoff = new Backoff(backoffOpts);
    const view = new ImageView({ monotonic: () => d.clock.monotonic(), ttlMs: d.imageViewTtlMs });
    this.#puller = new ImagePuller({ images: d.images, backoff: this.#imageBackoff, now: () => d.clock.now(), view });
    this.#mountEvents = d.events ? new MountEvents({ clock: d.clock, recorder: d.events }) : undefined;
    this.#run = {
      runtime: d.runtime, clock: d.clock, logger: d.logger, nodeName: d.nodeName, hostIP: d.hostIP,
      crashBackoff: this.#crashBackoff, puller: this.#puller,
      seccomp: { profileRoot: d.seccompProfileRoot, defaultRuntimeProfile: d.seccompDefault },
      podLogsDir: d.podLogsDir, pruneAppContainers: d.pruneAppContainersBeforeStart, logDirs: d.logDirs, probes: d.probeResults, metrics: d.metrics,
      ...(d.events ? { events: d.events } : {}),
      ...(deps.publishProgress ? { publishProgress: deps.publishProgress } : {}),
      ...(d.podCgroups ? { podCgroups: d.podCgroups } : {}),
      ...(d.memoryCapacityBytes !== undefined ? { oomScoreAdjOf: oomScoreAdjFor(d.memoryCapacityBytes) } : {}),
      dns: d.dns,
      managedMounts: d.rootDir !== undefined
        ? kubeletManagedMounts({ rootDir: d.rootDir, dns: d.dns ?? emptyNodeDnsSettings(), hostIP: d.hostIP, random: d.random, logger: d.logger })
        : undefined,
    };
    this.#messages = d.rootDir !== undefined ? terminationMessageReader({ rootDir: d.rootDir }) : undefined;
  }

  async syncPod(input: SyncPodInput): Promise<SyncPodOutcome> {
    const { pod, runtimeStatus, signal } = input;
    const began = this.#d.clock.monotonic();
    const uid = podUID(pod);
    const previous = input.previousStatus ?? this.#lastStatus.get(uid) ?? pod.status;
    const startTime = this.#startTime(uid, previous);
    const status = (): V1PodStatus => this.#generate(pod, runtimeStatus, previous, startTime, false);

    const before = status();
    if (isTerminalPhase(before.phase)) {
      this.#lastStatus.set(uid, before);
      this.#emit('sync_pod', uid, began);
      return { isTerminal: true, apiStatus: before, runtimeChanged: false };
    }
    const log = this.#d.logger.with(logPodFields(pod));
    if (input.networkNotReady !== undefined && !isHostNetwork(pod)) {
      // The kubelet's syncPod: "If the network plugin is not ready, only start the pod if it
      // uses the host network" — the status is reported, nothing is created or killed.
      this.#lastStatus.set(uid, before);
      log.v(2).info('syncPod held back: network is not ready', { message: input.networkNotReady });
      this.#emit('sync_pod', uid, began);
      return { isTerminal: false, apiStatus: before, runtimeChanged: false, error: { code: 'NetworkNotReady', message: input.networkNotReady } };
    }
    // The kubelet's WaitForAttachAndMount: every volume before any sandbox or container.
    let mountsFor: ContainerMountsFn | undefined;
    if (this.#d.volumes) {
      const objects = this.#d.apiObjects?.(uid);
      const vols = await this.#d.volumes.setUpPod(pod, objects);
      rethrowIfAborted(signal);
      if (!vols.ok) {
        this.#lastStatus.set(uid, before);
        log.error('Unable to attach or mount volumes', { unmounted: vols.unmounted.join(' '), message: vols.message });
        this.#mountEvents?.failed(pod, vols.failures, vols.unmounted, objects);
        const failure: SyncFailure = { reason: 'FailedMount', message: vols.message };
        this.#emit('sync_pod', uid, began, failure);
        return { isTerminal: false, apiStatus: before, runtimeChanged: false, error: failureToWire(failure), requeueAfterMs: this.#d.volumeRetryMs };
      }
      this.#mountEvents?.mounted(uid);
      const hostPaths = vols.volumes;
      mountsFor = (p, c, envs) => makeMounts(p, c, hostPaths, envs);
    }
    const run = await runSyncPod({ ...this.#run, logger: log, mountsFor, apiObjects: this.#d.apiObjects?.(uid) }, pod, runtimeStatus, signal);
    this.#reasons.update(uid, run.startResults);
    // Only start results change what the status shows (the runtime status is the same input).
    const apiStatus = run.startResults.length === 0 ? before : status();
    this.#lastStatus.set(uid, apiStatus);

    const out: SyncPodOutcome = { isTerminal: isTerminalPhase(apiStatus.phase), apiStatus, runtimeChanged: run.mutated };
    if (run.after) out.runtimeAfter = run.after;
    const pullWindow = this.#puller.pullWindow(uid);
    if (pullWindow) out.imagePullWindow = pullWindow;
    const first = run.failures[0];
    if (first) {
      out.error = failureToWire(first);
      log.v(2).info('syncPod failed', { reason: first.reason, container: first.containerName ?? null, message: first.message });
    }
    const deadline = msUntilActiveDeadline(pod, startTime, this.#d.clock.now());
    const requeue = Math.min(run.requeueAfterMs ?? Infinity, deadline ?? Infinity);
    if (requeue !== Infinity) out.requeueAfterMs = requeue;
    this.#emit('sync_pod', uid, began, first);
    return out;
  }

  async terminatePod(input: TerminatePodInput): Promise<TerminatePodOutcome> {
    const { pod, signal } = input;
    const began = this.#d.clock.monotonic();
    const uid = podUID(pod);
    const log = this.#d.logger.with(logPodFields(pod));
    let runtimeStatus = input.runtimeStatus;
    if (input.statusUnknown) {
      // No usable cached status (pod-sync.ts statusUnknown): kill what the runtime lists.
      log.info('Killing pod from the runtime listing: its cached status is unusable', { code: input.statusUnknown.code, message: input.statusUnknown.message });
      runtimeStatus = await listPodObjects(this.#d.runtime, uid, pod.metadata?.name ?? '', pod.metadata?.namespace ?? '', signal);
    }
    const failures = await killPod({ ...this.#run, logger: log }, { pod, status: runtimeStatus, gracePeriodOverride: input.gracePeriodSeconds, signal });
    const stopped = await refreshPodStatus(this.#d.runtime, runtimeStatus, signal, this.#messages);
    const previous = input.previousStatus ?? this.#lastStatus.get(uid) ?? pod.status;
    // Start failures are moot once the pod is stopped for good: show the last instances as they ended.
    const generated = generateAPIPodStatus({
      pod, runtimeStatus: stopped, previous, podIsTerminal: true, startTime: this.#startTime(uid, previous),
      now: new Date(this.#d.clock.now()), reasonOf: () => undefined, runtimeName: this.#d.runtimeName,
      hostIP: this.#d.hostIP, probes: this.#d.probeResults,
    });
    let apiStatus = failures.length === 0 ? applyTerminalDefaults(pod, generated) : generated;
    const own = input.terminalStatus;
    if (own) apiStatus = { ...apiStatus, phase: 'Failed', reason: own.reason, message: own.message };
    this.#lastStatus.set(uid, apiStatus);
    const out: TerminatePodOutcome = { apiStatus };
    if (failures[0]) out.error = failureToWire(failures[0]);
    this.#emit('terminate_pod', uid, began, failures[0]);
    return out;
  }

  async cleanupPod(input: CleanupPodInput): Promise<{ error?: WireError }> {
    const began = this.#d.clock.monotonic();
    const uid = podUID(input.pod);
    let failure = await cleanupPod(this.#d, input.pod, input.runtimeStatus, input.signal, { keepLogs: input.keepLogs === true });
    // Volumes go after the containers that used them are removed (never under a running one).
    if (this.#d.volumes && !failure) {
      const err = await this.#d.volumes.tearDownPod(uid);
      if (err !== undefined) failure = { reason: 'RemoveError', message: err };
    }
    this.forgetPod(uid);
    this.#emit('cleanup_pod', uid, began, failure);
    return failure ? { error: failureToWire(failure) } : {};
  }

  /**
   * The API status for a runtime status, without any CRI call (e.g. from the fresh status read
   * right after a sync, so the reported status does not wait for the next sync). Uses and
   * updates the same state as syncPod (start failures, startTime, last status).
   */
  generateAPIStatus(pod: V1Pod, runtimeStatus: RuntimePodStatus, previousStatus?: V1PodStatus): V1PodStatus {
    const uid = podUID(pod);
    const previous = previousStatus ?? this.#lastStatus.get(uid) ?? pod.status;
    const s = this.#generate(pod, runtimeStatus, previous, this.#startTime(uid, previous), false);
    this.#lastStatus.set(uid, s);
    return s;
  }

  /** Drop everything kept for a pod (also done by cleanupPod). */
  forgetPod(uid: string): void {
    this.#reasons.forgetPod(uid);
    this.#puller.forgetPod(uid);
    this.#crashBackoff.forgetPrefix(`${uid}/`);
    this.#imageBackoff.forgetPrefix(`${uid}/`);
    this.#startTimes.delete(uid);
    this.#lastStatus.delete(uid);
    this.#d.volumes?.forgetPod(uid);
    this.#mountEvents?.forgetPod(uid);
    this.#crashBackoff.gc();
    this.#imageBackoff.gc();
  }

  /** Pods with state held here (for leak checks in tests and metrics). */
  get trackedPods(): number {
    return this.#startTimes.size;
  }

  #generate(pod: V1Pod, runtimeStatus: RuntimePodStatus, previous: V1PodStatus | undefined, startTime: Date, terminal: boolean): V1PodStatus {
    const uid = podUID(pod);
    return generateAPIPodStatus({
      pod, runtimeStatus, previous, podIsTerminal: terminal, startTime, now: new Date(this.#d.clock.now()),
      reasonOf: (name) => this.#reasons.get(uid, name), runtimeName: this.#d.runtimeName, hostIP: this.#d.hostIP,
      probes: this.#d.probeResults,
    });
  }

  /** status.startTime: the previous status's, else the first time this syncer saw the pod. */
  #startTime(uid: string, previous: V1PodStatus | undefined): Date {
    let t = this.#startTimes.get(uid);
    if (!t) {
      t = toDate(previous?.startTime as Date | string | undefined) ?? new Date(this.#d.clock.now());
      this.#startTimes.set(uid, t);
    }
    return t;
  }

  #emit(operation: KuberuntimeOperationEvent['operation'], podUID: string, began: number, failure?: SyncFailure): void {
    if (!this.#d.onOperation) return;
    const ev: KuberuntimeOperationEvent = { operation, podUID, durationSeconds: (this.#d.clock.monotonic() - began) / 1000 };
    if (failure) ev.errorCode = syncErrorCode(failure.reason);
    this.#d.onOperation(ev);
  }
}
