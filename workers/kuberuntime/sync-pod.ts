/**
 * One pass of the kubelet's kubeGenericRuntimeManager.SyncPod: compute the actions, kill what must
 * go, create the sandbox when needed, then start the next init container or the app containers.
 *
 * Ordering (the kubelet's steps): 1 computePodActions; 2 kill the pod (sandbox change: then
 * purge init containers) or the containers to kill; 3 create the sandbox (RunPodSandbox,
 * then PodSandboxStatus for the pod IPs); 4 start the next init container and stop there;
 * or 5 start app containers in spec order (a failure of one does not stop the others).
 * A pod with sidecars starts its init containers to start in spec order in step 4 (a sidecar
 * that fails to start is skipped, a regular init container that fails stops the sync), then
 * step 5 as well.
 * Before each start, older dead instances of that container are pruned (init containers always,
 * as the kubelet's pruneInitContainersBeforeStart; app containers unless `pruneAppContainers` is
 * false, when the container GC's policy keeps more: see container-prune.ts).
 *
 * Returns the start results (for the reason cache), every failure, and when to sync again.
 * Throws only when `signal` aborts.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { PodSandboxConfig } from '../../src/shared/cri/cri-types.js';
import type { RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { sandboxDetails, toSandboxStatus } from '../runtime-status/cri-status-convert.js';
import { hostNetworkSandboxStatus, postSyncStatus } from './post-sync-status.js';
import type { ProbeResultsReader } from '../prober/probe-results.js';
import { computePodActions } from './compute-pod-actions.js';
import { startEphemeralContainers } from './ephemeral-container-start.js';
import { checkCrashBackoff, startContainer, type StartDeps } from './container-start.js';
import type { KuberuntimeMetrics } from './kuberuntime-deps.js';
import { purgeInitContainers, pruneDeadInstances, removeStrayCreated } from './container-prune.js';
import { killContainer, killPod } from './kill-pod.js';
import { errorMessage, isStartFailureReason, rethrowIfAborted, type SyncFailure } from './kuberuntime-errors.js';
import { appContainers, initContainers, isHostNetwork, isRestartableInitContainer, podUID } from './pod-spec.js';
import type { StartResult } from './reason-cache.js';
import { withHostNetworkIPs } from './pod-ips.js';
import { generatePodSandboxConfig } from './sandbox-config.js';
import { PodEventReason } from './pod-events.js';
import type { PodCgroups } from '../cgroups/pod-cgroups.js';
import { sandboxNaming } from './sandbox-dns.js';
import type { NodeDnsSettings } from '../../src/shared/protocol/node-dns-settings.js';

/** Directory operations for pod log directories (the kubelet creates it; containerd never deletes it). */
export type { PodLogDirs } from './pod-log-dirs.js';
import type { PodLogDirs } from './pod-log-dirs.js';

export interface SyncRunDeps extends StartDeps {
  podLogsDir: string;
  /** Prune an app container's older dead instances before restarting it (default true). */
  pruneAppContainers?: boolean;
  logDirs: PodLogDirs;
  probes?: ProbeResultsReader | undefined;
  metrics?: KuberuntimeMetrics | undefined;
  /**
   * Called when a new sandbox is known (before any container is created) and after each
   * container started, with the pod's status as the answers so far tell it, when they tell it
   * all (`derivable`). The factory publishes it to the pod cache: a relist that lists those
   * objects mid-sync then takes their details from that entry instead of a PodSandboxStatus or
   * ContainerStatus call (bulk-pod-status.ts).
   */
  publishProgress?: ((status: RuntimePodStatus) => void) | undefined;
  /** --cgroups-per-qos: the pod cgroup is ensured before RunPodSandbox and named in its config. */
  podCgroups?: PodCgroups | undefined;
  /** The node's DNS settings (sandbox DNS config and hostname); absent: the runtime's defaults (unit tests). */
  dns?: NodeDnsSettings | undefined;
}

export interface SyncRunResult {
  startResults: StartResult[];
  failures: SyncFailure[];
  requeueAfterMs?: number;
  /** Whether any CRI call that changes runtime state was issued (kill, sandbox, start). */
  mutated: boolean;
  /**
   * The runtime status after this sync, derived from its calls' answers (post-sync-status.ts),
   * when they tell it all; absent: re-read it.
   */
  after?: RuntimePodStatus;
}

export async function runSyncPod(deps: SyncRunDeps, pod: V1Pod, status: RuntimePodStatus, signal: AbortSignal): Promise<SyncRunResult> {
  const actions = computePodActions(pod, status, deps.probes);
  const result: SyncRunResult = {
    startResults: [],
    failures: [],
    mutated: actions.killPod || actions.createSandbox || actions.containersToKill.size > 0 || actions.containersToStart.length > 0 || actions.nextInitContainerToStart !== undefined
      || actions.initContainersToStart.length > 0,
  };
  deps.logger.v(4).info('computePodActions', {
    killPod: actions.killPod, createSandbox: actions.createSandbox, attempt: actions.attempt,
    nextInit: actions.nextInitContainerToStart ?? null, initToStart: actions.initContainersToStart.length, toStart: actions.containersToStart.length, toKill: actions.containersToKill.size,
  });

  // Whether the answers of this sync's calls tell the whole post-sync state (see `after`).
  let derivable = true;
  if (await removeStrayCreated(deps, status, signal)) {
    result.mutated = true;
    derivable = false;
  }

  // killPod comes with every new sandbox (as in the kubelet); it changes nothing only for a pod
  // with nothing in the runtime yet.
  const nothingToKill = status.sandboxes.length === 0 && status.containers.length === 0;
  if ((actions.killPod && !nothingToKill) || actions.containersToKill.size > 0) derivable = false;
  if (actions.killPod) {
    const failures = await killPod(deps, { pod, status, signal });
    if (failures.length > 0) return { ...result, failures };
    if (actions.createSandbox) await purgeInitContainers(deps, pod, status, signal);
  } else {
    for (const [id, k] of actions.containersToKill) {
      const f = await killContainer(deps, { pod, containerId: id, containerName: k.name, message: k.message, reason: k.reason, podIPs: status.ips, signal });
      if (f) return { ...result, failures: [f] };
    }
  }

  let sandboxId = actions.sandboxId;
  let newSandbox: RuntimeSandboxStatus | undefined;
  const started: RuntimeContainerStatus[] = [];
  let podIPs: readonly string[] = status.ips;
  const naming = deps.dns ? sandboxNaming(pod, deps.dns) : undefined;
  if (naming && !naming.ok) {
    // The kubelet's createPodSandbox / ConfigPodSandbox failure: nothing is created.
    result.failures.push({ reason: 'CreatePodSandboxError', message: naming.message });
    if (actions.createSandbox) deps.events?.(pod, 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${naming.message}`);
    return result;
  }
  const sandboxConfig: PodSandboxConfig = generatePodSandboxConfig(pod, actions.attempt, { podLogsDir: deps.podLogsDir, podCgroups: deps.podCgroups, naming });
  if (actions.createSandbox) {
    rethrowIfAborted(signal);
    deps.metrics?.containersPerPod(appContainers(pod).length);
    const began = deps.clock.monotonic();
    // The kubelet's syncPod: the pod cgroup exists before the sandbox is created in it.
    const cgroupError = await deps.podCgroups?.ensure(pod);
    rethrowIfAborted(signal);
    if (cgroupError !== undefined) {
      deps.logger.error('Failed to ensure the pod cgroup', { error: cgroupError });
      deps.events?.(pod, 'Warning', PodEventReason.FailedCreatePodContainer, `unable to ensure pod container exists: ${cgroupError}`);
      result.failures.push({ reason: 'CreatePodSandboxError', message: `failed to ensure that the pod: ${podUID(pod)} cgroups exist and are correctly applied: ${cgroupError}` });
      return result;
    }
    try {
      await deps.logDirs.mkdir(sandboxConfig.logDirectory ?? '');
    } catch (err) {
      // The containers cannot get a log file: say why on each of them (a waiting reason with the
      // errno and path, as the kubelet shows containerd's CreateContainerError), not only in logs.
      const message = errorMessage(err);
      deps.logger.error('cannot create the pod log directory', { dir: sandboxConfig.logDirectory ?? '', error: message });
      for (const c of appContainers(pod)) result.startResults.push({ containerName: c.name, failure: { reason: 'CreateContainerError', message } });
      result.failures.push({ reason: 'CreateContainerError', message });
      return result;
    }
    try {
      sandboxId = await deps.runtime.runPodSandbox({ config: sandboxConfig }, { signal });
      deps.metrics?.runPodSandbox('', (deps.clock.monotonic() - began) / 1000);
      deps.metrics?.startedPod();
    } catch (err) {
      rethrowIfAborted(signal);
      deps.metrics?.runPodSandbox('', (deps.clock.monotonic() - began) / 1000, true);
      deps.metrics?.startedPod(true);
      result.failures.push({ reason: 'CreatePodSandboxError', message: `Failed to create pod sandbox: ${errorMessage(err)}` });
      deps.events?.(pod, 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${errorMessage(err)}`);
      return result;
    }
    // The DNS config as formed for this sandbox: its warnings once per sandbox, not per sync.
    for (const ev of naming?.events ?? []) deps.events?.(pod, 'Warning', ev.reason, ev.message);
    podIPs = [];
    if (isHostNetwork(pod)) newSandbox = hostNetworkSandboxStatus(sandboxId, actions.attempt, deps.clock.now());
    else {
      try {
        const st = await deps.runtime.podSandboxStatus(sandboxId, { signal });
        const net = st.status?.network;
        podIPs = net && net.ip !== '' ? [net.ip, ...net.additionalIps.map((a) => a.ip)] : [];
        if (st.status) newSandbox = toSandboxStatus(st.status, sandboxDetails(st.status));
        else derivable = false;
      } catch (err) {
        rethrowIfAborted(signal);
        result.failures.push({ reason: 'CreatePodSandboxError', message: `Failed to get pod sandbox status: ${errorMessage(err)}` });
        return result;
      }
    }
  }
  if (!actions.createSandbox && !actions.killPod && sandboxId === '') return result;
  if (newSandbox !== undefined && derivable && deps.publishProgress) deps.publishProgress(postSyncStatus(identityOf(pod), status, newSandbox, []));

  // Step 5: ephemeral containers, before init containers (ephemeral-container-start.ts); never
  // into a pod being killed.
  if (actions.ephemeralContainersToStart.length > 0 && !actions.killPod) {
    const eph = await startEphemeralContainers(deps, { pod, status, indexes: actions.ephemeralContainersToStart, sandboxId, sandboxConfig, podIPs: withHostNetworkIPs(pod, podIPs, deps.hostIP), signal });
    result.startResults.push(...eph.startResults);
    result.failures.push(...eph.failures);
    started.push(...eph.started);
    if (eph.mutated) result.mutated = true;
    if (!eph.derivable) derivable = false;
  }

  const starts: Array<{ container: V1Container; containerType: 'init_container' | 'container' }> =
    actions.nextInitContainerToStart !== undefined
      ? [{ container: initContainers(pod)[actions.nextInitContainerToStart]!, containerType: 'init_container' }]
      : [
        ...actions.initContainersToStart.map((i) => ({ container: initContainers(pod)[i]!, containerType: 'init_container' as const })),
        ...actions.containersToStart.map((i) => ({ container: appContainers(pod)[i]!, containerType: 'container' as const })),
      ];
  let startedSidecar = false;
  for (const { container, containerType } of starts) {
    rethrowIfAborted(signal);
    let out = checkCrashBackoff(deps, pod, container, status);
    if (!out) {
      const prune = containerType === 'init_container' || deps.pruneAppContainers !== false;
      if (prune && (await pruneDeadInstances(deps, container.name, status, signal))) derivable = false;
      out = await startContainer(deps, { pod, container, status, sandboxId, sandboxConfig, podIPs: withHostNetworkIPs(pod, podIPs, deps.hostIP), signal });
      // One count per attempt; a failure also counts an error with the kubelet's reason as code.
      if (out.ok) deps.metrics?.startedContainer(containerType);
      else deps.metrics?.startedContainer(containerType, out.failure.reason);
    }
    if (out.ok) {
      result.startResults.push({ containerName: container.name });
      // A started sidecar lets the next container start in the next sync (the kubelet's PLEG
      // event for it): the post-sync status is not offered as the settled result of this sync,
      // so the pod worker does not skip the sync that the sidecar's start triggers.
      if (containerType === 'init_container' && isRestartableInitContainer(container)) startedSidecar = true;
      if (out.started) {
        started.push(out.started);
        if (derivable && deps.publishProgress) deps.publishProgress(postSyncStatus(identityOf(pod), status, newSandbox, started));
      } else derivable = false;
      continue;
    }
    const f = out.failure;
    result.failures.push(f);
    if (isStartFailure(f.reason)) result.startResults.push({ containerName: container.name, failure: { reason: f.reason, message: f.message } });
    if (out.requeueAfterMs !== undefined) result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, out.requeueAfterMs);
    // An init container that failed to start stops the sync (the kubelet returns at once); a
    // sidecar that failed to start is skipped.
    if (containerType === 'init_container' && !isRestartableInitContainer(container)) break;
  }
  if (derivable && !startedSidecar && result.failures.length === 0 && (newSandbox !== undefined || started.length > 0)) {
    result.after = postSyncStatus(identityOf(pod), status, newSandbox, started);
  }
  return result;
}

function identityOf(pod: V1Pod): { uid: string; name: string; namespace: string } {
  return { uid: podUID(pod), name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '' };
}

function isStartFailure(r: SyncFailure['reason']): r is Exclude<SyncFailure['reason'], 'CreatePodSandboxError' | 'KillPodSandboxError' | 'KillContainerError' | 'RemoveError' | 'FailedMount'> {
  return isStartFailureReason(r);
}
