/**
 * Re-reads from the runtime the parts of a pod's status that a kill changes, so terminatePod can
 * report the final state (the kubelet calls GetPodStatus after killPod for the same reason).
 * Only instances that could have changed are inspected: containers that were not yet exited and
 * sandboxes that were ready; one ContainerStatus / PodSandboxStatus call each. An instance the
 * runtime no longer knows is dropped. A failed call keeps the old entry (best effort).
 */
import { isNotFound } from '../../src/shared/cri/cri-errors.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import type { RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { rethrowIfAborted } from './kuberuntime-errors.js';
import type { TerminationMessageReader } from '../runtime-status/termination-message.js';

export async function refreshPodStatus(runtime: RuntimeService, status: RuntimePodStatus, signal: AbortSignal, messages?: TerminationMessageReader): Promise<RuntimePodStatus> {
  const containers: RuntimeContainerStatus[] = [];
  for (const c of status.containers) {
    if (c.state === 'CONTAINER_EXITED') {
      containers.push(c);
      continue;
    }
    try {
      const st = (await runtime.containerStatus(c.id, { signal })).status;
      if (!st) continue;
      containers.push({
        ...c, state: st.state, startedAtNs: st.startedAt, finishedAtNs: st.finishedAt,
        exitCode: st.exitCode, reason: st.reason, message: messages ? await messages.messageOf(st) : st.message,
      });
    } catch (err) {
      rethrowIfAborted(signal);
      if (!isNotFound(err)) containers.push(c);
    }
  }
  const sandboxes: RuntimeSandboxStatus[] = [];
  for (const sb of status.sandboxes) {
    if (sb.state !== 'SANDBOX_READY') {
      sandboxes.push(sb);
      continue;
    }
    try {
      const st = (await runtime.podSandboxStatus(sb.id, { signal })).status;
      if (st) sandboxes.push({ ...sb, state: st.state });
    } catch (err) {
      rethrowIfAborted(signal);
      if (!isNotFound(err)) sandboxes.push(sb);
    }
  }
  const current = sandboxes[0];
  const ips = current && current.state === 'SANDBOX_READY' ? status.ips : [];
  return { ...status, ips, sandboxes, containers };
}
