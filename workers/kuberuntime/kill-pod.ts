/**
 * Stopping containers and pods (the kubelet's killContainer and killPodWithSyncResult,
 * kuberuntime_container.go / kuberuntime_manager.go).
 *
 * killContainer: grace = the override, else the pod's deletionGracePeriodSeconds, else (for a
 * liveness/startup probe kill) the probe's terminationGracePeriodSeconds, else the pod's
 * terminationGracePeriodSeconds (30 when unset). The preStop hook runs first, bounded by the
 * grace period; the time it took (whole seconds) is taken off the grace; StopContainer then
 * gets what is left, but never less than 2 s (minimumGracePeriodInSeconds) so a container always
 * sees SIGTERM before SIGKILL. NotFound from StopContainer means already gone: success.
 *
 * killPod: every running container in parallel, then StopPodSandbox for every sandbox of the
 * pod (even when a container failed to stop: the sandbox stop kills what is left). In a pod with
 * sidecars, each container waits for its turn after its preStop hook (termination-order.ts:
 * sidecars after the regular containers, in reverse order); the time waited is taken off its
 * grace, so the pod still ends within its grace period.
 */
import { PodEventReason, containerFieldPath, type PodEventRecorder } from './pod-events.js';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../src/shared/clock/clock.js';
import { isNotFound } from '../../src/shared/cri/cri-errors.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import type { Logger } from '../../src/shared/logging/logger.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import type { KillReason } from './compute-pod-actions.js';
import { errorMessage, rethrowIfAborted, type SyncFailure } from './kuberuntime-errors.js';
import { runLifecycleHandler } from './lifecycle-hooks.js';
import { containerSpec, DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, hasRestartableInitContainer } from './pod-spec.js';
import { TerminationOrdering } from './termination-order.js';

export const MINIMUM_GRACE_PERIOD_SECONDS = 2;

export interface KillDeps {
  runtime: RuntimeService;
  clock: Clock;
  logger: Logger;
  events?: PodEventRecorder;
  /** The node's IP (an httpGet preStop's host for a host-network pod without a runtime IP). */
  hostIP?: string;
}

export interface KillContainerInput {
  pod: V1Pod;
  containerId: string;
  containerName: string;
  message?: string;
  reason?: KillReason | 'FailedPostStartHook';
  gracePeriodOverride?: number;
  /** The pod's IPs from the runtime status (an httpGet preStop's default host). */
  podIPs?: readonly string[];
  /** Pods with sidecars, when the whole pod is killed: wait for this container's turn. */
  ordering?: TerminationOrdering;
  signal: AbortSignal;
}

/** The kubelet's setTerminationGracePeriod. */
export function terminationGracePeriod(pod: V1Pod, container: V1Container | undefined, reason: KillContainerInput['reason']): number {
  const deletion = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion !== undefined && deletion !== null) return deletion;
  if (reason === 'LivenessProbe' || reason === 'StartupProbe') {
    const probe = reason === 'LivenessProbe' ? container?.livenessProbe : container?.startupProbe;
    const g = probe?.terminationGracePeriodSeconds;
    if (g !== undefined && g !== null) return g;
  }
  return pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
}

export async function killContainer(deps: KillDeps, input: KillContainerInput): Promise<SyncFailure | undefined> {
  const { pod, containerId, containerName, signal } = input;
  const spec = containerSpec(pod, containerName);
  let grace = input.gracePeriodOverride ?? terminationGracePeriod(pod, spec, input.reason);
  deps.logger.v(3).info(input.message ?? `Stopping container ${containerName}`, { containerName, containerId, gracePeriod: grace });
  deps.events?.(pod, 'Normal', PodEventReason.Killing, input.message && input.message !== 'FailedPostStartHook' ? input.message : `Stopping container ${containerName}`, containerFieldPath(pod, containerName));
  const preStop = spec?.lifecycle?.preStop;
  if (spec && preStop && grace > 0) {
    const started = deps.clock.monotonic();
    const result = await runBounded(deps, grace, signal, (hookSignal) =>
      runLifecycleHandler(deps, { pod, container: spec, containerId, handler: preStop, timeoutSeconds: grace, podIPs: input.podIPs ?? [], signal: hookSignal }),
    );
    if (result !== 'timeout' && !result.ok) {
      deps.logger.error('PreStop hook failed', { containerName, containerId, message: result.message });
      // The kubelet's event leaves the message out, so secrets in it do not leak from the node.
      deps.events?.(pod, 'Warning', PodEventReason.FailedPreStopHook, 'PreStopHook failed', containerFieldPath(pod, containerName));
    } else if (result === 'timeout') {
      deps.logger.info('PreStop hook not completed in grace period', { containerName, containerId, gracePeriod: grace });
    }
    grace -= Math.floor((deps.clock.monotonic() - started) / 1000);
  }
  // Wait for this container's turn if there is time left (whole seconds waited come off the grace).
  if (input.ordering && grace > 0) grace -= Math.floor((await input.ordering.waitForTurn(containerName, grace, signal)) / 1000);
  grace = Math.max(grace, MINIMUM_GRACE_PERIOD_SECONDS);
  try {
    await deps.runtime.stopContainer(containerId, grace, { signal });
    input.ordering?.containerTerminated(containerName);
    return undefined;
  } catch (err) {
    rethrowIfAborted(signal);
    if (isNotFound(err)) {
      input.ordering?.containerTerminated(containerName);
      return undefined;
    }
    return { reason: 'KillContainerError', message: errorMessage(err), containerName };
  }
}

/**
 * Runs `fn` for at most `seconds` on the injected clock. The loser is cancelled through its own
 * signal (a child of `signal`), so a preStop exec still running at the deadline is abandoned.
 */
async function runBounded<T>(deps: KillDeps, seconds: number, signal: AbortSignal, fn: (s: AbortSignal) => Promise<T>): Promise<T | 'timeout'> {
  const child = new AbortController();
  const onAbort = (): void => child.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const work = fn(child.signal).then((v) => ({ v }), (e: unknown) => ({ e }));
    const timer = deps.clock.sleep(seconds * 1000, child.signal).then(() => 'timeout' as const, () => 'cancelled' as const);
    const first = await Promise.race([work, timer]);
    rethrowIfAborted(signal);
    if (first === 'timeout') return 'timeout';
    if (first === 'cancelled') return 'timeout';
    if ('e' in first) throw first.e;
    return first.v;
  } finally {
    signal.removeEventListener('abort', onAbort);
    child.abort(new Error('bounded call finished'));
  }
}

export interface KillPodInput {
  pod: V1Pod;
  status: RuntimePodStatus;
  gracePeriodOverride?: number;
  signal: AbortSignal;
}

export async function killPod(deps: KillDeps, input: KillPodInput): Promise<SyncFailure[]> {
  const { pod, status, signal } = input;
  const running = status.containers.filter((c) => c.state === 'CONTAINER_RUNNING');
  const ordering = hasRestartableInitContainer(pod) ? new TerminationOrdering(pod, running.map((c) => c.name), deps.clock) : undefined;
  const results = await Promise.all(
    running.map((c) =>
      killContainer(deps, {
        pod, containerId: c.id, containerName: c.name, signal, podIPs: status.ips,
        ...(ordering ? { ordering } : {}),
        ...(input.gracePeriodOverride !== undefined ? { gracePeriodOverride: input.gracePeriodOverride } : {}),
      }),
    ),
  );
  const failures = results.filter((f): f is SyncFailure => f !== undefined);
  for (const sb of status.sandboxes) {
    rethrowIfAborted(signal);
    try {
      await deps.runtime.stopPodSandbox(sb.id, { signal });
    } catch (err) {
      rethrowIfAborted(signal);
      if (!isNotFound(err)) failures.push({ reason: 'KillPodSandboxError', message: errorMessage(err) });
    }
  }
  return failures;
}
