/**
 * The one deps object of {@link KubeRuntimeSyncer}, its frozen defaults and its up-front
 * validation (a missing or bad field fails construction with an error naming it).
 */
import { IMAGE_VIEW_DEFAULTS } from './image-view.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import type { Clock, Random } from '../../src/shared/clock/clock.js';
import type { ImageService, RuntimeService } from '../../src/shared/cri/runtime-service.js';
import type { Logger } from '../../src/shared/logging/logger.js';
import type { ProbeResultsReader } from '../prober/probe-results.js';
import { nodePodLogDirs, type PodLogDirs } from './pod-log-dirs.js';
import type { PodEventRecorder } from './pod-events.js';
import type { PodApiObjects } from '../../src/shared/protocol/api-object-snapshot.js';
import type { VolumeManager } from '../volumes/volume-manager.js';
import type { PodCgroups } from '../cgroups/pod-cgroups.js';
import type { NodeDnsSettings } from '../../src/shared/protocol/node-dns-settings.js';

/** The pod volume operations the syncer needs (a role slice of VolumeManager). */
export type PodVolumes = Pick<VolumeManager, 'setUpPod' | 'tearDownPod' | 'forgetPod'>;

/** The metrics this module records (a role slice of workers/metrics WorkerMetrics). */
export interface KuberuntimeMetrics {
  /** One start attempt (kubelet_started_containers_total); `errorCode` (the kubelet reason) marks a failure. */
  startedContainer(containerType: 'container' | 'init_container' | 'ephemeral_container', errorCode?: string): void;
  /** kubelet_run_podsandbox_duration_seconds / _errors_total. */
  runPodSandbox(runtimeHandler: string, seconds: number, failed?: boolean): void;
  /** One sandbox creation attempt (kubelet_started_pods_total); `failed` also counts an error. */
  startedPod(failed?: boolean): void;
  /** kubelet_containers_per_pod_count (observed at sandbox creation). */
  containersPerPod(count: number): void;
}

/** One syncer operation, for tracing/metrics by the caller. */
export interface KuberuntimeOperationEvent {
  operation: 'sync_pod' | 'terminate_pod' | 'cleanup_pod';
  podUID: string;
  durationSeconds: number;
  /** The first failure's code, if the operation had one. */
  errorCode?: string;
}

export interface KubeRuntimeSyncerDeps {
  runtime: RuntimeService;
  images: ImageService;
  clock: Clock;
  random: Random;
  logger: Logger;
  nodeName: string;
  /** The node's IP (status.hostIP; the pod IP of host-network pods). */
  hostIP: string;
  probeResults?: ProbeResultsReader;
  /** Root of pod log directories (default /var/log/pods). */
  podLogsDir?: string;
  /** Where Localhost seccomp profiles live: `<root-dir>/seccomp` (default /var/lib/shardlet/seccomp). */
  seccompProfileRoot?: string;
  /** --seccomp-default: RuntimeDefault for containers without a profile (default false: Unconfined). */
  seccompDefault?: boolean;
  /** Prune an app container's older dead instances before restarting it (default true; sync-pod.ts). */
  pruneAppContainersBeforeStart?: boolean;
  /** The `<runtime>://` prefix of container IDs (default "containerd"). */
  runtimeName?: string;
  /** CrashLoopBackOff and image pull backoff: initial delay (default 10 s) and cap (default 5 min). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Backoff jitter factor (default 0, as the kubelet). */
  backoffJitter?: number;
  /** Log directory operations (default: node:fs under podLogsDir, recursive mkdir and rm -rf; nothing outside it). */
  logDirs?: PodLogDirs;
  metrics?: KuberuntimeMetrics;
  /** Cluster mode: the kubelet's pod events (Pulled, Created, Started, Killing, BackOff, ...). */
  events?: PodEventRecorder;
  onOperation?: (ev: KuberuntimeOperationEvent) => void;
  /**
   * The pod volume manager: volumes set up before anything of the pod is created, torn down at
   * cleanup. Absent: volumes are ignored (unit tests of the runtime logic only).
   */
  volumes?: PodVolumes;
  /** The newest API objects the main thread sent for a pod (configMaps, secrets, tokens). */
  apiObjects?: (uid: string) => PodApiObjects | undefined;
  /** When a pod's volumes failed to set up, sync it again after this long (default 2 s). */
  volumeRetryMs?: number;
  /** How long an ImageStatus answer is trusted by the thread's image view (image-view.ts; 0: always ask). */
  imageViewTtlMs?: number;
  /**
   * Publishes the pod's runtime status mid-sync, when a new sandbox was created and after each
   * container started, from the answers so far (see sync-pod.ts). Best effort; absent: only the
   * post-sync status is published (fresh-status.ts).
   */
  publishProgress?: (status: RuntimePodStatus) => void;
  /**
   * --cgroups-per-qos: the pod cgroup, created before RunPodSandbox, named in the sandbox's
   * linux.cgroupParent and removed at cleanup (workers/cgroups/pod-cgroups.ts). Absent: none.
   */
  podCgroups?: PodCgroups;
  /** The machine's memory capacity in bytes: containers get the kubelet's oom_score_adj. Absent: none is set. */
  memoryCapacityBytes?: number;
  /**
   * --root-dir: each container gets the pod's /etc/hosts and a termination-log file from under
   * `<rootDir>/pods/<uid>` (kubelet-managed-mounts.ts), and exited containers' termination
   * messages are read back from there. Absent: neither (unit tests of the runtime logic only).
   */
  rootDir?: string;
  /** The node's DNS settings (sandbox DNS config, hostname, hosts file). Absent: runtime defaults (unit tests). */
  dns?: NodeDnsSettings;
}

export const KUBERUNTIME_DEFAULTS = Object.freeze({
  podLogsDir: '/var/log/pods',
  seccompProfileRoot: '/var/lib/shardlet/seccomp',
  seccompDefault: false,
  pruneAppContainersBeforeStart: true,
  runtimeName: 'containerd',
  backoffInitialMs: 10_000,
  backoffMaxMs: 300_000,
  backoffJitter: 0,
  volumeRetryMs: 2_000,
  imageViewTtlMs: IMAGE_VIEW_DEFAULTS.ttlMs,
});

type OptionalDeps = 'probeResults' | 'metrics' | 'onOperation' | 'events' | 'volumes' | 'apiObjects' | 'publishProgress' | 'podCgroups' | 'memoryCapacityBytes' | 'rootDir' | 'dns';
export type ResolvedDeps = Required<Omit<KubeRuntimeSyncerDeps, OptionalDeps>> & Pick<KubeRuntimeSyncerDeps, OptionalDeps>;

export function resolveDeps(deps: KubeRuntimeSyncerDeps): ResolvedDeps {
  const need = (ok: boolean, field: string, what: string): void => {
    if (!ok) throw new TypeError(`KubeRuntimeSyncer: deps.${field} ${what}`);
  };
  need(typeof deps?.runtime?.runPodSandbox === 'function', 'runtime', 'must be a RuntimeService');
  need(typeof deps.images?.pullImage === 'function', 'images', 'must be an ImageService');
  need(typeof deps.clock?.now === 'function', 'clock', 'must be a Clock');
  need(typeof deps.random === 'function', 'random', 'must be a Random');
  need(typeof deps.logger?.info === 'function', 'logger', 'must be a Logger');
  need(typeof deps.nodeName === 'string', 'nodeName', 'must be a string');
  need(typeof deps.hostIP === 'string', 'hostIP', 'must be a string');
  need(deps.memoryCapacityBytes === undefined || (Number.isSafeInteger(deps.memoryCapacityBytes) && deps.memoryCapacityBytes > 0), 'memoryCapacityBytes', 'must be a positive integer');
  const r: ResolvedDeps = {
    ...deps,
    podLogsDir: deps.podLogsDir || KUBERUNTIME_DEFAULTS.podLogsDir,
    pruneAppContainersBeforeStart: deps.pruneAppContainersBeforeStart ?? KUBERUNTIME_DEFAULTS.pruneAppContainersBeforeStart,
    runtimeName: deps.runtimeName || KUBERUNTIME_DEFAULTS.runtimeName,
    seccompProfileRoot: deps.seccompProfileRoot || KUBERUNTIME_DEFAULTS.seccompProfileRoot,
    seccompDefault: deps.seccompDefault ?? KUBERUNTIME_DEFAULTS.seccompDefault,
    backoffInitialMs: deps.backoffInitialMs ?? KUBERUNTIME_DEFAULTS.backoffInitialMs,
    backoffMaxMs: deps.backoffMaxMs ?? KUBERUNTIME_DEFAULTS.backoffMaxMs,
    backoffJitter: deps.backoffJitter ?? KUBERUNTIME_DEFAULTS.backoffJitter,
    logDirs: deps.logDirs ?? nodePodLogDirs(deps.podLogsDir || KUBERUNTIME_DEFAULTS.podLogsDir),
    volumeRetryMs: deps.volumeRetryMs ?? KUBERUNTIME_DEFAULTS.volumeRetryMs,
    imageViewTtlMs: deps.imageViewTtlMs ?? KUBERUNTIME_DEFAULTS.imageViewTtlMs,
  };
  need(Number.isFinite(r.imageViewTtlMs) && r.imageViewTtlMs >= 0, 'imageViewTtlMs', 'must be >= 0');
  need(r.volumeRetryMs > 0, 'volumeRetryMs', 'must be > 0');
  need(r.backoffInitialMs > 0, 'backoffInitialMs', 'must be > 0');
  need(r.backoffMaxMs >= r.backoffInitialMs, 'backoffMaxMs', 'must be >= backoffInitialMs');
  need(r.backoffJitter >= 0, 'backoffJitter', 'must be >= 0');
  return r;
}
